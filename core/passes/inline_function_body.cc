#include "core/passes/inline_function_body.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/graph/node_builder.h"

namespace tfrun {
namespace {

// The device a node's NodeDef names, as text ("" when none).
std::string DeviceText(const Node& node) { return node.requested_device_text; }

// A `_class` list attr of the colocation groups `groups` ("loc:@" each).
AttrValue ColocationAttr(const std::vector<std::string>& groups) {
  AttrValue value{"list(string)", {}};
  for (const std::string& g : groups) value.items.push_back("loc:@" + g);
  return value;
}

Status SetDevice(Node* node, const std::string& text) {
  node->requested_device_text = text;
  if (text.empty()) {
    node->requested_device = DeviceSpec();
    return Status::Ok();
  }
  StatusOr<DeviceSpec> spec = DeviceSpec::Parse(text);
  if (!spec.ok()) return RuntimeError(fmt::format("node '{}': Malformed device specification '{}'", node->name, text));
  node->requested_device = *spec;
  return Status::Ok();
}

// An Identity named NewName(prefix) reading `input`.
StatusOr<int> AddIdentity(Graph* graph, const std::string& prefix, NodeOutput input, const std::string& device,
                          const std::string& colocate_with, const SourceLocation& location) {
  NodeSpec spec;
  spec.name = graph->NewName(prefix);
  spec.op = "Identity";
  spec.inputs = {input};
  spec.device = device;
  spec.location = location;
  if (!colocate_with.empty()) spec.attrs["_class"] = ColocationAttr({colocate_with});
  TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(spec)));
  if (!colocate_with.empty()) graph->nodes[id].colocation = {colocate_with};
  return id;
}

StatusOr<int> AddNoOp(Graph* graph, const std::string& prefix, const std::string& device,
                      const SourceLocation& location) {
  NodeSpec spec;
  spec.name = graph->NewName(prefix);
  spec.op = "NoOp";
  spec.device = device;
  spec.location = location;
  return AddNode(graph, std::move(spec));
}

bool IsArgOrRetval(const Node& node) {
  return node.op == "_Arg" || node.op == "_Retval" || node.op == "_DeviceArg" || node.op == "_DeviceRetval";
}

}  // namespace

StatusOr<int> AddNameKeeper(Graph* graph, NodeSpec spec, const std::vector<NodeOutput>& outputs, bool fetchable) {
  spec.op = "NoOp";
  if (fetchable && !outputs.empty()) {
    spec.op = "IdentityN";
    AttrValue types{"list(type)", {}};
    for (const NodeOutput& o : outputs) {
      spec.inputs.push_back(o);
      std::string type = graph->PropertiesOf(graph->nodes[o.node])->output_types[o.index];
      if (IsRefType(type)) type.resize(type.size() - 4);
      types.items.push_back(std::move(type));
    }
    spec.attrs["T"] = std::move(types);
  }
  return AddNode(graph, std::move(spec));
}

void RewireReaders(Graph* graph, int from, const std::vector<NodeOutput>& outputs, int control, int kept) {
  const std::vector<int> readers = graph->nodes[from].consumers;
  for (size_t k = 0; k < readers.size(); ++k) {
    const int c = readers[k];
    if (k > 0 && readers[k - 1] == c) continue;
    for (size_t i = 0; i < graph->nodes[c].inputs.size(); ++i) {
      if (graph->nodes[c].inputs[i] == from) graph->SetInput(c, i, outputs[graph->nodes[c].input(i).index]);
    }
    const std::vector<int>& ctl = graph->nodes[c].control_inputs;
    if (std::find(ctl.begin(), ctl.end(), from) != ctl.end()) graph->AddControlEdge(control, c);
  }
  for (NodeOutput& f : graph->fetch) {
    if (f.node == from) f = {kept, f.index};
  }
  for (int& t : graph->targets) {
    if (t == from) t = kept;
  }
}

Status NodeError(const Graph& graph, const Node& node, const std::string& text) {
  return LocatedError(ErrorKind::kBadInput, graph.path, node.location, fmt::format("node '{}': {}", node.name, text),
                      node.name);
}

