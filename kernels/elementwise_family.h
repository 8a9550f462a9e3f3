// The elementwise and reduction families, one table each for both
// backends: every op name TensorFlow gives a member, the function it
// computes, and the dtypes it takes. The CPU (kernels/cpu/math_kernels.cc,
// cpu_kernels.cc) and CUDA (kernels/cuda/training_kernels.cc) backends bind
// every row for exactly its dtypes (kernels/family_test.cc checks); a new op
// is a row here and its formula in each backend's switch, which the
// compiler checks covers every function. Plain C++ with no dependencies:
// nvcc compiles it into kernels/cuda/*.cu.
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

// Binary elementwise ops (cwise_op_*.cc, the activations' gradients), with
// TensorFlow's broadcasting; the gradients take (gradients, features) or
// (y, dy) as TensorFlow's kernels do.
enum class BinaryFn : uint8_t {
  kAdd, kSub, kMul, kRealDiv, kFloorDiv, kFloorMod, kMaximum, kMinimum, kSquaredDifference, kPow, kDivNoNan,
  kReluGrad, kSigmoidGrad, kTanhGrad, kRsqrtGrad, kSqrtGrad, kReciprocalGrad, kRelu6Grad, kEluGrad,
};

struct BinaryFamilyRow {
  const char* op;
  BinaryFn fn;
  UnaryTypes types;  // kNumbers or kFloats, as TensorFlow registers the op
};

inline constexpr BinaryFamilyRow kBinaryFamily[] = {
    {"Add", BinaryFn::kAdd, UnaryTypes::kNumbers},
    {"AddV2", BinaryFn::kAdd, UnaryTypes::kNumbers},  // Add without strings: what TF 2's `+` writes
    {"Sub", BinaryFn::kSub, UnaryTypes::kNumbers},
    {"Mul", BinaryFn::kMul, UnaryTypes::kNumbers},
    {"RealDiv", BinaryFn::kRealDiv, UnaryTypes::kFloats},
    {"Div", BinaryFn::kRealDiv, UnaryTypes::kFloats},
    {"FloorDiv", BinaryFn::kFloorDiv, UnaryTypes::kNumbers},
    {"FloorMod", BinaryFn::kFloorMod, UnaryTypes::kNumbers},
    {"Maximum", BinaryFn::kMaximum, UnaryTypes::kNumbers},
    {"Minimum", BinaryFn::kMinimum, UnaryTypes::kNumbers},
    {"SquaredDifference", BinaryFn::kSquaredDifference, UnaryTypes::kNumbers},
    {"Pow", BinaryFn::kPow, UnaryTypes::kFloats},
    {"DivNoNan", BinaryFn::kDivNoNan, UnaryTypes::kFloats},
    {"ReluGrad", BinaryFn::kReluGrad, UnaryTypes::kFloats},
    {"SigmoidGrad", BinaryFn::kSigmoidGrad, UnaryTypes::kFloats},
    {"TanhGrad", BinaryFn::kTanhGrad, UnaryTypes::kFloats},
    {"RsqrtGrad", BinaryFn::kRsqrtGrad, UnaryTypes::kFloats},
    {"SqrtGrad", BinaryFn::kSqrtGrad, UnaryTypes::kFloats},
    {"ReciprocalGrad", BinaryFn::kReciprocalGrad, UnaryTypes::kFloats},
    {"Relu6Grad", BinaryFn::kRelu6Grad, UnaryTypes::kFloats},
    {"EluGrad", BinaryFn::kEluGrad, UnaryTypes::kFloats},
};

constexpr bool BinaryFloatOnly(BinaryFn op) {
  for (const BinaryFamilyRow& row : kBinaryFamily) {
    if (row.fn == op) return row.types == UnaryTypes::kFloats;
  }
  return false;
}

// Comparisons: numbers in (Equal and NotEqual also bool and strings on the
// CPU), bool out.
enum class CompareFn : uint8_t { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual };

struct CompareFamilyRow {
  const char* op;
  CompareFn fn;
};

inline constexpr CompareFamilyRow kCompareFamily[] = {
    {"Less", CompareFn::kLess},   {"LessEqual", CompareFn::kLessEqual}, {"Greater", CompareFn::kGreater},
    {"GreaterEqual", CompareFn::kGreaterEqual}, {"Equal", CompareFn::kEqual}, {"NotEqual", CompareFn::kNotEqual},
};

// Reductions over axes (reduction_ops_*.cc): numbers, or bools for All/Any.
enum class ReduceFn : uint8_t { kSum, kMean, kProd, kMax, kMin, kAll, kAny };

struct ReduceFamilyRow {
  const char* op;
  ReduceFn fn;
  bool logical;  // All, Any: bool in and out; the rest numbers
};

inline constexpr ReduceFamilyRow kReduceFamily[] = {
    {"Sum", ReduceFn::kSum, false}, {"Mean", ReduceFn::kMean, false}, {"Prod", ReduceFn::kProd, false},
    {"Max", ReduceFn::kMax, false}, {"Min", ReduceFn::kMin, false},   {"All", ReduceFn::kAll, true},
    {"Any", ReduceFn::kAny, true},
};

}  // namespace tfrun
