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

Status ReadFetch(const FieldReader& fields, const YamlNode& fetch, Graph* graph) {
  if (!fetch) {
    graph->fetch = DefaultFetch(*graph);
    return Status::Ok();
  }
  if (!fetch.IsSequence()) return fields.ErrorAt(fetch, "fetch must be a list of node names");
  std::vector<bool> fetched(graph->nodes.size(), false);
  for (const YamlNode& f : fetch.Elements()) {
    if (!f.IsScalar()) return fields.ErrorAt(f, "each fetch must be a node name");
    const Node* n = graph->Find(f.ScalarString());
    if (n == nullptr) {
      return fields.ErrorAt(
          f, fmt::format("fetch '{}' names no node{}", f.Scalar(), DidYouMean(f.Scalar(), graph->NodeNames())));
    }
    if (fetched[n->id]) return fields.ErrorAt(f, fmt::format("'{}' is fetched twice", f.Scalar()));
    fetched[n->id] = true;
    graph->fetch.push_back(n->id);
  }
  if (graph->fetch.empty()) return fields.ErrorAt(fetch, "fetch is empty");
  return Status::Ok();
}

}  // namespace tfrun
