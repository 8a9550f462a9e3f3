// What a run fetches: the graph file's `fetch:` list (a tensor may be listed
// twice, as in sess.run([a, a]); an empty list runs nothing), or by default
// every node no other node consumes, in file order (NoOps have no value to print);
// and its `targets:`, run first and not printed (sess.run(init) without
// print(), as the TF 1.x blog's initializer transcript).
#pragma once

#include <vector>

#include "core/graph/graph.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

std::vector<NodeOutput> DefaultFetch(const Graph& graph);

// Sets graph->targets from `targets` and graph->fetch from `fetch`
// (undefined: the default, or nothing when there are targets).
Status ReadFetch(const FieldReader& fields, const YamlNode& fetch, const YamlNode& targets, Graph* graph);

}  // namespace tfrun
