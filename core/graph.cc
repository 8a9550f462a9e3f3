#include "core/graph.h"

#include <fmt/format.h>

namespace tfrun {

int Graph::Add(Node node) {
  node.id = static_cast<int>(nodes.size());
  node.consumers.clear();
  for (int in : node.inputs) nodes[in].consumers.push_back(node.id);
  for (int in : node.control_inputs) nodes[in].consumers.push_back(node.id);
  by_name[node.name] = node.id;
  nodes.push_back(std::move(node));
  return nodes.back().id;
}

std::string FormatLocation(const std::string& path, const SourceLocation& loc) {
  if (loc.line == 0) return path;
  return fmt::format("{}:{}:{}", path, loc.line, loc.column);
}

std::string Graph::Where(const SourceLocation& loc) const { return FormatLocation(path, loc); }

}  // namespace tfrun
