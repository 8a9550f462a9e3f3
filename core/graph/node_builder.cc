#include "core/graph/node_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "core/graph/function_library.h"

namespace tfrun {

StatusOr<int64_t> BindArgs(const std::vector<TfArgDef>& args, const NodeAttrs& attrs, int64_t limit,
                           std::vector<std::string>* types, std::string* missing) {
  auto attr = [&](std::string_view name) -> const AttrValue* {
    auto it = attrs.find(name);
    if (it == attrs.end()) {
      *missing = std::string(name);
      return nullptr;
    }
    return &it->second;
  };
  // How many types each arg binds, and their sum, first.
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const TfArgDef& arg : args) {
    int64_t count = 1;
    if (!arg.type_list_attr.empty()) {
      const AttrValue* list = attr(arg.type_list_attr);
      if (list == nullptr) return BadInput("missing");
      count = static_cast<int64_t>(list->items.size());
    } else if (!arg.number_attr.empty()) {
      const AttrValue* n = attr(arg.number_attr);
      if (n == nullptr || n->items.size() != 1) return BadInput("missing");
      count = std::strtoll(n->items[0].c_str(), nullptr, 10);
      if (count < 0) return BadInput(fmt::format("{} = {} is negative", arg.number_attr, count));
    }
    if (arg.type.empty() && arg.type_list_attr.empty()) {
      const AttrValue* t = attr(arg.type_attr);
      if (t == nullptr || t->items.size() != 1) return BadInput("missing");
    }
    if (__builtin_add_overflow(total, count, &total)) total = std::numeric_limits<int64_t>::max();
    counts.push_back(count);
  }
  if (total > limit) return total;
  for (size_t a = 0; a < args.size(); ++a) {
    const TfArgDef& arg = args[a];
    const std::string suffix = arg.is_ref ? "_REF" : "";
    if (!arg.type_list_attr.empty()) {
      for (const std::string& t : attrs.find(arg.type_list_attr)->second.items) types->push_back(t + suffix);
      continue;
    }
    const std::string type = std::string(arg.type.empty() ? attrs.find(arg.type_attr)->second.items[0] : arg.type) +
                             suffix;
    for (int64_t i = 0; i < counts[a]; ++i) types->push_back(type);
  }
  return total;
}

namespace {

// How many of the node's inputs each input argument takes: one each, and
// what the others leave to the one list argument.
std::vector<int> InputCounts(const TfOpDef& op, int num_inputs) {
  std::vector<int> counts(op.inputs.size(), 1);
  int list_arg = -1;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (!op.inputs[i].number_attr.empty() || !op.inputs[i].type_list_attr.empty()) list_arg = static_cast<int>(i);
  }
  if (list_arg >= 0) counts[list_arg] = num_inputs - static_cast<int>(op.inputs.size()) + 1;
  return counts;
}

// "(2x-1)", or "?" for an unknown rank, as the tables write shapes.
AttrValue ShapeAttrOf(const Node& node) { return node.unknown_rank ? AttrValue{"shape", {"?"}} : ShapeAttr(node.shape); }

// The attrs op_def_library.py gives the Python call a graph file's node
// stands for (AddInferredNode).
NodeAttrs InferredAttrs(const TfOpDef& op, const Graph& graph, const Node& node) {
  NodeAttrs attrs;
  const std::vector<int> counts = InputCounts(op, static_cast<int>(node.inputs.size()));
  size_t next = 0;
  for (size_t a = 0; a < op.inputs.size() && next < node.inputs.size(); ++a) {
    const TfArgDef& arg = op.inputs[a];
    const DType dtype = graph.nodes[node.inputs[next]].dtype;
    if (!arg.number_attr.empty()) attrs.emplace(std::string(arg.number_attr), IntAttr(counts[a]));
    if (!arg.type_attr.empty()) attrs.emplace(std::string(arg.type_attr), TypeAttr(dtype));
    if (!arg.type_list_attr.empty()) {
      AttrValue list{"list(type)", {}};
      for (int i = 0; i < counts[a]; ++i) {
        list.items.emplace_back(TableTypeName(graph.nodes[node.inputs[next + i]].dtype));
      }
      attrs.emplace(std::string(arg.type_list_attr), std::move(list));
    }
    next += counts[a];
  }
  for (const TfArgDef& arg : op.outputs) {
    if (!arg.type_attr.empty()) attrs.emplace(std::string(arg.type_attr), TypeAttr(node.dtype));
    if (!arg.number_attr.empty()) attrs.emplace(std::string(arg.number_attr), IntAttr(node.num_outputs));
  }
  for (const TfAttrDef& a : op.attrs) {
    if (a.name == "transpose_a") attrs[std::string(a.name)] = BoolAttr(node.transpose_a);
    if (a.name == "transpose_b") attrs[std::string(a.name)] = BoolAttr(node.transpose_b);
    if (a.name == "shape" && a.type == "shape") attrs[std::string(a.name)] = ShapeAttrOf(node);
  }
  AddDefaultAttrs(op, &attrs);
  // colocate_with's groups, as ops.py writes them on the NodeDef.
  if (!node.colocation.empty()) {
    AttrValue groups{"list(string)", {}};
    for (const std::string& group : node.colocation) groups.items.push_back("loc:@" + group);
    attrs.emplace("_class", std::move(groups));
  }
  return attrs;
}

