#include "core/base/shape.h"

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

namespace {

std::vector<std::string> DimTexts(const Shape& shape, std::string_view unknown) {
  std::vector<std::string> dims;
  dims.reserve(shape.size());
  for (int64_t d : shape) dims.push_back(d == kUnknownDim ? std::string(unknown) : std::to_string(d));
  return dims;
}

}  // namespace

std::string ShapeDebugString(const Shape& shape, bool unknown_rank) {
  if (unknown_rank) return "<unknown>";
  return fmt::format("[{}]", fmt::join(DimTexts(shape, "?"), ","));
}

std::string ShapeTupleString(const Shape& shape, bool unknown_rank, std::string_view unknown_dim) {
  if (unknown_rank) return "<unknown>";
  const std::vector<std::string> dims = DimTexts(shape, unknown_dim);
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

bool IsFullyDefined(const Shape& shape) {
  for (int64_t d : shape) {
    if (d == kUnknownDim) return false;
  }
  return true;
}

bool IsCompatible(const Shape& partial, bool unknown_rank, const Shape& concrete) {
  if (unknown_rank) return true;
  if (partial.size() != concrete.size()) return false;
  for (size_t i = 0; i < partial.size(); ++i) {
    if (partial[i] != kUnknownDim && partial[i] != concrete[i]) return false;
  }
  return true;
}

}  // namespace tfrun
