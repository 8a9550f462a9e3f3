// What a run fetches: the graph file's `fetch:` list, or by default every
// node no other node consumes, in file order (NoOps have no value to print).
#pragma once

#include <vector>

#include "core/graph.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

std::vector<int> DefaultFetch(const Graph& graph);

// Sets graph->fetch from `fetch` (undefined: the default).
Status ReadFetch(const FieldReader& fields, const YamlNode& fetch, Graph* graph);

}  // namespace tfrun
