#include "core/graph.h"

#include <fmt/format.h>

namespace tfrun {

std::string Graph::Where(const SourceLocation& loc) const {
  if (loc.line == 0) return path;
  return fmt::format("{}:{}:{}", path, loc.line, loc.column);
}

}  // namespace tfrun
