#include "kernels/cuda/elementwise.h"

#include "kernels/cuda/device_common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

namespace tfrun {
namespace cuda {
namespace {

// The input pointers travel in the kernel's parameter block, in one of
// three sizes so that a small AddN does not ship 32 KB of parameters: up to
// 4000 inputs are one pass (CUDA 12.1+ allows 32764 bytes of parameters on
// sm_70 and later, and this file is built for sm_80/sm_90). Beyond that,
// passes of 4000 add onto the running result.
constexpr int kSmallPass = 16;
constexpr int kMediumPass = 256;
constexpr int kMaxInputsPerPass = 4000;

template <typename T, int kCapacity>
struct InputPointers {
  const T* p[kCapacity];
};

// Arithmetic type: half and bfloat16 compute in float and round per step,
// integers wrap as two's complement.
template <typename T> struct Compute { using type = T; };
template <> struct Compute<__half> { using type = float; };
template <> struct Compute<__nv_bfloat16> { using type = float; };
template <> struct Compute<int32_t> { using type = uint32_t; };
template <> struct Compute<int64_t> { using type = uint64_t; };

template <typename T>
__device__ typename Compute<T>::type Load(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(p[i]);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(p[i]);
  } else {
    return static_cast<typename Compute<T>::type>(p[i]);
  }
}


template <typename T, int kCapacity>
__global__ void AddNKernel(const __grid_constant__ InputPointers<T, kCapacity> in, int count, bool accumulate,
                           int64_t n, T* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    T acc = accumulate ? out[i] : in.p[0][i];
    for (int k = accumulate ? 0 : 1; k < count; ++k) acc = Down<T>(Load(&acc, 0) + Load(in.p[k], i));
    out[i] = acc;
  }
}

// The ops beyond Add/Sub/Mul, as cwise_ops.h defines them.
template <BinaryOp Op, typename W>
__device__ W ApplyBinary(W x, W y) {
  if constexpr (Op == BinaryOp::kMaximum) return x < y ? y : x;
  if constexpr (Op == BinaryOp::kMinimum) return y < x ? y : x;
  if constexpr (Op == BinaryOp::kSquaredDifference) return (x - y) * (x - y);
  if constexpr (std::is_integral_v<W>) {
    // floor_div/floor_mod (cwise_ops.h) for integers: toward minus
    // infinity. A zero divisor gives 0 (TensorFlow's GPU kernel does not
    // check; its CPU kernel, and tfrun's, fail).
    if constexpr (Op == BinaryOp::kFloorDiv) {
      if (y == W(0)) return W(0);
      const W q = x / y;
      return (x % y != W(0) && ((x < W(0)) != (y < W(0)))) ? q - W(1) : q;
    }
    if constexpr (Op == BinaryOp::kFloorMod) {
      if (y == W(0)) return W(0);
      const W r = x % y;
      return r != W(0) && ((r < W(0)) != (y < W(0))) ? r + y : r;
    }
  }
  if constexpr (std::is_floating_point_v<W>) {
    if constexpr (Op == BinaryOp::kRealDiv) return x / y;
    if constexpr (Op == BinaryOp::kPow) return pow(x, y);
    if constexpr (Op == BinaryOp::kFloorDiv) return floor(x / y);
    if constexpr (Op == BinaryOp::kFloorMod) {
      const W r = fmod(x, y);
      return r != W(0) && ((r < W(0)) != (y < W(0))) ? r + y : r;
    }
    if constexpr (Op == BinaryOp::kReluGrad) return x * W(y > W(0) ? 1 : 0);  // -0 as TensorFlow: g * (f > 0)
    if constexpr (Op == BinaryOp::kSigmoidGrad) return y * x * (W(1) - x);
    if constexpr (Op == BinaryOp::kTanhGrad) return y * (W(1) - x * x);
    // cwise_ops_gradients.h's grouping, as on the CPU (math_kernels.cc).
    if constexpr (Op == BinaryOp::kRsqrtGrad) return y == W(0) ? W(0) : W(-0.5) * (y * x) * (x * x);
    if constexpr (Op == BinaryOp::kSqrtGrad) return (W(0.5) / x) * y;
    if constexpr (Op == BinaryOp::kReciprocalGrad) return y == W(0) ? W(0) : -(x * x) * y;
    if constexpr (Op == BinaryOp::kDivNoNan) return y == W(0) ? W(0) : x / y;
    // relu_op_functor.h: g * ((f > 0) * (f < 6)); elu_op.h: a < 0 ? (a + 1) * g : g.
    if constexpr (Op == BinaryOp::kRelu6Grad) return x * W(y > W(0) && y < W(6) ? 1 : 0);
    if constexpr (Op == BinaryOp::kEluGrad) return y < W(0) ? (y + W(1)) * x : x;
  }
  return x;
}

template <BinaryOp Op>
constexpr bool kBinaryFloatOnly = BinaryFloatOnly(Op);

template <typename T, BinaryOp Op>
__global__ void BinaryKernel(const T* x, bool xs, const T* y, bool ys, const Broadcast bc, int64_t n, T* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t xi, yi;
    BinaryOffsets(bc, xs, ys, i, &xi, &yi);
    if constexpr (Op == BinaryOp::kAdd || Op == BinaryOp::kSub || Op == BinaryOp::kMul) {
      auto a = Load(x, xi);  // integers wrap
      auto b = Load(y, yi);
      if constexpr (Op == BinaryOp::kAdd) out[i] = Down<T>(a + b);
      if constexpr (Op == BinaryOp::kSub) out[i] = Down<T>(a - b);
      if constexpr (Op == BinaryOp::kMul) out[i] = Down<T>(a * b);
    } else {
      out[i] = Down<T>(ApplyBinary<Op>(Up(x[xi]), Up(y[yi])));
    }
  }
}

