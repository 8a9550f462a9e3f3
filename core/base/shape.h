// Tensor shapes: dimension lists with overflow-checked sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tfrun {

inline constexpr int kMaxRank = 8;

// A dimension the graph does not know before a run (TensorFlow's `?`,
// Python's None): only in nodes' shapes, never in a tensor's.
inline constexpr int64_t kUnknownDim = -1;

using Shape = std::vector<int64_t>;

// Element count, or nullopt when it overflows int64.
std::optional<int64_t> NumElements(const Shape& shape);

// "[2,3]", "[?,3]": TensorFlow's (Partial)TensorShape::DebugString, used in
// its error texts; "<unknown>" without a rank.
std::string ShapeDebugString(const Shape& shape, bool unknown_rank = false);

// "(2, 3)", "(2,)", "()": Python's tuple, as tf.TensorShape prints, unknown
// dimensions as `unknown_dim` ("None" in TF 2, "?" in TF 1); "<unknown>"
// without a rank.
std::string ShapeTupleString(const Shape& shape, bool unknown_rank = false, std::string_view unknown_dim = "None");

bool IsFullyDefined(const Shape& shape);

// Whether a tensor of `concrete` shape may stand where `partial` is
// expected (TensorShape.is_compatible_with).
bool IsCompatible(const Shape& partial, bool unknown_rank, const Shape& concrete);

}  // namespace tfrun
