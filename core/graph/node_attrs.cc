#include "core/graph/node_attrs.h"

#include <fmt/format.h>

namespace tfrun {
namespace {

AttrValue TypeValue(DType dtype) { return AttrValue{"type", {std::string(TableTypeName(dtype))}}; }

AttrValue IntValue(int64_t i) { return AttrValue{"int", {std::to_string(i)}}; }

AttrValue BoolValue(bool b) { return AttrValue{"bool", {b ? "true" : "false"}}; }

// "(2x-1)" or "?", as the tables write shapes.
AttrValue ShapeValue(const Node& node) {
  if (node.unknown_rank) return AttrValue{"shape", {"?"}};
  std::vector<std::string> dims;
  for (int64_t d : node.shape) dims.push_back(std::to_string(d < 0 ? -1 : d));
  return AttrValue{"shape", {fmt::format("({})", fmt::join(dims, "x"))}};
}

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

}  // namespace

NodeAttrs NodeDefAttrs(const TfOpDef& op, const Graph& graph, const Node& node) {
  NodeAttrs attrs;
  const std::vector<int> counts = InputCounts(op, static_cast<int>(node.inputs.size()));
  size_t next = 0;
  for (size_t a = 0; a < op.inputs.size() && next < node.inputs.size(); ++a) {
    const TfArgDef& arg = op.inputs[a];
    const DType dtype = graph.nodes[node.inputs[next]].dtype;
    if (!arg.number_attr.empty()) attrs.emplace(std::string(arg.number_attr), IntValue(counts[a]));
    if (!arg.type_attr.empty()) attrs.emplace(std::string(arg.type_attr), TypeValue(dtype));
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
    if (!arg.type_attr.empty()) attrs.emplace(std::string(arg.type_attr), TypeValue(node.dtype));
    if (!arg.number_attr.empty()) attrs.emplace(std::string(arg.number_attr), IntValue(node.num_outputs));
  }
  for (const TfAttrDef& a : op.attrs) {
    if (a.name == "transpose_a") attrs[std::string(a.name)] = BoolValue(node.transpose_a);
    if (a.name == "transpose_b") attrs[std::string(a.name)] = BoolValue(node.transpose_b);
    if (a.name == "shape" && a.type == "shape") attrs[std::string(a.name)] = ShapeValue(node);
  }
  AddDefaultAttrs(op, &attrs);
  return attrs;
}

NodeAttrs OpAttrs(const TfOpDef& op, DType dtype) {
  NodeAttrs attrs;
  for (const TfAttrDef& a : op.attrs) {
    if (a.type == "type" && !a.default_value) attrs.emplace(std::string(a.name), TypeValue(dtype));
  }
  AddDefaultAttrs(op, &attrs);
  return attrs;
}

}  // namespace tfrun
