#include "core/passes/pin_args_and_rets.h"

#include <algorithm>
#include <cstdlib>

#include "core/graph/function_library.h"

namespace tfrun {

void PinArgsAndRets(Graph* graph, const std::vector<std::string>& arg_devices) {
  for (Node& node : graph->nodes) {
    if (node.removed || (node.op != "_Arg" && node.op != "_DeviceArg")) continue;
    const size_t index = static_cast<size_t>(std::strtoll(graph->AttrText(node, "index").c_str(), nullptr, 10));
    node.pin = Node::Pin::kExact;
    node.pinned_device = index < arg_devices.size() ? arg_devices[index] : std::string();
  }
  for (Node& ret : graph->nodes) {
    if (ret.removed || (ret.op != "_Retval" && ret.op != "_DeviceRetval") || ret.inputs.empty()) continue;
    // Through Identity nodes that ask for no device and join no group.
    int src = ret.inputs[0];
    while (graph->nodes[src].op == "Identity" && graph->nodes[src].requested_device_text.empty() &&
           graph->nodes[src].colocation.empty() && graph->nodes[src].pin == Node::Pin::kNone &&
           !graph->nodes[src].inputs.empty()) {
      src = graph->nodes[src].inputs[0];
    }
    const Node& producer = graph->nodes[src];
    if (!producer.colocation.empty()) {
      ret.colocation = {producer.colocation[0]};
      continue;
    }
    const NodeProperties* def = graph->PropertiesOf(ret);
    const std::string type = def == nullptr || def->input_types.empty() ? "" : def->input_types[0];
    const bool is_arg = producer.op == "_Arg" || producer.op == "_DeviceArg";
    if (type == "VARIANT" && !is_arg) continue;
    if (is_arg) {
      ret.pin = Node::Pin::kMatch;
      ret.pinned_device = producer.pinned_device;
      continue;
    }
    if (producer.requested_device_text.empty()) continue;
    // A resource a call returns lives where the call's body puts it.
    if (type == "RESOURCE" && !CalledFunction(*graph, producer).empty()) continue;
    ret.pin = Node::Pin::kMatch;
    ret.pinned_device = producer.requested_device_text;
  }
}

}  // namespace tfrun