std::string WhyNotInlined(const Graph& graph, const Node& caller, const std::string& function,
                          const FunctionBody& body) {
  const NodeProperties* def = graph.PropertiesOf(caller);
  if (def == nullptr) return "the call has no types";
  auto base = [](std::string type) {
    if (IsRefType(type)) type.resize(type.size() - 4);
    return type;
  };
  if (def->input_types.size() != body.signature.input_types.size()) {
    return fmt::format("Node inputs do not match function arguments: inputs={} arg_types={}", def->input_types.size(),
                       body.signature.input_types.size());
  }
  if (def->output_types.size() != body.signature.output_types.size()) {
    return fmt::format("Node outputs do not match function returns: outputs={} ret_types={}",
                       def->output_types.size(), body.signature.output_types.size());
  }
  for (size_t i = 0; i < def->input_types.size(); ++i) {
    if (base(def->input_types[i]) != base(body.signature.input_types[i])) return "input types differ";
  }
  for (size_t i = 0; i < def->output_types.size(); ++i) {
    if (base(def->output_types[i]) != base(body.signature.output_types[i])) return "output types differ";
  }
  if (graph.functions->FunctionAttr(function, "api_implements") != nullptr) {
    return "an implementation selection group function (api_implements)";
  }
  if (const AttrValue* noinline = graph.functions->FunctionAttr(function, "_noinline");
      noinline != nullptr && noinline->items == std::vector<std::string>{"true"}) {
    return "marked _noinline";
  }
  return "";
}

