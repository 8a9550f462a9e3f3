#include "core/graph/node_def_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>


namespace tfrun {
namespace {

// Attributes TF 1.x's op definitions did not have yet.
bool NewInTf2(std::string_view attr) { return attr == "grad_a" || attr == "grad_b" || attr == "Truncate"; }

// One attribute's value as SummarizeAttrValue prints it, from the node.
std::string AttrValueText(const Graph& graph, const Node& node, std::string_view attr) {
  const int list_inputs = static_cast<int>(node.inputs.size()) - (node.op == "ConcatV2" ? 1 : 0);
  if (attr == "T" || attr == "dtype" || attr == "DstT") return DataTypeEnum(node.dtype);
  if (attr == "SrcT" || attr == "Ta") return DataTypeEnum(graph.nodes[node.inputs[0]].dtype);
  if (attr == "Tb") return DataTypeEnum(graph.nodes[node.inputs[1]].dtype);
  if (attr == "N") return std::to_string(list_inputs);
  if (attr == "Tidx") return "DT_INT32";
  if (attr == "num_split") return std::to_string(node.num_outputs);
  if (attr == "shape") return ShapeDebugString(node.shape, node.unknown_rank);
  if (attr == "transpose_a") return node.transpose_a ? "true" : "false";
  if (attr == "transpose_b") return node.transpose_b ? "true" : "false";
  if (attr == "data_format") return "\"NHWC\"";
  if (attr == "container" || attr == "shared_name") return "\"\"";
  if (attr == "use_locking" || attr == "validate_shape") return "true";
  return "false";  // grad_a, grad_b, Truncate, a_is_sparse, b_is_sparse: Python's defaults
}

}  // namespace

std::string DataTypeEnum(DType dtype) {
  std::string name(Info(dtype).tf_name);
  for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return "DT_" + name;
}

std::string NodeDefSummary(const Graph& graph, const Node& node, const std::vector<std::string_view>& op_attrs,
                           std::string_view device, NodeDefEra era) {
  std::vector<std::string> attrs;
  std::vector<std::string_view> names;
  for (std::string_view a : op_attrs) {
    if (era == NodeDefEra::kTf2 || !NewInTf2(a)) names.push_back(a);
  }
  std::sort(names.begin(), names.end());  // SummarizeAttrsHelper sorts them
  for (std::string_view a : names) attrs.push_back(fmt::format("{}={}", a, AttrValueText(graph, node, a)));
  if (!device.empty()) attrs.push_back(fmt::format("_device=\"{}\"", device));
  std::vector<std::string> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) inputs.push_back(graph.OutputName(node.input(i)));
  for (int c : node.control_inputs) inputs.push_back("^" + graph.nodes[c].name);
  // TF 1.14+ names the node as FormatNodeNameForError does.
  const std::string name = era == NodeDefEra::kTf2 ? fmt::format("{{{{node {}}}}}", node.name) : node.name;
  return fmt::format("{} = {}[{}]({})", name, node.op, fmt::join(attrs, ", "), fmt::join(inputs, ", "));
}

}  // namespace tfrun
