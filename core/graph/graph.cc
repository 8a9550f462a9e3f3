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
    if (in >= 0) nodes[in].consumers.push_back(node.id);  // -1: a back edge, SetInput's later
  }
  for (int in : node.control_inputs) nodes[in].consumers.push_back(node.id);
  by_name[node.name] = node.id;
  nodes.push_back(std::move(node));
  return nodes.back().id;
}

namespace {

// Takes one `id` out of a sorted consumer list.
void DropOne(std::vector<int>* consumers, int id) {
  auto it = std::lower_bound(consumers->begin(), consumers->end(), id);
  if (it != consumers->end() && *it == id) consumers->erase(it);
}

void InsertSorted(std::vector<int>* consumers, int id) {
  consumers->insert(std::upper_bound(consumers->begin(), consumers->end(), id), id);
}

}  // namespace

std::string Graph::NewName(std::string_view prefix) { return fmt::format("{}/_{}", prefix, name_counter++); }

void Graph::SetInput(int consumer, size_t input, NodeOutput producer) {
  Node& node = nodes[consumer];
  if (node.inputs[input] >= 0) DropOne(&nodes[node.inputs[input]].consumers, consumer);
  if (node.input_index.empty() && producer.index != 0) node.input_index.assign(node.inputs.size(), 0);
  node.inputs[input] = producer.node;
  if (!node.input_index.empty()) node.input_index[input] = producer.index;
  InsertSorted(&nodes[producer.node].consumers, consumer);
}

void Graph::AddControlEdge(int producer, int consumer) {
  nodes[consumer].control_inputs.push_back(producer);
  InsertSorted(&nodes[producer].consumers, consumer);
}

void Graph::ReplaceUses(int from, int to) {
  const std::vector<int> readers = nodes[from].consumers;
  for (size_t k = 0; k < readers.size(); ++k) {
    const int c = readers[k];
    if (k > 0 && readers[k - 1] == c) continue;
    for (size_t i = 0; i < nodes[c].inputs.size(); ++i) {
      if (nodes[c].inputs[i] == from) SetInput(c, i, {to, nodes[c].input(i).index});
    }
    for (int& ctl : nodes[c].control_inputs) {
      if (ctl != from) continue;
      ctl = to;
      DropOne(&nodes[from].consumers, c);
      InsertSorted(&nodes[to].consumers, c);
    }
  }
}

void Graph::Remove(int id) {
  Node& node = nodes[id];
  for (int in : node.inputs) {
    if (in >= 0) DropOne(&nodes[in].consumers, id);
  }
  for (int in : node.control_inputs) DropOne(&nodes[in].consumers, id);
  // Control edges out of it go with it (TensorFlow's RemoveNode).
  for (int c : node.consumers) {
    std::vector<int>& controls = nodes[c].control_inputs;
    controls.erase(std::remove(controls.begin(), controls.end(), id), controls.end());
  }
  node.inputs.clear();
  node.input_index.clear();
  node.control_inputs.clear();
  node.consumers.clear();
  node.removed = true;
}

void Graph::Compact() {
  std::vector<int> new_id(nodes.size(), -1);
  int next = 0;
  for (const Node& node : nodes) {
    if (!node.removed) new_id[node.id] = next++;
  }
  if (next == static_cast<int>(nodes.size())) return;
  std::vector<Node> kept;
  kept.reserve(next);
  for (Node& node : nodes) {
    if (node.removed) continue;
    node.id = new_id[node.id];
    for (int& in : node.inputs) in = new_id[in];
    for (int& in : node.control_inputs) in = new_id[in];
    for (int& c : node.consumers) c = new_id[c];
    kept.push_back(std::move(node));
  }
  nodes = std::move(kept);
  for (NodeOutput& f : fetch) f.node = new_id[f.node];
  for (int& t : targets) t = new_id[t];
  by_name = FlatStringMap<int>();
  for (const Node& node : nodes) by_name[node.name] = node.id;
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
  if (node.properties < 0) return node.dtype;
  const std::vector<std::string>& types = properties[node.properties].output_types;
  if (output.index < 0 || output.index >= static_cast<int>(types.size())) return std::nullopt;
  std::string_view type = types[output.index];
  if (IsRefType(type)) type.remove_suffix(4);
  return DTypeOfTableType(type);
}

std::string Graph::OutputTypeString(NodeOutput output) const {
  const Node& node = nodes[output.node];
  if (node.properties < 0) return std::string(Info(node.dtype).tf_name);
  const std::vector<std::string>& types = properties[node.properties].output_types;
  if (output.index < 0 || output.index >= static_cast<int>(types.size())) return "?";
  return DataTypeString(types[output.index]);
}

std::string FormatLocation(const std::string& path, const SourceLocation& loc) {
  if (loc.line == 0) return path;
  return fmt::format("{}:{}:{}", path, loc.line, loc.column);
}

std::string Graph::Where(const SourceLocation& loc) const { return FormatLocation(path, loc); }

Status LocatedError(ErrorKind kind, const std::string& path, const SourceLocation& loc, std::string_view text,
                    std::string node) {
  return Status(kind, fmt::format("{}: {}", FormatLocation(path, loc), text),
                ErrorSite{path, loc.line, loc.column, std::move(node)});
}

Status Graph::ErrorAt(ErrorKind kind, const Node& node, std::string_view text, bool names_node) const {
  return LocatedError(kind, path, node.location, text, names_node ? node.name : std::string());
}

}  // namespace tfrun