// The input and output types `props->attrs` bind, or NodeBuilder's error
// for the attr they lack.
Status BindTypes(const TfOpDef& op, const std::string& node_name, NodeProperties* props) {
  std::string missing;
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  StatusOr<int64_t> bound = BindArgs(op.inputs, props->attrs, kAny, &props->input_types, &missing);
  if (bound.ok()) bound = BindArgs(op.outputs, props->attrs, kAny, &props->output_types, &missing);
  if (bound.ok()) return Status::Ok();
  return RuntimeError(fmt::format("node '{}': NodeDef missing attr '{}' from Op<name={}>", node_name, missing,
                                  op.name));
}

}  // namespace

AttrValue TypeAttr(DType dtype) { return {"type", {std::string(TableTypeName(dtype))}}; }
AttrValue IntAttr(int64_t value) { return {"int", {std::to_string(value)}}; }
AttrValue BoolAttr(bool value) { return {"bool", {value ? "true" : "false"}}; }
AttrValue StringAttr(std::string value) { return {"string", {std::move(value)}}; }
AttrValue ShapeAttr(const Shape& shape) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d < 0 ? -1 : d));
  return {"shape", {fmt::format("({})", fmt::join(dims, "x"))}};
}

NodeSpec ReplacementSpec(const Node& replaced, std::string op, std::string name) {
  NodeSpec spec;
  spec.name = std::move(name);
  spec.op = std::move(op);
  spec.device = replaced.requested_device_text;
  spec.location = replaced.location;
  return spec;
}

namespace {
// Appends `spec` with its bound types `def`.
StatusOr<int> AddWithProperties(Graph* graph, NodeSpec spec, NodeProperties def);
}  // namespace

StatusOr<int> AddNode(Graph* graph, NodeSpec spec) {
  const TfOpDef* op = FindTfOp(spec.op);
  NodeProperties def;
  def.attrs = std::move(spec.attrs);
  if ((op == nullptr || !op->has_op_def) && graph->functions != nullptr && graph->functions->Contains(spec.op)) {
    // A native call of a library function: its signature's types.
    TFRUN_ASSIGN_OR_RETURN(FunctionSignature signature, graph->functions->Signature(spec.op, &def.attrs));
    def.input_types = std::move(signature.input_types);
    def.output_types = std::move(signature.output_types);
    return AddWithProperties(graph, std::move(spec), std::move(def));
  }
  if (op == nullptr || !op->has_op_def) {
    return RuntimeError(fmt::format("node '{}': Op type not registered '{}'", spec.name, spec.op));
  }
  // NodeBuilder's inference: an input's type attr from what it reads, in
  // the OpDef's order (one input an arg, or N where the pass set N).
  size_t next = 0;
  for (const TfArgDef& arg : op->inputs) {
    int64_t count = 1;
    if (!arg.number_attr.empty()) {
      auto n = def.attrs.find(arg.number_attr);
      count = n != def.attrs.end() && !n->second.items.empty() ? std::strtoll(n->second.items[0].c_str(), nullptr, 10)
                                                              : 1;
    }
    if (!arg.type_attr.empty() && def.attrs.count(arg.type_attr) == 0 && next < spec.inputs.size()) {
      const NodeOutput in = spec.inputs[next];
      const NodeProperties* producer = graph->PropertiesOf(graph->nodes[in.node]);
      std::string table = producer != nullptr && in.index < static_cast<int>(producer->output_types.size())
                              ? producer->output_types[in.index]
                              : std::string(TableTypeName(graph->nodes[in.node].dtype));
      if (IsRefType(table)) table.resize(table.size() - 4);
      def.attrs.emplace(std::string(arg.type_attr), AttrValue{"type", {table}});
    }
    next += static_cast<size_t>(std::max<int64_t>(count, 0));
  }
  AddDefaultAttrs(*op, &def.attrs);
  TFRUN_RETURN_IF_ERROR(BindTypes(*op, spec.name, &def));
  return AddWithProperties(graph, std::move(spec), std::move(def));
}

