// Where each element of the CUDA training kernels (training.cu) comes
// from: the index arithmetic of strided copies, Select, reductions,
// Gather, padding and max pooling, as functions of one output element.
// Compiled for the device by nvcc and for the host by the C++ compiler, so
// that training_layouts_test checks them on the host against plain loops
// (no GPU is needed to find an off-by-one here).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cuda/training.h"

#if defined(__CUDACC__)
#define TFRUN_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TFRUN_HOST_DEVICE inline
#endif

namespace tfrun {
namespace cuda {

// The input element StridedCopy reads for output element i.
TFRUN_HOST_DEVICE int64_t MapOffset(const IndexMap& map, int64_t i) {
  int64_t offset = map.base;
  for (int d = map.rank - 1; d >= 0; --d) {
    const int64_t coord = i % map.dims[d];
    i /= map.dims[d];
    offset += (coord % map.modulo[d]) * map.in_strides[d];
  }
  return offset;
}

// The condition, then and else elements of Select's output element i.
TFRUN_HOST_DEVICE void SelectOffsets(const Select3& layout, int64_t i, int64_t* offsets) {
  offsets[0] = offsets[1] = offsets[2] = 0;
  for (int d = layout.rank - 1; d >= 0; --d) {
    const int64_t coord = i % layout.dims[d];
    i /= layout.dims[d];
    for (int k = 0; k < 3; ++k) offsets[k] += coord * layout.strides[k][d];
  }
}

// Element i of a row-major index space of `rank` `dims`, placed by
// `strides`.
TFRUN_HOST_DEVICE int64_t StridedOffset(int rank, const int64_t* dims, const int64_t* strides, int64_t i) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return offset;
}

// A reduction's first input element for output element o, and the offset
// of its r-th reduced element from there.
TFRUN_HOST_DEVICE int64_t KeptOffset(const ReduceLayout& l, int64_t o) {
  return StridedOffset(l.kept_rank, l.kept_dims, l.kept_strides, o);
}
TFRUN_HOST_DEVICE int64_t ReducedOffset(const ReduceLayout& l, int64_t r) {
  return StridedOffset(l.reduced_rank, l.reduced_dims, l.reduced_strides, r);
}

// GatherV2's params element for output element i (params [outer, limit,
// inner]), or -1 for an index out of range (the output is 0 there).
template <typename Index>
TFRUN_HOST_DEVICE int64_t GatherSource(const Index* indices, int64_t limit, int64_t inner, int64_t count, int64_t i) {
  const int64_t k = i % inner;
  const int64_t j = (i / inner) % count;
  const int64_t o = i / (inner * count);
  const int64_t index = static_cast<int64_t>(indices[j]);
  return index >= 0 && index < limit ? (o * limit + index) * inner + k : -1;
}

// PadImages' input element for output element i, or -1 in the padding.
TFRUN_HOST_DEVICE int64_t PadSource(int64_t rows, int64_t cols, int64_t depth, int64_t out_rows, int64_t out_cols,
                                    int64_t top, int64_t left, int64_t i) {
  const int64_t k = i % depth;
  const int64_t x = (i / depth) % out_cols - left;
  const int64_t y = (i / (depth * out_cols)) % out_rows - top;
  const int64_t b = i / (depth * out_cols * out_rows);
  return y >= 0 && y < rows && x >= 0 && x < cols ? ((b * rows + y) * cols + x) * depth + k : -1;
}

// The input index of output element i's window's first maximum (rows
// then columns; a strictly greater value replaces; a NaN wins, as in
// TensorFlow's GPU kernels), or -1 for a window that is all padding.
template <typename T>
TFRUN_HOST_DEVICE int64_t PoolArgMax(const T* in, const PoolParams& p, int64_t i) {
  const int64_t k = i % p.depth;
  const int64_t q = (i / p.depth) % p.out_cols;
  const int64_t r = (i / (p.depth * p.out_cols)) % p.out_rows;
  const int64_t b = i / (p.depth * p.out_cols * p.out_rows);
  const int64_t rs = r * p.stride_rows - p.pad_top, qs = q * p.stride_cols - p.pad_left;
  const int64_t r0 = rs > 0 ? rs : 0;
  const int64_t r1 = rs + p.window_rows < p.in_rows ? rs + p.window_rows : p.in_rows;
  const int64_t q0 = qs > 0 ? qs : 0;
  const int64_t q1 = qs + p.window_cols < p.in_cols ? qs + p.window_cols : p.in_cols;
  int64_t best = -1;
  T max = 0;
  for (int64_t y = r0; y < r1; ++y) {
    for (int64_t x = q0; x < q1; ++x) {
      const int64_t at = ((b * p.in_rows + y) * p.in_cols + x) * p.depth + k;
      const T v = in[at];
      if (v != v) return at;  // NaN
      if (best < 0 || v > max) {
        max = v;
        best = at;
      }
    }
  }
  return best;
}

// One element of an optimizer's update (training_ops_gpu.cu.cc), in place:
// `s` the op's scalar inputs in its order, `flag` use_nesterov or
// update_slots.
template <UpdateOp Op, typename T>
TFRUN_HOST_DEVICE void UpdateElement(T* var, T* slot1, T* slot2, const T* s, T g, bool flag, int64_t i) {
  using std::sqrt;
  const T one = 1;
  if constexpr (Op == UpdateOp::kGradientDescent) {
    var[i] -= s[0] * g;
  } else if constexpr (Op == UpdateOp::kMomentum) {
    const T lr = s[0], momentum = s[1];
    slot1[i] = slot1[i] * momentum + g;
    var[i] -= flag ? g * lr + slot1[i] * momentum * lr : slot1[i] * lr;
  } else if constexpr (Op == UpdateOp::kAdam) {
    const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4], epsilon = s[5];
    const T alpha = lr * sqrt(one - beta2_power) / (one - beta1_power);
    slot1[i] += (g - slot1[i]) * (one - beta1);
    slot2[i] += (g * g - slot2[i]) * (one - beta2);
    const T m = flag ? g * (one - beta1) + slot1[i] * beta1 : slot1[i];
    var[i] -= (m * alpha) / (sqrt(slot2[i]) + epsilon);
  } else if constexpr (Op == UpdateOp::kAdagrad) {
    if (flag) slot1[i] += g * g;
    var[i] -= g * s[0] * (one / sqrt(slot1[i]));
  } else {  // RMSProp
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    slot1[i] += (g * g - slot1[i]) * (one - rho);
    slot2[i] = slot2[i] * momentum + (g * lr) / sqrt(slot1[i] + epsilon);
    var[i] -= slot2[i];
  }
}

// How many scalar inputs an update reads, and how many slots it has.
TFRUN_HOST_DEVICE int UpdateScalars(UpdateOp op) {
  switch (op) {
    case UpdateOp::kGradientDescent: return 1;
    case UpdateOp::kMomentum: return 2;
    case UpdateOp::kAdam: return 6;
    case UpdateOp::kAdagrad: return 1;
    case UpdateOp::kRMSProp: return 4;
  }
  return 0;
}
TFRUN_HOST_DEVICE int UpdateSlots(UpdateOp op) {
  switch (op) {
    case UpdateOp::kGradientDescent: return 0;
    case UpdateOp::kMomentum:
    case UpdateOp::kAdagrad: return 1;
    case UpdateOp::kAdam:
    case UpdateOp::kRMSProp: return 2;
  }
  return 0;
}

}  // namespace cuda
}  // namespace tfrun