Status InlineFunctionBody(Graph* graph, int caller_id, const FunctionBody& body, const InlineOptions& options) {
  const Node caller = graph->nodes[caller_id];  // a copy: adding nodes moves the vector
  const std::string caller_device = DeviceText(caller);
  const bool multi = options.placer == InlinedBodyPlacer::kMultiDevice;
  const SourceLocation at = caller.location;

  // Control edges into the call go to a NoOp that the inputs wait for.
  int input_control = -1;
  if (!caller.control_inputs.empty()) {
    TFRUN_ASSIGN_OR_RETURN(input_control, AddNoOp(graph, fmt::format("Func/{}/input_control_node", caller.name),
                                                  caller_device, at));
    for (int c : caller.control_inputs) graph->AddControlEdge(c, input_control);
  }

  // One Identity per argument, on its producer's device (multi-device) or
  // the caller's.
  std::vector<int> input_nodes;
  std::map<std::string, std::string> input_names;  // argument name -> its Identity
  for (size_t i = 0; i < body.args.size(); ++i) {
    const NodeOutput in = caller.input(i);
    const Node& producer = graph->nodes[in.node];
    const std::string device = multi ? DeviceText(producer) : caller_device;
    TFRUN_ASSIGN_OR_RETURN(const int id,
                           AddIdentity(graph, fmt::format("Func/{}/input", caller.name), in, device,
                                       multi ? producer.name : std::string(), at));
    input_nodes.push_back(id);
    input_names[body.signature.input_names[i]] = graph->nodes[id].name;
  }

  // The body's nodes, in its id order, renamed under the caller; its _Arg
  // nodes become the input Identities and its _Retvals go.
  const Graph& fn = body.graph;
  std::set<std::string> fn_nodes;
  for (const Node& n : fn.nodes) fn_nodes.insert(n.name);
  std::vector<int> mapped(fn.nodes.size(), -1);
  for (size_t i = 0; i < body.args.size(); ++i) mapped[body.args[i]] = input_nodes[i];
  const std::string prefix = caller.name + "/";
  struct LateInput {
    int node, input;
    NodeOutput fn_producer;
  };
  std::vector<LateInput> late;
  for (const Node& n : fn.nodes) {
    if (IsArgOrRetval(n)) continue;
    Node clone = n;
    clone.name = prefix + n.name;
    clone.consumers.clear();
    clone.location = at;
    // The body node's device (InlinedFunctionBodyPlacer::BodyNodeDevice).
    std::string device = caller_device;
    if (multi && !n.requested_device_text.empty()) {
      device = n.requested_device.MergedOver(caller.requested_device).ToString();
    }
    TFRUN_RETURN_IF_ERROR(SetDevice(&clone, device));
    // Colocation: an argument's group becomes its Identity's, a body
    // node's is renamed with it.
    for (std::string& group : clone.colocation) {
      if (auto it = input_names.find(group); it != input_names.end()) {
        group = it->second;
      } else if (fn_nodes.count(group) > 0) {
        group = prefix + group;
      }
    }
    std::sort(clone.colocation.begin(), clone.colocation.end());
    NodeProperties props = fn.properties[n.properties];
    if (!clone.colocation.empty()) props.attrs["_class"] = ColocationAttr(clone.colocation);
    clone.properties = static_cast<int32_t>(graph->properties.size());
    graph->properties.push_back(std::move(props));
    std::vector<LateInput> pending;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int source = n.inputs[k] < 0 ? -1 : mapped[n.inputs[k]];
      clone.inputs[k] = source;
      if (source < 0) pending.push_back({-1, static_cast<int>(k), n.input(k)});
    }
    clone.control_inputs.clear();
    for (int c : n.control_inputs) {
      if (mapped[c] >= 0) clone.control_inputs.push_back(mapped[c]);
    }
    // Nodes that would run with no input (constants) wait for the call's
    // control inputs, and so do nested calls, so that they run only where
    // the call would (a cond's branch).
    const bool no_inputs = n.inputs.empty() && n.control_inputs.empty();
    const bool nested_call = !CalledFunction(fn, n).empty() && n.control_inputs.empty();
    if (input_control >= 0 && (no_inputs || nested_call)) clone.control_inputs.push_back(input_control);
    const int id = graph->Add(std::move(clone));
    mapped[n.id] = id;
    for (LateInput& p : pending) {
      p.node = id;
      late.push_back(p);
    }
  }
  for (const LateInput& p : late) {  // back edges: their producer came later
    graph->SetInput(p.node, p.input, {mapped[p.fn_producer.node], p.fn_producer.index});
  }
  for (size_t i = 0; i < body.args.size(); ++i) {
    if (input_control >= 0) graph->AddControlEdge(input_control, input_nodes[i]);
    // Control edges out of an _Arg leave its Identity.
    for (int c : fn.nodes[body.args[i]].consumers) {
      const Node& reader = fn.nodes[c];
      if (std::find(reader.control_inputs.begin(), reader.control_inputs.end(), body.args[i]) !=
              reader.control_inputs.end() &&
          mapped[c] >= 0) {
        graph->AddControlEdge(input_nodes[i], mapped[c]);
      }
    }
  }

  // One Identity per result.
  std::vector<int> outputs;
  for (size_t i = 0; i < body.rets.size(); ++i) {
    const Node& ret = fn.nodes[body.rets[i]];
    const NodeOutput data{mapped[ret.inputs[0]], ret.input(0).index};
    const std::string producer = graph->nodes[data.node].name;
    TFRUN_ASSIGN_OR_RETURN(const int id, AddIdentity(graph, fmt::format("Func/{}/output", caller.name), data,
                                                     multi ? std::string() : caller_device,
                                                     multi ? producer : std::string(), at));
    for (int c : ret.control_inputs) graph->AddControlEdge(mapped[c], id);
    outputs.push_back(id);
  }

  // Control edges out of the call leave a NoOp that waits for the body
  // (always made: the caller is kept, fetchable or targetable).
  int output_control = -1;
  {
    TFRUN_ASSIGN_OR_RETURN(output_control, AddNoOp(graph, fmt::format("Func/{}/output_control_node", caller.name),
                                                   caller_device, at));
    if (options.output_control_from_control_rets) {
      for (int c : body.control_rets) graph->AddControlEdge(mapped[c], output_control);
    } else {
      for (int o : outputs) graph->AddControlEdge(o, output_control);
    }
    if (graph->nodes[output_control].control_inputs.empty() && input_control >= 0) {
      graph->AddControlEdge(input_control, output_control);
    }
  }
  // The caller's name stays, for fetches and targets.
  NodeSpec kept;
  kept.name = caller.name;
  kept.device = caller_device;
  kept.location = at;
  kept.control_inputs = {output_control};
  std::vector<NodeOutput> results;
  for (int o : outputs) results.push_back({o, 0});
  TFRUN_ASSIGN_OR_RETURN(const int kept_id,
                         AddNameKeeper(graph, std::move(kept), results, options.keep_caller_fetchable));
  // The call's readers read the results; its control edges leave the NoOp.
  RewireReaders(graph, caller_id, results, output_control, kept_id);
  graph->Remove(caller_id);
  return Status::Ok();
}

}  // namespace tfrun
