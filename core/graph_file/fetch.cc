#include "core/graph_file/fetch.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/did_you_mean.h"

namespace tfrun {

std::vector<int> DefaultFetch(const Graph& graph) {
  std::vector<int> fetch;
  for (const Node& n : graph.nodes) {
    if (n.consumers.empty() && n.has_output) fetch.push_back(n.id);
  }
  return fetch;
}

namespace {

// How errors word a list of node names: "fetch" or "targets".
struct ListWords {
  const char* list;   // "fetch"
  const char* entry;  // "each fetch"
  const char* twice;  // "is fetched twice"
};
constexpr ListWords kFetchWords = {"fetch", "each fetch", "is fetched twice"};
constexpr ListWords kTargetWords = {"targets", "each target", "is a target twice"};

// A list of node names, each once.
Status ReadNames(const FieldReader& fields, const YamlNode& list, const ListWords& words, const Graph& graph,
                 std::vector<int>* ids) {
  const char* what = words.list;
  if (!list.IsSequence()) return fields.ErrorAt(list, fmt::format("{} must be a list of node names", what));
  std::vector<bool> seen(graph.nodes.size(), false);
  for (const YamlNode& f : list.Elements()) {
    if (!f.IsScalar()) return fields.ErrorAt(f, fmt::format("{} must be a node name", words.entry));
    const Node* n = graph.Find(f.ScalarString());
    if (n == nullptr) {
      return fields.ErrorAt(f, fmt::format("{} '{}' names no node{}", what, f.Scalar(),
                                           DidYouMean(f.Scalar(), graph.NodeNames())));
    }
    if (seen[n->id]) return fields.ErrorAt(f, fmt::format("'{}' {}", f.Scalar(), words.twice));
    seen[n->id] = true;
    ids->push_back(n->id);
  }
  if (ids->empty()) return fields.ErrorAt(list, fmt::format("{} is empty", what));
  return Status::Ok();
}

}  // namespace

Status ReadFetch(const FieldReader& fields, const YamlNode& fetch, const YamlNode& targets, Graph* graph) {
  if (targets) TFRUN_RETURN_IF_ERROR(ReadNames(fields, targets, kTargetWords, *graph, &graph->targets));
  if (fetch) return ReadNames(fields, fetch, kFetchWords, *graph, &graph->fetch);
  if (!targets) graph->fetch = DefaultFetch(*graph);
  return Status::Ok();
}

}  // namespace tfrun
