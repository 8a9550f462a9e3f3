// For tests: a node appended to a graph by name, op and edges alone, as a
// pass would append it without a NodeDef.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph.h"

namespace tfrun {

inline int AddOp(Graph* g, const std::string& name, const std::string& op, std::vector<int> inputs = {},
                 std::vector<int> control = {}) {
  Node node;
  node.name = name;
  node.op = op;
  node.inputs = std::move(inputs);
  node.control_inputs = std::move(control);
  return g->Add(std::move(node));
}

}  // namespace tfrun
