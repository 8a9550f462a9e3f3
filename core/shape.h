// Tensor shapes: dimension lists with overflow-checked sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfrun {

inline constexpr int kMaxRank = 8;

using Shape = std::vector<int64_t>;

// Element count, or nullopt when it overflows int64.
std::optional<int64_t> NumElements(const Shape& shape);

// "[2,3]": TensorFlow's TensorShape::DebugString, used in its error texts.
std::string ShapeDebugString(const Shape& shape);

// "(2, 3)", "(2,)", "()": Python's tuple, as tf.TensorShape prints.
std::string ShapeTupleString(const Shape& shape);

}  // namespace tfrun
