// Which kernel TensorFlow has for a node on a device type, from its own
// tables (core/tables), memoized by what decides it (the op and the dtypes
// and flags its NodeDef's attrs come from): what placement reads, and
// where a kernel keeps its inputs and outputs (HostMemory). What tfrun
// itself can execute is a separate question (kernel_registry.h).
#pragma once

#include <string_view>

#include "core/graph/graph.h"
#include "core/tables/tf_tables.h"

namespace tfrun {

// nullptr: TensorFlow has no kernel for it there (nor a DEFAULT one), or
// does not know the op.
const TfKernelDef* TfKernelFor(const Graph& graph, const Node& node, std::string_view device_type);
// A native call of a library function (its op names the function, not an
// op TensorFlow registers) has one on every device type, as
// SupportedDeviceTypesForNode assumes for an op the registry lacks.
bool TfHasKernel(const Graph& graph, const Node& node, std::string_view device_type);

// The same for an op executed outside the graph (TF2 eager's _EagerConst,
// ReadVariableOp, ...) whose type attrs are all `dtype`.
bool TfHasKernelFor(std::string_view op, DType dtype, std::string_view device_type);

// Whether the kernel keeps the node's output, or reads its input `i`, in
// host memory (HostMemory in its registration).
bool OutputInHostMemory(const Graph& graph, const Node& node, std::string_view device_type);
// (A resource handle always is.)
bool InputInHostMemory(const Graph& graph, const Node& node, std::string_view device_type, size_t i);

}  // namespace tfrun