// value[r, c] + bias[c] for r < rows, c < channels (NHWC: bias along the
// last dimension), rounded to T as TensorFlow's BiasAdd.
template <typename T>
__global__ void BiasAddKernel(const T* value, const T* bias, int64_t n, int64_t channels, T* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = Down<T>(Load(value, i) + Load(bias, i % channels));
  }
}

// max(x, 0); NaN stays NaN (Eigen's cwiseMax on GPUs propagates it as
// TensorFlow's Relu does: x < 0 is false for NaN).
template <typename T>
__global__ void ReluKernel(const T* in, int64_t n, T* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // Integers compare as themselves (Load widens them to unsigned for wrapping sums).
    bool negative;
    if constexpr (std::is_integral_v<T>) {
      negative = in[i] < T(0);
    } else {
      negative = Load(in, i) < 0;
    }
    out[i] = negative ? Down<T>(0) : in[i];
  }
}


template <typename T, int kCapacity>
void LaunchAddN(const void* const* inputs, int count, bool accumulate, int64_t n, T* out, cudaStream_t stream) {
  InputPointers<T, kCapacity> ptrs{};
  for (int k = 0; k < count; ++k) ptrs.p[k] = static_cast<const T*>(inputs[k]);
  AddNKernel<T, kCapacity><<<GridFor(n), kThreads, 0, stream>>>(ptrs, count, accumulate, n, out);
}

template <typename T>
int AddNTyped(const void* const* inputs, int num_inputs, int64_t n, void* out, cudaStream_t stream) {
  T* o = static_cast<T*>(out);
  for (int start = 0; start < num_inputs; start += kMaxInputsPerPass) {
    const int count = num_inputs - start < kMaxInputsPerPass ? num_inputs - start : kMaxInputsPerPass;
    if (count <= kSmallPass) {
      LaunchAddN<T, kSmallPass>(inputs + start, count, start > 0, n, o, stream);
    } else if (count <= kMediumPass) {
      LaunchAddN<T, kMediumPass>(inputs + start, count, start > 0, n, o, stream);
    } else {
      LaunchAddN<T, kMaxInputsPerPass>(inputs + start, count, start > 0, n, o, stream);
    }
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return static_cast<int>(e);
  }
  return 0;
}