namespace {

StatusOr<int> AddWithProperties(Graph* graph, NodeSpec spec, NodeProperties def) {
  if (def.input_types.size() != spec.inputs.size()) {
    return RuntimeError(fmt::format("node '{}': {} takes {} inputs; the pass gave {}", spec.name, spec.op,
                                    def.input_types.size(), spec.inputs.size()));
  }
  Node node;
  node.name = std::move(spec.name);
  node.op = std::move(spec.op);
  node.location = spec.location;
  for (const NodeOutput& in : spec.inputs) {
    node.inputs.push_back(in.node);
    node.input_index.push_back(in.index);
  }
  if (std::all_of(node.input_index.begin(), node.input_index.end(), [](int i) { return i == 0; })) {
    node.input_index.clear();
  }
  node.control_inputs = std::move(spec.control_inputs);
  node.num_outputs = static_cast<int>(def.output_types.size());
  if (!def.output_types.empty()) {
    std::string type = def.output_types[0];
    if (IsRefType(type)) type.resize(type.size() - 4);
    if (std::optional<DType> dtype = DTypeOfTableType(type)) node.dtype = *dtype;
  }
  node.value = std::move(spec.value);
  if (node.value.is_valid()) {
    node.shape = node.value.shape();
    node.unknown_rank = false;
  } else {
    node.unknown_rank = true;
  }
  if (!spec.device.empty()) {
    StatusOr<DeviceSpec> device = DeviceSpec::Parse(spec.device);
    if (!device.ok()) {
      return RuntimeError(fmt::format("node '{}': Malformed device specification '{}'", node.name, spec.device));
    }
    node.requested_device = *device;
    node.requested_device_text = spec.device;
  }
  // Its `_class` groups, as the importer reads a NodeDef's.
  if (auto it = def.attrs.find("_class"); it != def.attrs.end() && it->second.is_list()) {
    for (const std::string& group : it->second.items) {
      if (group.rfind("loc:@", 0) == 0) node.colocation.push_back(group.substr(5));
    }
    std::sort(node.colocation.begin(), node.colocation.end());
    node.colocation.erase(std::unique(node.colocation.begin(), node.colocation.end()), node.colocation.end());
  }
  node.properties = static_cast<int32_t>(graph->properties.size());
  graph->properties.push_back(std::move(def));
  return graph->Add(std::move(node));
}

}  // namespace

StatusOr<int> AddInferredNode(Graph* graph, Node node) {
  const TfOpDef* op = FindTfOp(node.op);
  if (op != nullptr && op->has_op_def) {
    NodeProperties props;
    props.attrs = InferredAttrs(*op, *graph, node);
    TFRUN_RETURN_IF_ERROR(BindTypes(*op, node.name, &props));
    node.properties = static_cast<int32_t>(graph->properties.size());
    graph->properties.push_back(std::move(props));
  }
  return graph->Add(std::move(node));
}

NodeAttrs OpAttrs(const TfOpDef& op, DType dtype) {
  NodeAttrs attrs;
  for (const TfAttrDef& a : op.attrs) {
    if (a.type == "type" && !a.default_value) attrs.emplace(std::string(a.name), TypeAttr(dtype));
  }
  AddDefaultAttrs(op, &attrs);
  return attrs;
}

}  // namespace tfrun
