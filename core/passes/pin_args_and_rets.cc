#include "core/passes/pin_args_and_rets.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

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

StatusOr<Graph> CallGraph(const Graph& graph, const Graph::Call& call, const NodeAttrs* call_attrs) {
  const std::string& name = call.function;
  if (graph.functions == nullptr || !graph.functions->Contains(name)) {
    return BadInput(fmt::format("call: {} has no function '{}'{}", graph.path, name,
                                graph.functions == nullptr
                                    ? " (it has no function library)"
                                    : fmt::format(" (its library has {}, e.g. '{}')", graph.functions->size(),
                                                  graph.functions->FirstName())));
  }
  // Eager TensorFlow 2 runs every call as a multi-device function, which
  // refuses this attr (ProcessFunctionLibraryRuntime::InstantiateMultiDevice;
  // inlined into another function, it is honoured).
  const AttrValue* ints_on_device = graph.functions->FunctionAttr(name, "experimental_ints_on_device");
  if (ints_on_device != nullptr && !ints_on_device->items.empty() && ints_on_device->items[0] == "true") {
    return BadInput(fmt::format("call: Function '{}' has `experimental_ints_on_device` attribute set. This attribute "
                                "is not currently supported by multi-device functions.",
                                name));
  }
  TFRUN_ASSIGN_OR_RETURN(FunctionBody body, graph.functions->Instantiate(name, call_attrs));
  const std::vector<std::string>& names = body.signature.input_names;
  std::vector<std::string> arg_devices(names.size());
  for (const std::string& given : call.arg_devices) {
    const size_t eq = given.find('=');
    const std::string arg = given.substr(0, eq);
    auto it = std::find(names.begin(), names.end(), arg);
    if (eq == std::string::npos || it == names.end()) {
      return BadInput(fmt::format("--arg-device {}: '{}' takes {}", given, name,
                                  names.empty() ? std::string("no arguments")
                                                : fmt::format("ARG=DEVICE for ARG one of {}", fmt::join(names, ", "))));
    }
    arg_devices[it - names.begin()] = given.substr(eq + 1);  // a later one wins
  }
  // An argument not placed lives on the call's device (when it is named).
  for (std::string& device : arg_devices) {
    if (device.empty()) device = call.device;
  }
  Graph called = std::move(body.graph);
  called.path = graph.path;
  called.source = GraphSource::kTensorFlow;
  called.config = graph.config;
  called.config.do_function_inlining = true;
  called.functions = graph.functions;
  called.saved_objects = graph.saved_objects;  // what the call's captured arguments hold
  called.call = call;
  PinArgsAndRets(&called, arg_devices);
  return called;
}

}  // namespace tfrun
