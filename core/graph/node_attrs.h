// The attributes of the NodeDef TensorFlow builds for a tfrun node, read
// off its OpDef (core/tables): type attrs from the dtypes of the inputs
// and outputs they bind (as op_def_library.py infers them), number attrs
// from the inputs' and outputs' counts, the node's own fields (transpose_a,
// shape), and every other attr at its default. Kernel lookup matches these.
#pragma once

#include "core/graph/graph.h"
#include "core/tables/tf_tables.h"

namespace tfrun {

NodeAttrs NodeDefAttrs(const TfOpDef& op, const Graph& graph, const Node& node);

// An op built outside a graph (eager's _EagerConst, ReadVariableOp, ...):
// every type attr without a default is `dtype`.
NodeAttrs OpAttrs(const TfOpDef& op, DType dtype);

}  // namespace tfrun