template <typename T>
int BinaryTyped(BinaryOp op, const void* x, bool xs, const void* y, bool ys, const Broadcast& bc, int64_t n,
                void* out, cudaStream_t stream) {
  const T* a = static_cast<const T*>(x);
  const T* b = static_cast<const T*>(y);
  T* o = static_cast<T*>(out);
  switch (op) {
#define TFRUN_BINARY_CASE(OP)                                                               \
  case BinaryOp::OP:                                                                        \
    if constexpr (kBinaryFloatOnly<BinaryOp::OP> && !kIsFloat<T>) {                         \
      return static_cast<int>(cudaErrorInvalidValue);                                       \
    } else {                                                                                \
      BinaryKernel<T, BinaryOp::OP><<<GridFor(n), kThreads, 0, stream>>>(a, xs, b, ys, bc, n, o); \
    }                                                                                       \
    break;
    TFRUN_BINARY_CASE(kAdd)
    TFRUN_BINARY_CASE(kSub)
    TFRUN_BINARY_CASE(kMul)
    TFRUN_BINARY_CASE(kRealDiv)
    TFRUN_BINARY_CASE(kPow)
    TFRUN_BINARY_CASE(kFloorDiv)
    TFRUN_BINARY_CASE(kFloorMod)
    TFRUN_BINARY_CASE(kMaximum)
    TFRUN_BINARY_CASE(kMinimum)
    TFRUN_BINARY_CASE(kSquaredDifference)
    TFRUN_BINARY_CASE(kReluGrad)
    TFRUN_BINARY_CASE(kSigmoidGrad)
    TFRUN_BINARY_CASE(kTanhGrad)
    TFRUN_BINARY_CASE(kRsqrtGrad)
    TFRUN_BINARY_CASE(kSqrtGrad)
    TFRUN_BINARY_CASE(kReciprocalGrad)
    TFRUN_BINARY_CASE(kDivNoNan)
    TFRUN_BINARY_CASE(kRelu6Grad)
    TFRUN_BINARY_CASE(kEluGrad)
#undef TFRUN_BINARY_CASE
  }
  return static_cast<int>(cudaGetLastError());
}

// A value widened to a type static_cast converts from exactly: half and
// bfloat16 to float, bool to int.
template <typename T>
__device__ auto Widen(T x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else if constexpr (std::is_same_v<T, bool>) {
    return static_cast<int>(x);
  } else {
    return x;
  }
}

template <typename To, typename From>
__device__ To Convert(From x) {
  const auto wide = Widen(x);
  if constexpr (std::is_same_v<To, bool>) {
    return wide != 0;
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(wide));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(wide));
  } else {
    return static_cast<To>(wide);
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* in, int64_t n, To* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = Convert<To>(in[i]);
  }
}

}  // namespace

int AddN(ElementType type, const void* const* inputs, int num_inputs, int64_t n, void* out, void* stream) {
  if (n == 0) return 0;
  return DispatchNumber(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return AddNTyped<T>(inputs, num_inputs, n, out, static_cast<cudaStream_t>(stream));
  });
}

int Binary(ElementType type, BinaryOp op, const void* x, bool x_scalar, const void* y, bool y_scalar,
           const Broadcast& broadcast, int64_t n, void* out, void* stream) {
  if (n == 0) return 0;
  if (broadcast.rank < 0 || broadcast.rank > kMaxBroadcastRank) return static_cast<int>(cudaErrorInvalidValue);
  return DispatchNumber(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return BinaryTyped<T>(op, x, x_scalar, y, y_scalar, broadcast, n, out, static_cast<cudaStream_t>(stream));
  });
}

int BiasAdd(ElementType type, const void* value, const void* bias, int64_t n, int64_t channels, void* out,
            void* stream) {
  if (n == 0 || channels == 0) return 0;
  return DispatchNumber(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    BiasAddKernel<T><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(value), static_cast<const T*>(bias), n, channels, static_cast<T*>(out));
    return static_cast<int>(cudaGetLastError());
  });
}

int Relu(ElementType type, const void* in, int64_t n, void* out, void* stream) {
  if (n == 0) return 0;
  return DispatchNumber(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ReluKernel<T><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const T*>(in), n,
                                                                             static_cast<T*>(out));
    return static_cast<int>(cudaGetLastError());
  });
}

int Cast(ElementType from, ElementType to, const void* in, int64_t n, void* out, void* stream) {
  if (n == 0) return 0;
  return DispatchWithBool(from, [&](auto* from_tag) {
    using From = std::remove_pointer_t<decltype(from_tag)>;
    return DispatchWithBool(to, [&](auto* to_tag) {
      using To = std::remove_pointer_t<decltype(to_tag)>;
      CastKernel<From, To><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const From*>(in),
                                                                                     n, static_cast<To*>(out));
      return static_cast<int>(cudaGetLastError());
    });
  });
}

}  // namespace cuda
}  // namespace tfrun
