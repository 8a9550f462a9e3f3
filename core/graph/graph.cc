#include "core/graph/graph.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/base/did_you_mean.h"

namespace tfrun {

std::string DataTypeString(std::string_view table_type) {
  std::string out(table_type);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int Graph::Add(Node node) {
  node.id = static_cast<int>(nodes.size());
  node.cls = NodeClassOf(node.op);
  node.consumers.clear();
  for (int in : node.inputs) {
    if (in >= 0) nodes[in].consumers.push_back(node.id);  // -1: a back edge, ConnectBackEdge's
  }
  for (int in : node.control_inputs) nodes[in].consumers.push_back(node.id);
  by_name[node.name] = node.id;
  nodes.push_back(std::move(node));
  return nodes.back().id;
}

void Graph::ConnectBackEdge(int consumer, size_t input, NodeOutput producer) {
  Node& node = nodes[consumer];
  if (node.input_index.empty() && producer.index != 0) node.input_index.assign(node.inputs.size(), 0);
  node.inputs[input] = producer.node;
  if (!node.input_index.empty()) node.input_index[input] = producer.index;
  std::vector<int>& readers = nodes[producer.node].consumers;
  readers.insert(std::upper_bound(readers.begin(), readers.end(), consumer), consumer);
}

bool Graph::HasControlFlow() const {
  return std::any_of(nodes.begin(), nodes.end(), [](const Node& n) { return IsControlFlow(n.cls); });
}

std::string Graph::OutputName(NodeOutput output, bool short_zero) const {
  const std::string& name = nodes[output.node].name;
  if (output.index == 0 && short_zero) return name;
  return fmt::format("{}:{}", name, output.index);
}

std::optional<TensorName> ParseTensorName(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return TensorName{std::string(text), 0};
  const std::string_view digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  int index = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + (c - '0');
  }
  return TensorName{std::string(text.substr(0, colon)), index};
}

StatusOr<NodeOutput> Graph::FindOutput(std::string_view text, std::string_view what) const {
  const std::optional<TensorName> name = ParseTensorName(text);
  if (!name) {
    return BadInput(fmt::format("{}: '{}' is not a tensor name (\"<op_name>:<output_index>\")", what, text));
  }
  // TensorFlow's words for the tensor name "x" stands for: "x:0".
  const std::string tensor = fmt::format("{}:{}", name->node, name->index);
  const Node* node = Find(name->node);
  if (node == nullptr) {
    return BadInput(fmt::format("{}: The name '{}' refers to a Tensor which does not exist. The operation, '{}', "
                                "does not exist in the graph.{}",
                                what, tensor, name->node, DidYouMean(name->node, NodeNames())));
  }
  if (name->index >= node->num_outputs) {
    return BadInput(fmt::format("{}: The name '{}' refers to a Tensor which does not exist. The operation, '{}', "
                                "exists but only has {} outputs.",
                                what, tensor, name->node, node->num_outputs));
  }
  return NodeOutput{node->id, name->index};
}

std::optional<DType> Graph::OutputDType(NodeOutput output) const {
  const Node& node = nodes[output.node];
  if (node.imported < 0) return node.dtype;
  const std::vector<std::string>& types = imported[node.imported].output_types;
  if (output.index < 0 || output.index >= static_cast<int>(types.size())) return std::nullopt;
  std::string_view type = types[output.index];
  if (IsRefType(type)) type.remove_suffix(4);
  return DTypeOfTableType(type);
}

std::string Graph::OutputTypeString(NodeOutput output) const {
  const Node& node = nodes[output.node];
  if (node.imported < 0) return std::string(Info(node.dtype).tf_name);
  const std::vector<std::string>& types = imported[node.imported].output_types;
  if (output.index < 0 || output.index >= static_cast<int>(types.size())) return "?";
  return DataTypeString(types[output.index]);
}

std::string FormatLocation(const std::string& path, const SourceLocation& loc) {
  if (loc.line == 0) return path;
  return fmt::format("{}:{}:{}", path, loc.line, loc.column);
}

std::string Graph::Where(const SourceLocation& loc) const { return FormatLocation(path, loc); }

}  // namespace tfrun
