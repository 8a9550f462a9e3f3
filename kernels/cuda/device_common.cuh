// What the CUDA kernel files share (elementwise.cu, training.cu): launch
// shapes, the grid-stride loop, half and bfloat16 computed in float, and
// the dispatch from ElementType to a C++ type. Device code only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/elementwise.h"

namespace tfrun {
namespace cuda {

constexpr int kThreads = 256;  // per block

// Blocks for n elements, at most 65535 (the kernels loop over the rest).
inline dim3 GridFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535));
}

// Grid-stride loop over [0, n).
#define TFRUN_FOR_EACH(i, n)                                                                 \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// half and bfloat16 compute in float and round per result; the rest as
// themselves.
template <typename T> struct Wide { using type = T; };
template <> struct Wide<__half> { using type = float; };
template <> struct Wide<__nv_bfloat16> { using type = float; };

template <typename T>
__device__ __forceinline__ typename Wide<T>::type Up(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

template <typename T>
__device__ __forceinline__ T Down(typename Wide<T>::type v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// fn(static_cast<T*>(nullptr)) for the element type's T: the numeric types
// (bool has no arithmetic here; DispatchWithBool adds it).
template <typename Fn>
int DispatchNumber(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::kFloat32: return fn(static_cast<float*>(nullptr));
    case ElementType::kFloat64: return fn(static_cast<double*>(nullptr));
    case ElementType::kFloat16: return fn(static_cast<__half*>(nullptr));
    case ElementType::kBFloat16: return fn(static_cast<__nv_bfloat16*>(nullptr));
    case ElementType::kInt32: return fn(static_cast<int32_t*>(nullptr));
    case ElementType::kInt64: return fn(static_cast<int64_t*>(nullptr));
    case ElementType::kBool: break;
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

// Binary's operand elements for output element i: element i, element 0
// of a scalar operand, or through `bc`'s strides (rank > 0).
__device__ __forceinline__ void BinaryOffsets(const Broadcast& bc, bool x_scalar, bool y_scalar, int64_t i,
                                              int64_t* xi, int64_t* yi) {
  *xi = x_scalar ? 0 : i;
  *yi = y_scalar ? 0 : i;
  if (bc.rank == 0) return;
  *xi = 0;
  *yi = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {  // the output coordinates of i, innermost first
    const int64_t coord = i % bc.dims[d];
    i /= bc.dims[d];
    *xi += coord * bc.x_strides[d];
    *yi += coord * bc.y_strides[d];
  }
}

template <typename Fn>
int DispatchWithBool(ElementType type, Fn&& fn) {
  if (type == ElementType::kBool) return fn(static_cast<bool*>(nullptr));
  return DispatchNumber(type, fn);
}

}  // namespace cuda
}  // namespace tfrun
