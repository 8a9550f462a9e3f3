#include "core/graph_file/fetch.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/base/did_you_mean.h"

namespace tfrun {

std::vector<NodeOutput> DefaultFetch(const Graph& graph) {
  std::vector<NodeOutput> fetch;
  for (const Node& n : graph.nodes) {
    if (!n.consumers.empty()) continue;
    for (int i = 0; i < n.num_outputs; ++i) fetch.push_back({n.id, i});
  }
  return fetch;
}

namespace {

// A list of node names, and how errors word it: "fetch" or "targets".
// Fetches are sess.run's fetch list: a tensor may be fetched twice (its
// value printed twice) and the list may be empty (nothing runs); targets
// name each node once.
struct ListWords {
  const char* list;   // "fetch"
  const char* entry;  // "each fetch"
  const char* twice;  // "is a target twice"; nullptr: repeats allowed
  bool may_be_empty;
};
constexpr ListWords kFetchWords = {"fetch", "each fetch", nullptr, true};
constexpr ListWords kTargetWords = {"targets", "each target", "is a target twice", false};

// A list of node names, each once; with `outputs`, tensor names
// ("split:1") of the nodes' outputs.
Status ReadNames(const FieldReader& fields, const YamlNode& list, const ListWords& words, const Graph& graph,
                 bool outputs, std::vector<NodeOutput>* read) {
  const char* what = words.list;
  if (!list.IsSequence()) return fields.ErrorAt(list, fmt::format("{} must be a list of node names", what));
  std::set<std::pair<int, int>> seen;
  for (const YamlNode& f : list.Elements()) {
    if (!f.IsScalar()) return fields.ErrorAt(f, fmt::format("{} must be a node name", words.entry));
    const std::optional<TensorName> name = ParseTensorName(f.ScalarString());
    const Node* n = name && (outputs || f.ScalarString().find(':') == std::string::npos) ? graph.Find(name->node)
                                                                                         : nullptr;
    if (n == nullptr) {
      const std::string node = name ? name->node : f.ScalarString();
      return fields.ErrorAt(f, fmt::format("{} '{}' names no node{}", what, f.Scalar(),
                                           DidYouMean(node, graph.NodeNames())));
    }
    if (name->index >= std::max(n->num_outputs, 1)) {
      return fields.ErrorAt(f, fmt::format("{} '{}': node '{}' has {} output{}", what, f.Scalar(), n->name,
                                           n->num_outputs, n->num_outputs == 1 ? "" : "s"));
    }
    const NodeOutput output{n->id, name->index};
    if (!seen.emplace(output.node, output.index).second && words.twice != nullptr) {
      return fields.ErrorAt(f, fmt::format("'{}' {}", f.Scalar(), words.twice));
    }
    read->push_back(output);
  }
  if (read->empty() && !words.may_be_empty) return fields.ErrorAt(list, fmt::format("{} is empty", what));
  return Status::Ok();
}

}  // namespace

Status ReadFetch(const FieldReader& fields, const YamlNode& fetch, const YamlNode& targets, Graph* graph) {
  if (targets) {
    std::vector<NodeOutput> read;
    TFRUN_RETURN_IF_ERROR(ReadNames(fields, targets, kTargetWords, *graph, false, &read));
    for (const NodeOutput& t : read) graph->targets.push_back(t.node);
  }
  if (fetch) return ReadNames(fields, fetch, kFetchWords, *graph, true, &graph->fetch);
  if (!targets) graph->fetch = DefaultFetch(*graph);
  return Status::Ok();
}

}  // namespace tfrun
