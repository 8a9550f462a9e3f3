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

}  // namespace tfrun
