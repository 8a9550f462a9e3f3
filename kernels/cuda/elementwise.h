// CUDA elementwise kernels: AddN over any number of inputs in one pass,
// the binary ops (BinaryOp) with NumPy-style broadcasting, BiasAdd and Relu. Plain C++ interface so
// callers need no CUDA headers; pointers are device pointers, `stream` a
// cudaStream_t. Each returns the cudaError_t of its launch (0 = success).
#pragma once

#include <cstdint>

#include "kernels/elementwise_family.h"

namespace tfrun {
namespace cuda {

enum class ElementType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool };

// The binary family's functions (kernels/elementwise_family.h); those its
// table marks float-only give cudaErrorInvalidValue for integers.
using BinaryOp = ::tfrun::BinaryFn;

// out[i] = in[0][i] + in[1][i] + ... left to right, each sum rounded to the
// element type (as TensorFlow's AddN). `inputs` is a host array of
// `num_inputs` device pointers.
int AddN(ElementType type, const void* const* inputs, int num_inputs, int64_t n, void* out, void* stream);

// NumPy-style broadcasting: over the output's dimensions (at most
// kMaxBroadcastRank), each operand's element step along each, 0 where it
// stretches. rank 0: none (see Binary).
constexpr int kMaxBroadcastRank = 8;
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t x_strides[kMaxBroadcastRank] = {};
  int64_t y_strides[kMaxBroadcastRank] = {};
};

// out = x op y; x_scalar / y_scalar broadcast element 0 of that operand;
// a `broadcast` of rank > 0 maps every output element to its operands'.
int Binary(ElementType type, BinaryOp op, const void* x, bool x_scalar, const void* y, bool y_scalar,
           const Broadcast& broadcast, int64_t n, void* out, void* stream);

// out[i] = value[i] + bias[i % channels] (NHWC BiasAdd: `channels` is the
// value's last dimension, `n` its element count).
int BiasAdd(ElementType type, const void* value, const void* bias, int64_t n, int64_t channels, void* out,
            void* stream);

// out[i] = max(in[i], 0), NaN kept.
int Relu(ElementType type, const void* in, int64_t n, void* out, void* stream);

// out[i] = in[i] converted as Eigen's cast does on a GPU (static_cast;
// half and bfloat16 through float, rounded to nearest; to bool: != 0).
// The only kernel that takes kBool.
int Cast(ElementType from, ElementType to, const void* in, int64_t n, void* out, void* stream);

}  // namespace cuda
}  // namespace tfrun
