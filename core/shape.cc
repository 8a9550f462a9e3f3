#include "core/shape.h"

#include <fmt/format.h>

namespace tfrun {

std::optional<int64_t> NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

std::string ShapeDebugString(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::string ShapeTupleString(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace tfrun
