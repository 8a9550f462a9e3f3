// The unary elementwise family, one table for both backends: every op
// name TensorFlow gives it, the function it computes, and the dtypes it
// takes. The CPU (kernels/cpu/math_kernels.cc) and CUDA
// (kernels/cuda/training_kernels.cc) backends bind every row; a new op is
// a row here and its formula in each backend's switch. Plain C++ with no
// dependencies: nvcc compiles it into kernels/cuda/training.cu.
#pragma once

#include <cstdint>

namespace tfrun {

enum class UnaryOp : uint8_t {
  kNeg, kSquare, kSqrt, kRsqrt, kExp, kLog, kLog1p, kSigmoid, kTanh, kAbs, kSign, kReciprocal, kRelu6, kSoftplus,
  kFloor, kCeil, kRound, kElu, kLeakyRelu,
  kCount  // not an op: how many there are
};

// What TensorFlow registers the op's kernels for (cwise_op_*.cc,
// relu_op.cc): every number (float16, bfloat16, float32, float64, int32,
// int64), or its floating types only.
enum class UnaryTypes : uint8_t { kNumbers, kFloats };

struct UnaryFamilyRow {
  const char* op;  // TensorFlow's op name
  UnaryOp fn;
  UnaryTypes types;
};

inline constexpr UnaryFamilyRow kUnaryFamily[] = {
    {"Neg", UnaryOp::kNeg, UnaryTypes::kNumbers},
    {"Square", UnaryOp::kSquare, UnaryTypes::kNumbers},
    {"Abs", UnaryOp::kAbs, UnaryTypes::kNumbers},
    {"Sign", UnaryOp::kSign, UnaryTypes::kNumbers},
    {"Relu6", UnaryOp::kRelu6, UnaryTypes::kNumbers},
    {"Round", UnaryOp::kRound, UnaryTypes::kNumbers},  // half to even; integers unchanged
    {"Sqrt", UnaryOp::kSqrt, UnaryTypes::kFloats},
    {"Rsqrt", UnaryOp::kRsqrt, UnaryTypes::kFloats},
    {"Exp", UnaryOp::kExp, UnaryTypes::kFloats},
    {"Log", UnaryOp::kLog, UnaryTypes::kFloats},
    {"Log1p", UnaryOp::kLog1p, UnaryTypes::kFloats},
    {"Sigmoid", UnaryOp::kSigmoid, UnaryTypes::kFloats},
    {"Tanh", UnaryOp::kTanh, UnaryTypes::kFloats},
    {"Reciprocal", UnaryOp::kReciprocal, UnaryTypes::kFloats},
    {"Inv", UnaryOp::kReciprocal, UnaryTypes::kFloats},
    {"Softplus", UnaryOp::kSoftplus, UnaryTypes::kFloats},
    {"Floor", UnaryOp::kFloor, UnaryTypes::kFloats},
    {"Ceil", UnaryOp::kCeil, UnaryTypes::kFloats},
    {"Elu", UnaryOp::kElu, UnaryTypes::kFloats},
    {"LeakyRelu", UnaryOp::kLeakyRelu, UnaryTypes::kFloats},  // attr alpha (0.2)
};

// Whether `op` is only defined for floating types (its integer
// instantiations are never bound).
constexpr bool UnaryFloatOnly(UnaryOp op) {
  for (const UnaryFamilyRow& row : kUnaryFamily) {
    if (row.fn == op) return row.types == UnaryTypes::kFloats;
  }
  return false;
}

}  // namespace tfrun
