// TensorFlow's PinArgsAndRets (optimize_function_graph_utils.cc), as
// eager TensorFlow 2 runs it on a function it calls, before the passes:
// each _Arg pinned to where its tensor lives, each _Retval to the device
// its value's producer asks for (followed through Identity nodes that ask
// for none), or colocated with it. Node::pin records what the placer then
// resolves against the devices.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"

namespace tfrun {

// `arg_devices[i]`: where argument i lives (its _Arg's `index`), "" for
// the call's device.
void PinArgsAndRets(Graph* graph, const std::vector<std::string>& arg_devices);

// The graph a TF2 call places (--call, a wrapper's `call:`): `call`'s
// function of `graph`'s library instantiated, with `graph`'s path,
// config (do_function_inlining on, as eager inlines every call) and
// library, its arguments and results pinned. Errors (exit 2) name what the
// library and the function have. `call_attrs`: a native call's attrs,
// which bind a polymorphic function's placeholders ($T, $N); null for
// --call and a PartitionedCall.
StatusOr<Graph> CallGraph(const Graph& graph, const Graph::Call& call, const NodeAttrs* call_attrs = nullptr);

}  // namespace tfrun
