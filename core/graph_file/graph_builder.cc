#include "core/graph_file/graph_builder.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/base/did_you_mean.h"
#include "core/graph/node_builder.h"

namespace tfrun {
namespace {

// A spelling near an existing name, or the node of that name inside a
// name scope (`x` where only `tower_0/x` exists).
std::string ScopedInputHint(const std::string& name, const Graph& graph) {
  std::string hint = DidYouMean(name, graph.NodeNames());
  if (!hint.empty()) return hint;
  for (const Node& n : graph.nodes) {
    if (n.name.size() > name.size() + 1 && n.name.compare(n.name.size() - name.size(), name.size(), name) == 0 &&
        n.name[n.name.size() - name.size() - 1] == '/') {
      return fmt::format(" (did you mean '{}'? it is in a name scope)", n.name);
    }
  }
  return "";
}

// `{i}` in an input name inside a for_each_device scope: the copy's index.
std::string SubstituteCopyIndex(std::string name, std::optional<int> copy_index) {
  const size_t at = name.find("{i}");
  if (at != std::string::npos && copy_index) name.replace(at, 3, std::to_string(*copy_index));
  return name;
}

}  // namespace

Status GraphBuilder::ReadInputs(const YamlNode& entry, const OpDef& def, Node* node) const {
  std::vector<int> ids;
  std::vector<int> indices;
  if (const YamlNode inputs = entry["inputs"]) {
    if (!inputs.IsSequence()) return fields_.NodeError(inputs, node->name, "inputs must be a list of node names");
    ids.reserve(inputs.size());
    for (const YamlNode& in : inputs.Elements()) {
      if (!in.IsScalar()) return fields_.NodeError(in, node->name, "each input must be a node name");
      const std::string written = SubstituteCopyIndex(in.ScalarString(), copy_index_);
      if (written.find("{i}") != std::string::npos) {
        return fields_.NodeError(in, node->name, "'{i}' (the copy's index) is only known inside a for_each_device scope");
      }
      const std::optional<TensorName> tensor = ParseTensorName(written);
      if (!tensor) {
        return fields_.NodeError(in, node->name,
                                 fmt::format("input '{}' is not a node name or NAME:OUTPUT_INDEX", in.Scalar()));
      }
      const std::string& name = tensor->node;
      if (auto alias = aliases_.find(name); alias != aliases_.end()) {
        if (alias->second.ids.empty()) {
          return fields_.NodeError(in, node->name,
                                   fmt::format("input '{}' stands for the copies of a for_each_device: {} scope, "
                                               "and there is no {} device",
                                               in.Scalar(), alias->second.device_type, alias->second.device_type));
        }
        for (int id : alias->second.ids) {
          auto var = variable_reads_.find(id);
          ids.push_back(var == variable_reads_.end() ? id : var->second);
          indices.push_back(tensor->index);
        }
        continue;
      }
      const int* found = graph_->by_name.Find(name);
      if (found == nullptr && name == node->name) {
        return fields_.NodeError(in, node->name, "a node cannot consume its own output (a cycle)");
      }
      if (found == nullptr) {
        return fields_.NodeError(
            in, node->name,
            fmt::format("input '{}' {}{}", in.Scalar(),
                        defined_later_(name) ? "is defined later; inputs must name earlier nodes"
                                             : "names no earlier node",
                        ScopedInputHint(name, *graph_)));
      }
      int id = *found;
      auto var = variable_reads_.find(id);
      if (var != variable_reads_.end()) id = var->second;
      ids.push_back(id);
      indices.push_back(tensor->index);
    }
  }
  // Every input names an existing output (aliases' copies included).
  for (size_t i = 0; i < ids.size(); ++i) {
    const Node& producer = graph_->nodes[ids[i]];
    if (indices[i] >= std::max(producer.num_outputs, 1)) {
      return fields_.NodeError(entry["inputs"], node->name,
                               fmt::format("input '{}:{}': '{}' has {} output{}", producer.name, indices[i],
                                           producer.name, producer.num_outputs, producer.num_outputs == 1 ? "" : "s"));
    }
  }
  const int n = static_cast<int>(ids.size());
  if (n < def.min_inputs || (def.max_inputs >= 0 && n > def.max_inputs)) {
    std::string want = def.max_inputs < 0                 ? fmt::format("at least {}", def.min_inputs)
                       : def.min_inputs == def.max_inputs ? std::to_string(def.min_inputs)
                                                          : fmt::format("{} to {}", def.min_inputs, def.max_inputs);
    return fields_.NodeError(entry, node->name,
                             fmt::format("{} takes {} input{}, got {}", def.type, want, want == "1" ? "" : "s", n));
  }
  if (def.type == "NoOp") {
    node->control_inputs = std::move(ids);
    return Status::Ok();
  }
  node->inputs = std::move(ids);
  if (std::any_of(indices.begin(), indices.end(), [](int i) { return i != 0; })) node->input_index = std::move(indices);
  return Status::Ok();
}

StatusOr<int> GraphBuilder::Add(Node node, const OpDef& def, const YamlNode& where) {
  std::vector<const Node*> inputs;
  inputs.reserve(node.inputs.size());
  for (int id : node.inputs) inputs.push_back(&graph_->nodes[id]);
  ShapeContext context(node, inputs, *graph_, errors_);
  Status s = InferNode(def, context);
  if (!s.ok()) return fields_.NodeError(where, node.name, s.message());
  return AddInferredNode(graph_, std::move(node));
}

}  // namespace tfrun
