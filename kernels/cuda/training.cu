#include "kernels/cuda/training.h"

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/training_index.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace tfrun {
namespace cuda {
namespace {

int LastError() { return static_cast<int>(cudaGetLastError()); }

template <typename Fn>
int DispatchFloat(ElementType type, Fn&& fn) {
  switch (type) {
    case ElementType::kFloat32: return fn(static_cast<float*>(nullptr));
    case ElementType::kFloat64: return fn(static_cast<double*>(nullptr));
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

// Bytes moved as one unsigned integer of their size.
template <typename Fn>
int DispatchBytes(int element_bytes, Fn&& fn) {
  switch (element_bytes) {
    case 1: return fn(static_cast<uint8_t*>(nullptr));
    case 2: return fn(static_cast<uint16_t*>(nullptr));
    case 4: return fn(static_cast<uint32_t*>(nullptr));
    case 8: return fn(static_cast<uint64_t*>(nullptr));
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

// ---- Unary ----

template <UnaryOp Op, typename W>
__device__ __forceinline__ W ApplyUnary(W x, float alpha) {
  if constexpr (Op == UnaryOp::kNeg) return -x;
  if constexpr (Op == UnaryOp::kSquare) return x * x;
  if constexpr (Op == UnaryOp::kAbs) return x < W(0) ? -x : x;
  if constexpr (Op == UnaryOp::kSign) return x > W(0) ? W(1) : x < W(0) ? W(-1) : x;  // NaN and 0 kept
  if constexpr (Op == UnaryOp::kRelu6) return x < W(0) ? W(0) : x > W(6) ? W(6) : x;
  if constexpr (std::is_floating_point_v<W>) {
    if constexpr (Op == UnaryOp::kSqrt) return sqrt(x);
    if constexpr (Op == UnaryOp::kRsqrt) return W(1) / sqrt(x);
    if constexpr (Op == UnaryOp::kExp) return exp(x);
    if constexpr (Op == UnaryOp::kLog) return log(x);
    if constexpr (Op == UnaryOp::kLog1p) return log1p(x);
    if constexpr (Op == UnaryOp::kSigmoid) return W(1) / (W(1) + exp(-x));
    if constexpr (Op == UnaryOp::kTanh) return tanh(x);
    if constexpr (Op == UnaryOp::kReciprocal) return W(1) / x;
    if constexpr (Op == UnaryOp::kSoftplus) {
      // softplus_op.h: above -log(eps)+2 it is x, below log(eps)+2 exp(x).
      const W threshold = W(log(static_cast<double>(FLT_EPSILON)) + 2);
      return x > -threshold ? x : x < threshold ? exp(x) : log1p(exp(x));
    }
    if constexpr (Op == UnaryOp::kFloor) return floor(x);
    if constexpr (Op == UnaryOp::kCeil) return ceil(x);
    if constexpr (Op == UnaryOp::kRound) return rint(x);  // half to even
    if constexpr (Op == UnaryOp::kElu) return x < W(0) ? exp(x) - W(1) : x;  // elu_op.h: exp - 1, not expm1
    if constexpr (Op == UnaryOp::kLeakyRelu) return x > W(0) ? x : x * W(alpha);
  }
  if constexpr (Op == UnaryOp::kRound) return W(0);  // an integer's: TensorFlow's CPU kernel gives 0 (measured)
  return x;
}

template <typename T, UnaryOp Op>
__global__ void UnaryKernel(const T* in, int64_t n, T* out, float alpha) {
  TFRUN_FOR_EACH(i, n) { out[i] = Down<T>(ApplyUnary<Op>(Up(in[i]), alpha)); }
}

template <typename T, UnaryOp Op>
int LaunchUnary(const void* in, int64_t n, void* out, cudaStream_t stream, float alpha) {
  if constexpr (UnaryFloatOnly(Op) && !kIsFloat<T>) {
    return static_cast<int>(cudaErrorInvalidValue);
  } else {
    UnaryKernel<T, Op><<<GridFor(n), kThreads, 0, stream>>>(static_cast<const T*>(in), n, static_cast<T*>(out), alpha);
    return LastError();
  }
}

// Each op's launcher for T, indexed by UnaryOp.
template <typename T, size_t... I>
int UnaryTyped(UnaryOp op, const void* in, int64_t n, void* out, cudaStream_t s, float alpha,
               std::index_sequence<I...>) {
  using Launch = int (*)(const void*, int64_t, void*, cudaStream_t, float);
  static constexpr Launch kLaunch[] = {&LaunchUnary<T, static_cast<UnaryOp>(I)>...};
  const size_t index = static_cast<size_t>(op);
  return index < sizeof...(I) ? kLaunch[index](in, n, out, s, alpha) : static_cast<int>(cudaErrorInvalidValue);
}

// ---- Fill ----

template <typename T>
__global__ void FillKernel(T value, int64_t n, T* out) {
  TFRUN_FOR_EACH(i, n) { out[i] = value; }
}

template <typename T>
T HostValue(double v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __double2half(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    // An infinite identity (Max, Min over nothing) is the type's limit.
    if (!(v > static_cast<double>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
    if (!(v < static_cast<double>(std::numeric_limits<T>::max()))) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
int LaunchFill(double value, int64_t n, void* out, cudaStream_t stream) {
  FillKernel<T><<<GridFor(n), kThreads, 0, stream>>>(HostValue<T>(value), n, static_cast<T*>(out));
  return LastError();
}

// ---- Compare ----

template <CompareOp Op, typename W>
__device__ __forceinline__ bool ApplyCompare(W x, W y) {
  if constexpr (Op == CompareOp::kLess) return x < y;
  if constexpr (Op == CompareOp::kLessEqual) return x <= y;
  if constexpr (Op == CompareOp::kGreater) return x > y;
  if constexpr (Op == CompareOp::kGreaterEqual) return x >= y;
  if constexpr (Op == CompareOp::kEqual) return x == y;
  return x != y;
}

template <typename T, CompareOp Op>
__global__ void CompareKernel(const T* x, bool xs, const T* y, bool ys, const Broadcast bc, int64_t n, bool* out) {
  TFRUN_FOR_EACH(i, n) {
    int64_t xi, yi;
    BinaryOffsets(bc, xs, ys, i, &xi, &yi);
    out[i] = ApplyCompare<Op>(Up(x[xi]), Up(y[yi]));
  }
}

template <typename T>
int CompareTyped(CompareOp op, const void* x, bool xs, const void* y, bool ys, const Broadcast& bc, int64_t n,
                 bool* out, cudaStream_t s) {
  const T* a = static_cast<const T*>(x);
  const T* b = static_cast<const T*>(y);
  switch (op) {
    case CompareOp::kLess: CompareKernel<T, CompareOp::kLess><<<GridFor(n), kThreads, 0, s>>>(a, xs, b, ys, bc, n, out); break;
    case CompareOp::kLessEqual: CompareKernel<T, CompareOp::kLessEqual><<<GridFor(n), kThreads, 0, s>>>(a, xs, b, ys, bc, n, out); break;
    case CompareOp::kGreater: CompareKernel<T, CompareOp::kGreater><<<GridFor(n), kThreads, 0, s>>>(a, xs, b, ys, bc, n, out); break;
    case CompareOp::kGreaterEqual: CompareKernel<T, CompareOp::kGreaterEqual><<<GridFor(n), kThreads, 0, s>>>(a, xs, b, ys, bc, n, out); break;
    case CompareOp::kEqual: CompareKernel<T, CompareOp::kEqual><<<GridFor(n), kThreads, 0, s>>>(a, xs, b, ys, bc, n, out); break;
    case CompareOp::kNotEqual: CompareKernel<T, CompareOp::kNotEqual><<<GridFor(n), kThreads, 0, s>>>(a, xs, b, ys, bc, n, out); break;
  }
  return LastError();
}

// ---- Select, strided copies, gather, padding ----

template <typename U>
__global__ void SelectKernel(const bool* cond, const U* t, const U* e, const Select3 layout, int64_t n, U* out) {
  TFRUN_FOR_EACH(i, n) {
    int64_t o[3];
    SelectOffsets(layout, i, o);
    out[i] = cond[o[0]] ? t[o[1]] : e[o[2]];
  }
}

template <typename U>
__global__ void StridedCopyKernel(const U* in, const IndexMap map, int64_t n, U* out) {
  TFRUN_FOR_EACH(i, n) { out[i] = in[MapOffset(map, i)]; }
}

template <typename U, typename Index>
__global__ void GatherKernel(const U* params, const Index* indices, int64_t limit, int64_t inner, int64_t count,
                             int64_t n, U* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t at = GatherSource(indices, limit, inner, count, i);
    out[i] = at >= 0 ? params[at] : U(0);
  }
}

template <typename U>
__global__ void PadKernel(const U* in, int64_t rows, int64_t cols, int64_t depth, int64_t out_rows, int64_t out_cols,
                          int64_t top, int64_t left, int64_t n, U* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t at = PadSource(rows, cols, depth, out_rows, out_cols, top, left, i);
    out[i] = at >= 0 ? in[at] : U(0);
  }
}

// ---- Reductions ----

template <ReduceOp Op, typename A>
__device__ __forceinline__ A Identity() {
  if constexpr (Op == ReduceOp::kProd || Op == ReduceOp::kAll) return A(1);
  if constexpr (Op == ReduceOp::kMax) {
    if constexpr (std::is_floating_point_v<A>) return -INFINITY;
    return A(sizeof(A) == 8 ? static_cast<A>(INT64_MIN) : static_cast<A>(INT32_MIN));
  }
  if constexpr (Op == ReduceOp::kMin) {
    if constexpr (std::is_floating_point_v<A>) return INFINITY;
    return A(sizeof(A) == 8 ? static_cast<A>(INT64_MAX) : static_cast<A>(INT32_MAX));
  }
  return A(0);
}

template <ReduceOp Op, typename A>
__device__ __forceinline__ A Combine(A a, A b) {
  if constexpr (Op == ReduceOp::kProd) return a * b;
  if constexpr (Op == ReduceOp::kMax) return b > a ? b : a;
  if constexpr (Op == ReduceOp::kMin) return b < a ? b : a;
  if constexpr (Op == ReduceOp::kAll) return a && b;
  if constexpr (Op == ReduceOp::kAny) return a || b;
  return a + b;  // Sum, Mean, HalfSumOfSquares
}

// The accumulator: float for half and bfloat16, int for bool, else T.
template <typename T> struct Acc { using type = typename Wide<T>::type; };
template <> struct Acc<bool> { using type = int; };

template <ReduceOp Op, typename T>
__device__ __forceinline__ typename Acc<T>::type Term(T v) {
  using A = typename Acc<T>::type;
  const A x = static_cast<A>(Up(v));
  if constexpr (Op == ReduceOp::kHalfSumOfSquares) return x * x;
  return x;
}

template <ReduceOp Op, typename T>
__device__ __forceinline__ T Finish(typename Acc<T>::type total, int64_t count) {
  using A = typename Acc<T>::type;
  if constexpr (Op == ReduceOp::kMean) total = total / static_cast<A>(count);
  if constexpr (Op == ReduceOp::kHalfSumOfSquares) total = total / A(2);
  if constexpr (std::is_same_v<T, bool>) {
    return total != 0;
  } else {
    return Down<T>(total);
  }
}

// Few elements per output: one thread each.
template <ReduceOp Op, typename T>
__global__ void ReduceByThread(const T* in, const ReduceLayout l, int64_t n_out, T* out) {
  using A = typename Acc<T>::type;
  TFRUN_FOR_EACH(o, n_out) {
    const int64_t base = KeptOffset(l, o);
    A total = Identity<Op, A>();
    for (int64_t r = 0; r < l.reduced_count; ++r) total = Combine<Op>(total, Term<Op>(in[base + ReducedOffset(l, r)]));
    out[o] = Finish<Op, T>(total, l.reduced_count);
  }
}

// Many elements per output: a block each, its threads striding over them,
// then a tree in shared memory.
template <ReduceOp Op, typename T>
__global__ void ReduceByBlock(const T* in, const ReduceLayout l, int64_t n_out, T* out) {
  using A = typename Acc<T>::type;
  __shared__ A partial[kThreads];
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    const int64_t base = KeptOffset(l, o);
    A total = Identity<Op, A>();
    for (int64_t r = threadIdx.x; r < l.reduced_count; r += blockDim.x) {
      total = Combine<Op>(total, Term<Op>(in[base + ReducedOffset(l, r)]));
    }
    partial[threadIdx.x] = total;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) partial[threadIdx.x] = Combine<Op>(partial[threadIdx.x], partial[threadIdx.x + half]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out[o] = Finish<Op, T>(partial[0], l.reduced_count);
    __syncthreads();
  }
}

constexpr int64_t kBlockReduceFrom = 128;  // elements per output

template <ReduceOp Op, typename T>
int LaunchReduce(const void* in, const ReduceLayout& l, int64_t n_out, void* out, cudaStream_t s) {
  const T* i = static_cast<const T*>(in);
  T* o = static_cast<T*>(out);
  if (l.reduced_count >= kBlockReduceFrom) {
    const int64_t blocks = n_out < 65535 ? n_out : 65535;
    ReduceByBlock<Op, T><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(i, l, n_out, o);
  } else {
    ReduceByThread<Op, T><<<GridFor(n_out), kThreads, 0, s>>>(i, l, n_out, o);
  }
  return LastError();
}

template <typename T>
int ReduceTyped(ReduceOp op, const void* in, const ReduceLayout& l, int64_t n_out, void* out, cudaStream_t s) {
  constexpr bool boolean = std::is_same_v<T, bool>;
  if constexpr (boolean) {
    if (op == ReduceOp::kAll) return LaunchReduce<ReduceOp::kAll, T>(in, l, n_out, out, s);
    if (op == ReduceOp::kAny) return LaunchReduce<ReduceOp::kAny, T>(in, l, n_out, out, s);
  } else {
    switch (op) {
      case ReduceOp::kSum: return LaunchReduce<ReduceOp::kSum, T>(in, l, n_out, out, s);
      case ReduceOp::kMean: return LaunchReduce<ReduceOp::kMean, T>(in, l, n_out, out, s);
      case ReduceOp::kProd: return LaunchReduce<ReduceOp::kProd, T>(in, l, n_out, out, s);
      case ReduceOp::kMax: return LaunchReduce<ReduceOp::kMax, T>(in, l, n_out, out, s);
      case ReduceOp::kMin: return LaunchReduce<ReduceOp::kMin, T>(in, l, n_out, out, s);
      case ReduceOp::kHalfSumOfSquares: return LaunchReduce<ReduceOp::kHalfSumOfSquares, T>(in, l, n_out, out, s);
      default: break;
    }
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

// ---- Softmax family: a block per row ----

// The block's reduction of `v` (sum or max) in shared memory `scratch`;
// every thread gets the result.
template <bool Max, typename T>
__device__ T BlockReduce(T v, T* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const T a = scratch[threadIdx.x], b = scratch[threadIdx.x + half];
      scratch[threadIdx.x] = Max ? (b > a ? b : a) : a + b;
    }
    __syncthreads();
  }
  const T result = scratch[0];
  __syncthreads();
  return result;
}

// A row's maximum and the sum of exp(x - maximum) over it, for every
// thread of the block.
template <typename T>
__device__ void RowMaxAndSumExp(const T* in, int64_t classes, T* scratch, T* max, T* sum) {
  T m = -INFINITY;
  for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) m = in[k] > m ? in[k] : m;
  m = BlockReduce<true>(m, scratch);
  T s = 0;
  for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) s += exp(in[k] - m);
  *sum = BlockReduce<false>(s, scratch);
  *max = m;
}

// softmax_op_functor.h: shifted by the row's maximum.
template <typename T, bool Log>
__global__ void SoftmaxKernel(const T* logits, int64_t rows, int64_t classes, T* out) {
  __shared__ T scratch[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* in = logits + row * classes;
    T* o = out + row * classes;
    T max, sum;
    RowMaxAndSumExp(in, classes, scratch, &max, &sum);
    for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
      const T shifted = in[k] - max;
      o[k] = Log ? shifted - log(sum) : exp(shifted) / sum;
    }
  }
}

// xent_op.h: loss = sum(labels * (log(sum(exp(shifted))) - shifted)),
// backprop = exp(shifted) / sum(exp(shifted)) - labels.
template <typename T>
__global__ void XentKernel(const T* logits, const T* labels, int64_t rows, int64_t classes, T* loss, T* backprop) {
  __shared__ T scratch[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* in = logits + row * classes;
    const T* lab = labels + row * classes;
    T* back = backprop + row * classes;
    T max, sum;
    RowMaxAndSumExp(in, classes, scratch, &max, &sum);
    const T log_sum = log(sum);
    T row_loss = 0;
    for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
      const T shifted = in[k] - max;
      row_loss += lab[k] * (log_sum - shifted);
      back[k] = exp(shifted) / sum - lab[k];
    }
    row_loss = BlockReduce<false>(row_loss, scratch);
    if (threadIdx.x == 0) loss[row] = row_loss;
  }
}

unsigned RowBlocks(int64_t rows) { return static_cast<unsigned>(rows < 65535 ? (rows > 0 ? rows : 1) : 65535); }

// ---- Max pooling (NHWC) ----

template <typename T>
__global__ void MaxPoolKernel(const T* in, const PoolParams p, int64_t n, T* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t at = PoolArgMax(in, p, i);
    out[i] = at >= 0 ? in[at] : T(-INFINITY);
  }
}

template <typename T>
__global__ void MaxPoolGradKernel(const T* in, const T* grad, const PoolParams p, int64_t n, T* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t at = PoolArgMax(in, p, i);
    if (at >= 0) atomicAdd(out + at, grad[i]);
  }
}

// ---- Depthwise convolution (NHWC) ----

__device__ inline float MulRounded(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double MulRounded(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float AddRounded(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double AddRounded(double a, double b) { return __dadd_rn(a, b); }

template <typename T>
__global__ void DepthwiseConvKernel(const T* in, const T* filter, const DepthwiseParams p, int64_t n, T* out) {
  const int64_t depth = p.in_depth * p.multiplier;
  TFRUN_FOR_EACH(i, n) {
    const int64_t d = i % depth;
    const int64_t ox = (i / depth) % p.out_cols;
    const int64_t oy = (i / depth / p.out_cols) % p.out_rows;
    const int64_t b = i / depth / p.out_cols / p.out_rows;
    T sum = T(0);
    for (int64_t fy = 0; fy < p.filter_rows; ++fy) {
      const int64_t iy = oy * p.stride_rows - p.pad_top + fy;
      if (iy < 0 || iy >= p.in_rows) continue;
      for (int64_t fx = 0; fx < p.filter_cols; ++fx) {
        const int64_t ix = ox * p.stride_cols - p.pad_left + fx;
        if (ix < 0 || ix >= p.in_cols) continue;
        const T x = in[((b * p.in_rows + iy) * p.in_cols + ix) * p.in_depth + d / p.multiplier];
        sum = AddRounded(sum, MulRounded(x, filter[(fy * p.filter_cols + fx) * depth + d]));
      }
    }
    out[i] = sum;
  }
}

// ---- Average pooling (NHWC) ----

template <typename T>
__global__ void AvgPoolKernel(const T* in, const PoolParams p, int64_t n, T* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t k = i % p.depth;
    const int64_t q = (i / p.depth) % p.out_cols;
    const int64_t r = (i / p.depth / p.out_cols) % p.out_rows;
    const int64_t b = i / p.depth / p.out_cols / p.out_rows;
    const int64_t r0 = max(r * p.stride_rows - p.pad_top, int64_t{0});
    const int64_t r1 = min(r * p.stride_rows - p.pad_top + p.window_rows, p.in_rows);
    const int64_t q0 = max(q * p.stride_cols - p.pad_left, int64_t{0});
    const int64_t q1 = min(q * p.stride_cols - p.pad_left + p.window_cols, p.in_cols);
    T sum = T(0);
    for (int64_t y = r0; y < r1; ++y) {
      for (int64_t x = q0; x < q1; ++x) sum += in[((b * p.in_rows + y) * p.in_cols + x) * p.depth + k];
    }
    out[i] = sum / static_cast<T>((r1 - r0) * (q1 - q0));
  }
}

// GetBroadcastSize (avgpooling_op.cc), as PoolGeometry::BroadcastSize.
__device__ int64_t BroadcastStart(int64_t index, int64_t in_size, int64_t window, int64_t stride, int64_t pad,
                                  int64_t* size) {
  int64_t start = index * stride;
  *size = window;
  if (start < pad) {
    *size = window + start - pad;
    start = 0;
  } else {
    start -= pad;
  }
  if (start + window > in_size) *size = min(in_size - start, window);
  return start;
}

// The outputs whose broadcast window can hold input `y`: those whose true
// window does, and (the quirk's) any starting in the padding.
__device__ void BroadcastCandidates(int64_t y, int64_t window, int64_t stride, int64_t pad, int64_t outs,
                                    int64_t* first, int64_t* last) {
  *first = y < window ? 0 : max(int64_t{0}, (y + pad - window) / stride);
  *last = min(outs - 1, (y + pad) / stride);
}

template <typename T>
__global__ void AvgPoolGradKernel(const T* grad, const PoolParams p, int64_t n, T* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t k = i % p.depth;
    const int64_t x = (i / p.depth) % p.in_cols;
    const int64_t y = (i / p.depth / p.in_cols) % p.in_rows;
    const int64_t b = i / p.depth / p.in_cols / p.in_rows;
    int64_t r_first, r_last, q_first, q_last;
    BroadcastCandidates(y, p.window_rows, p.stride_rows, p.pad_top, p.out_rows, &r_first, &r_last);
    BroadcastCandidates(x, p.window_cols, p.stride_cols, p.pad_left, p.out_cols, &q_first, &q_last);
    T sum = T(0);
    for (int64_t r = r_first; r <= r_last; ++r) {
      int64_t rows;
      const int64_t r0 = BroadcastStart(r, p.in_rows, p.window_rows, p.stride_rows, p.pad_top, &rows);
      if (y < r0 || y >= r0 + rows) continue;
      for (int64_t q = q_first; q <= q_last; ++q) {
        int64_t cols;
        const int64_t q0 = BroadcastStart(q, p.in_cols, p.window_cols, p.stride_cols, p.pad_left, &cols);
        if (x < q0 || x >= q0 + cols) continue;
        const T coeff = static_cast<T>(1.0 / static_cast<double>(rows * cols));
        sum += grad[((b * p.out_rows + r) * p.out_cols + q) * p.depth + k] * coeff;
      }
    }
    out[i] = sum;
  }
}

// ---- Local response normalization ----

__device__ float LrnNorm(const float* row, const LrnParams& p, int64_t j) {
  const int64_t k0 = max(int64_t{0}, j - p.radius), k1 = min(p.depth, j + p.radius + 1);
  float sum = 0;
  for (int64_t k = k0; k < k1; ++k) sum += row[k] * row[k];
  return sum * p.alpha + p.bias;
}

__global__ void LrnKernel(const float* in, const LrnParams p, int64_t n, float* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t j = i % p.depth;
    const float norm = LrnNorm(in + (i - j), p, j);
    const float scale = p.beta == 1.0f ? 1.0f / norm : p.beta == 0.5f ? rsqrtf(norm) : expf(logf(norm) * -p.beta);
    out[i] = in[i] * scale;
  }
}

// out[k] gathers what lrn_op.cc's CPU loop scatters: from every j within
// the radius of k, g_j * (x_k * (-2 alpha beta y_j) / N_j + [k == j] N_j^-beta).
__global__ void LrnGradKernel(const float* grads, const float* in, const float* activations, const LrnParams p,
                              int64_t n, float* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t k = i % p.depth;
    const int64_t row = i - k;
    const float alpha_beta_2 = -2.0f * p.alpha * p.beta;
    float sum = 0;
    for (int64_t j = max(int64_t{0}, k - p.radius); j < min(p.depth, k + p.radius + 1); ++j) {
      const float gs = grads[row + j];
      if (gs == 0.0f) continue;
      const float norm = LrnNorm(in + row, p, j);
      float dyi = in[i] * (alpha_beta_2 * activations[row + j]) / norm;
      if (k == j) dyi += powf(norm, -p.beta);
      sum += dyi * gs;
    }
    out[i] = sum;
  }
}

// ---- Batch normalization: a block per channel for the statistics ----

__device__ int64_t ChannelElement(const BatchNormParams& p, int64_t channel, int64_t r) {
  return p.nchw ? ((r / p.inner) * p.channels + channel) * p.inner + r % p.inner : r * p.channels + channel;
}

__global__ void BatchNormStatsKernel(const BatchNormParams p, const float* x, const float* old_mean,
                                     const float* old_var, float* batch_mean, float* batch_var, float* saved_mean,
                                     float* saved_var) {
  __shared__ float scratch[kThreads];
  for (int64_t ch = blockIdx.x; ch < p.channels; ch += gridDim.x) {
    float sum = 0;
    for (int64_t r = threadIdx.x; r < p.count; r += blockDim.x) sum += x[ChannelElement(p, ch, r)];
    const float mean = BlockReduce<false>(sum, scratch) / static_cast<float>(p.count);
    float squares = 0;
    for (int64_t r = threadIdx.x; r < p.count; r += blockDim.x) {
      const float d = x[ChannelElement(p, ch, r)] - mean;
      squares += d * d;
    }
    const float var = BlockReduce<false>(squares, scratch) / static_cast<float>(p.count);
    if (threadIdx.x == 0) {
      const float adjust = static_cast<float>(p.count) / static_cast<float>(p.count > 1 ? p.count - 1 : 1);
      saved_mean[ch] = mean;
      saved_var[ch] = var;
      if (p.exponential_avg_factor == 1.0f) {
        batch_mean[ch] = mean;
        batch_var[ch] = var * adjust;
      } else {
        const float keep = 1.0f - p.exponential_avg_factor;
        batch_mean[ch] = keep * old_mean[ch] + p.exponential_avg_factor * mean;
        batch_var[ch] = keep * old_var[ch] + p.exponential_avg_factor * var * adjust;
      }
    }
  }
}

__global__ void BatchNormApplyKernel(const BatchNormParams p, const float* x, const float* scale,
                                     const float* offset, const float* mean, const float* var, int64_t n, float* y) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t ch = p.nchw ? (i / p.inner) % p.channels : i % p.channels;
    y[i] = (x[i] - mean[ch]) * (scale[ch] * rsqrtf(var[ch] + p.epsilon)) + offset[ch];
  }
}

__global__ void BatchNormGradSumsKernel(const BatchNormParams p, const float* dy, const float* x, const float* mean,
                                        const float* var, float* dscale, float* doffset) {
  __shared__ float scratch[kThreads];
  for (int64_t ch = blockIdx.x; ch < p.channels; ch += gridDim.x) {
    float sum_dy = 0, sum_dy_xc = 0;
    for (int64_t r = threadIdx.x; r < p.count; r += blockDim.x) {
      const int64_t i = ChannelElement(p, ch, r);
      sum_dy += dy[i];
      sum_dy_xc += dy[i] * (x[i] - mean[ch]);
    }
    sum_dy = BlockReduce<false>(sum_dy, scratch);
    sum_dy_xc = BlockReduce<false>(sum_dy_xc, scratch);
    if (threadIdx.x == 0) {
      doffset[ch] = sum_dy;
      dscale[ch] = sum_dy_xc * rsqrtf(var[ch] + p.epsilon);
    }
  }
}

// x_backprop = scale * rsqrt(var + eps) * (dy - mean(dy) - (x - mean) *
// mean(dy * (x - mean)) / (var + eps)) when training (the sums from
// dscale and doffset), dy * scale * rsqrt(var + eps) for inference.
__global__ void BatchNormGradApplyKernel(const BatchNormParams p, const float* dy, const float* x, const float* scale,
                                         const float* mean, const float* var, const float* dscale,
                                         const float* doffset, int64_t n, float* dx) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t ch = p.nchw ? (i / p.inner) % p.channels : i % p.channels;
    const float inv = rsqrtf(var[ch] + p.epsilon);
    if (!p.training) {
      dx[i] = dy[i] * (scale[ch] * inv);
      continue;
    }
    const float count = static_cast<float>(p.count);
    const float dy_mean = doffset[ch] / count;
    const float dy_xc_mean = dscale[ch] / inv / count;  // sum(dy * (x - mean)) / count
    dx[i] = scale[ch] * inv * (dy[i] - dy_mean - (x[i] - mean[ch]) * dy_xc_mean * inv * inv);
  }
}

// ---- ArgMax/ArgMin, InTopKV2, sparse cross entropy, LeakyReluGrad, Range ----

template <typename T, typename Index>
__global__ void ArgReduceKernel(const T* in, bool max, int64_t size, int64_t inner, int64_t n, Index* out) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t o = i / inner, j = i % inner;
    int64_t best = 0;
    bool found = false;
    T best_value = T(0);
    for (int64_t k = 0; k < size; ++k) {
      const T v = in[(o * size + k) * inner + j];
      if (v != v) continue;
      if (!found || (max ? v > best_value : v < best_value)) {
        best = k;
        best_value = v;
        found = true;
      }
    }
    out[i] = static_cast<Index>(best);
  }
}

template <typename Index>
__global__ void InTopKKernel(const float* p, const Index* targets, int64_t classes, int64_t k, int64_t batch,
                             bool* out) {
  TFRUN_FOR_EACH(b, batch) {
    const int64_t target = targets[b];
    if (target < 0 || target >= classes || !isfinite(p[b * classes + target])) {
      out[b] = false;
      continue;
    }
    const float score = p[b * classes + target];
    int64_t more = 0;
    for (int64_t j = 0; j < classes && more <= k; ++j) more += p[b * classes + j] > score ? 1 : 0;
    out[b] = more < k;
  }
}

// A block per row: the row's maximum, its sum of exps, then loss and
// backprop (sparse_xent_op.h's formulas).
template <typename T, typename Index>
__global__ void SparseXentKernel(const T* logits, const Index* labels, int64_t rows, int64_t classes, T* loss,
                                 T* backprop) {
  __shared__ T scratch[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* in = logits + row * classes;
    T m, sum;
    RowMaxAndSumExp(in, classes, scratch, &m, &sum);
    const int64_t label = labels[row];
    const bool valid = label >= 0 && label < classes;
    const T nan = T(NAN);
    for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
      backprop[row * classes + k] = valid ? exp(in[k] - m) / sum - (k == label ? T(1) : T(0)) : nan;
    }
    if (threadIdx.x == 0) loss[row] = valid ? log(sum) - (in[label] - m) : nan;
  }
}

template <typename T>
__global__ void LeakyReluGradKernel(const T* g, const T* f, int64_t n, float alpha, T* out) {
  TFRUN_FOR_EACH(i, n) { out[i] = f[i] > T(0) ? g[i] : T(g[i] * T(alpha)); }
}

template <typename T>
__global__ void RangeKernel(T start, T delta, int64_t n, T* out) {
  TFRUN_FOR_EACH(i, n) { out[i] = start + static_cast<T>(i) * delta; }
}

template <typename U>
__global__ void StridedScatterKernel(const U* in, const IndexMap map, int64_t n, U* out) {
  TFRUN_FOR_EACH(i, n) { out[MapOffset(map, i)] = in[i]; }
}

// ---- Scatter ----

__device__ void AtomicAddTo(float* p, float v) { atomicAdd(p, v); }
__device__ void AtomicAddTo(double* p, double v) { atomicAdd(p, v); }
__device__ void AtomicAddTo(int32_t* p, int32_t v) { atomicAdd(p, v); }
__device__ void AtomicAddTo(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));  // two's complement
}

template <typename T, typename Index>
__global__ void ScatterKernel(ScatterOp op, T* var, int64_t rows, int64_t row_size, const Index* indices,
                              const T* updates, bool scalar_update, int64_t n) {
  TFRUN_FOR_EACH(i, n) {
    const int64_t index = indices[i / row_size];
    if (index < 0 || index >= rows) continue;
    T* at = var + index * row_size + i % row_size;
    const T u = scalar_update ? updates[0] : updates[i];
    if (op == ScatterOp::kUpdate) {
      *at = u;
    } else {
      AtomicAddTo(at, op == ScatterOp::kAdd ? u : T(T(0) - u));
    }
  }
}

// ---- Optimizers (training_ops_gpu.cu.cc) ----

// The scalars' device pointers travel by value in the launch.
template <typename T>
struct ScalarPointers {
  const T* p[6];
};

template <typename T, UpdateOp Op>
__global__ void UpdateKernel(T* var, T* slot1, T* slot2, const ScalarPointers<T> scalars, const T* grad, bool flag,
                             int64_t n) {
  T s[6];
  for (int k = 0; k < UpdateScalars(Op); ++k) s[k] = *scalars.p[k];
  TFRUN_FOR_EACH(i, n) { UpdateElement<Op>(var, slot1, slot2, s, grad[i], flag, i); }
}

}  // namespace

int Unary(ElementType type, UnaryOp op, const void* in, int64_t n, void* out, void* stream, float alpha) {
  if (n == 0) return 0;
  return DispatchNumber(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return UnaryTyped<T>(op, in, n, out, static_cast<cudaStream_t>(stream), alpha,
                         std::make_index_sequence<static_cast<size_t>(UnaryOp::kCount)>());
  });
}

int Fill(ElementType type, double value, int64_t n, void* out, void* stream) {
  if (n == 0) return 0;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return DispatchWithBool(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return LaunchFill<T>(value, n, out, s);
  });
}

int Compare(ElementType type, CompareOp op, const void* x, bool x_scalar, const void* y, bool y_scalar,
            const Broadcast& broadcast, int64_t n, bool* out, void* stream) {
  if (n == 0) return 0;
  if (broadcast.rank < 0 || broadcast.rank > kMaxBroadcastRank) return static_cast<int>(cudaErrorInvalidValue);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return DispatchWithBool(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return CompareTyped<T>(op, x, x_scalar, y, y_scalar, broadcast, n, out, s);
  });
}

int Select(int element_bytes, const bool* cond, const void* then_values, const void* else_values,
           const Select3& layout, int64_t n, void* out, void* stream) {
  if (n == 0) return 0;
  if (layout.rank < 0 || layout.rank > kMaxRank) return static_cast<int>(cudaErrorInvalidValue);
  return DispatchBytes(element_bytes, [&](auto* tag) {
    using U = std::remove_pointer_t<decltype(tag)>;
    SelectKernel<U><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        cond, static_cast<const U*>(then_values), static_cast<const U*>(else_values), layout, n, static_cast<U*>(out));
    return LastError();
  });
}

namespace {

// StridedCopy (`scatter` false) or StridedScatter, `map` checked first.
int LaunchStrided(bool scatter, int element_bytes, const void* in, const IndexMap& map, int64_t n, void* out,
                  void* stream) {
  if (n == 0) return 0;
  if (map.rank < 0 || map.rank > kMaxRank) return static_cast<int>(cudaErrorInvalidValue);
  for (int d = 0; d < map.rank; ++d) {
    if (map.dims[d] <= 0 || map.modulo[d] <= 0) return static_cast<int>(cudaErrorInvalidValue);
  }
  return DispatchBytes(element_bytes, [&](auto* tag) {
    using U = std::remove_pointer_t<decltype(tag)>;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (scatter) {
      StridedScatterKernel<U><<<GridFor(n), kThreads, 0, s>>>(static_cast<const U*>(in), map, n, static_cast<U*>(out));
    } else {
      StridedCopyKernel<U><<<GridFor(n), kThreads, 0, s>>>(static_cast<const U*>(in), map, n, static_cast<U*>(out));
    }
    return LastError();
  });
}

}  // namespace

int StridedCopy(int element_bytes, const void* in, const IndexMap& map, int64_t n, void* out, void* stream) {
  return LaunchStrided(false, element_bytes, in, map, n, out, stream);
}

int Gather(int element_bytes, const void* params, const void* indices, bool indices_int64, int64_t outer,
           int64_t limit, int64_t inner, int64_t count, void* out, void* stream) {
  const int64_t n = outer * count * inner;
  if (n == 0) return 0;
  return DispatchBytes(element_bytes, [&](auto* tag) {
    using U = std::remove_pointer_t<decltype(tag)>;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (indices_int64) {
      GatherKernel<U, int64_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const U*>(params),
                                                               static_cast<const int64_t*>(indices), limit, inner,
                                                               count, n, static_cast<U*>(out));
    } else {
      GatherKernel<U, int32_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const U*>(params),
                                                               static_cast<const int32_t*>(indices), limit, inner,
                                                               count, n, static_cast<U*>(out));
    }
    return LastError();
  });
}

int Reduce(ElementType type, ReduceOp op, const void* in, const ReduceLayout& layout, int64_t n_out, void* out,
           void* stream) {
  if (n_out == 0) return 0;
  if (layout.kept_rank < 0 || layout.kept_rank > kMaxRank || layout.reduced_rank < 0 ||
      layout.reduced_rank > kMaxRank || layout.reduced_count <= 0) {
    return static_cast<int>(cudaErrorInvalidValue);
  }
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return DispatchWithBool(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return ReduceTyped<T>(op, in, layout, n_out, out, s);
  });
}

int Softmax(ElementType type, bool log, const void* logits, int64_t rows, int64_t classes, void* out, void* stream) {
  if (rows == 0 || classes == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (log) {
      SoftmaxKernel<T, true><<<RowBlocks(rows), kThreads, 0, s>>>(static_cast<const T*>(logits), rows, classes,
                                                                   static_cast<T*>(out));
    } else {
      SoftmaxKernel<T, false><<<RowBlocks(rows), kThreads, 0, s>>>(static_cast<const T*>(logits), rows, classes,
                                                                    static_cast<T*>(out));
    }
    return LastError();
  });
}

int SoftmaxXent(ElementType type, const void* logits, const void* labels, int64_t rows, int64_t classes, void* loss,
                void* backprop, void* stream) {
  if (rows == 0 || classes == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    XentKernel<T><<<RowBlocks(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(logits), static_cast<const T*>(labels), rows, classes, static_cast<T*>(loss),
        static_cast<T*>(backprop));
    return LastError();
  });
}

int MaxPool(ElementType type, const void* in, const PoolParams& p, void* out, void* stream) {
  const int64_t n = p.batch * p.out_rows * p.out_cols * p.depth;
  if (n == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    MaxPoolKernel<T><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const T*>(in), p, n,
                                                                                     static_cast<T*>(out));
    return LastError();
  });
}

int MaxPoolGrad(ElementType type, const void* in, const void* grad, const PoolParams& p, void* out, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const int64_t in_n = p.batch * p.in_rows * p.in_cols * p.depth;
  const int64_t n = p.batch * p.out_rows * p.out_cols * p.depth;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (in_n > 0) {
      const cudaError_t e = cudaMemsetAsync(out, 0, in_n * sizeof(T), s);
      if (e != cudaSuccess) return static_cast<int>(e);
    }
    if (n == 0) return 0;
    MaxPoolGradKernel<T><<<GridFor(n), kThreads, 0, s>>>(static_cast<const T*>(in), static_cast<const T*>(grad), p,
                                                         n, static_cast<T*>(out));
    return LastError();
  });
}

int DepthwiseConv(ElementType type, const void* in, const void* filter, const DepthwiseParams& p, void* out,
                  void* stream) {
  const int64_t n = p.batch * p.out_rows * p.out_cols * p.in_depth * p.multiplier;
  if (n == 0) return 0;
  if (type != ElementType::kFloat32 && type != ElementType::kFloat64) return static_cast<int>(cudaErrorInvalidValue);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (type == ElementType::kFloat32) {
    DepthwiseConvKernel<float><<<GridFor(n), kThreads, 0, s>>>(static_cast<const float*>(in),
                                                               static_cast<const float*>(filter), p, n,
                                                               static_cast<float*>(out));
  } else {
    DepthwiseConvKernel<double><<<GridFor(n), kThreads, 0, s>>>(static_cast<const double*>(in),
                                                                static_cast<const double*>(filter), p, n,
                                                                static_cast<double*>(out));
  }
  return LastError();
}

int AvgPool(ElementType type, const void* in, const PoolParams& p, void* out, void* stream) {
  const int64_t n = p.batch * p.out_rows * p.out_cols * p.depth;
  if (n == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    AvgPoolKernel<T><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const T*>(in), p, n,
                                                                                     static_cast<T*>(out));
    return LastError();
  });
}

int AvgPoolGrad(ElementType type, const void* grad, const PoolParams& p, void* out, void* stream) {
  const int64_t n = p.batch * p.in_rows * p.in_cols * p.depth;
  if (n == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    AvgPoolGradKernel<T><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(grad), p, n, static_cast<T*>(out));
    return LastError();
  });
}

int Lrn(const float* in, const LrnParams& p, float* out, void* stream) {
  const int64_t n = p.rows * p.depth;
  if (n == 0) return 0;
  LrnKernel<<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(in, p, n, out);
  return LastError();
}

int LrnGrad(const float* grads, const float* in, const float* activations, const LrnParams& p, float* out,
            void* stream) {
  const int64_t n = p.rows * p.depth;
  if (n == 0) return 0;
  LrnGradKernel<<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(grads, in, activations, p, n, out);
  return LastError();
}

int BatchNorm(const BatchNormParams& p, const float* x, const float* scale, const float* offset, const float* old_mean,
              const float* old_var, float* y, float* batch_mean, float* batch_var, float* saved_mean, float* saved_var,
              void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (p.channels == 0) return 0;
  const float* mean = old_mean;
  const float* var = old_var;
  if (p.training) {
    BatchNormStatsKernel<<<RowBlocks(p.channels), kThreads, 0, s>>>(p, x, old_mean, old_var, batch_mean, batch_var,
                                                                     saved_mean, saved_var);
    const int e = LastError();
    if (e != 0) return e;
    mean = saved_mean;
    var = saved_var;
  } else {
    for (float* out : {batch_mean, saved_mean}) {
      const cudaError_t e = cudaMemcpyAsync(out, old_mean, p.channels * sizeof(float), cudaMemcpyDeviceToDevice, s);
      if (e != cudaSuccess) return static_cast<int>(e);
    }
    for (float* out : {batch_var, saved_var}) {
      const cudaError_t e = cudaMemcpyAsync(out, old_var, p.channels * sizeof(float), cudaMemcpyDeviceToDevice, s);
      if (e != cudaSuccess) return static_cast<int>(e);
    }
  }
  const int64_t n = p.count * p.channels;
  if (n == 0) return 0;
  BatchNormApplyKernel<<<GridFor(n), kThreads, 0, s>>>(p, x, scale, offset, mean, var, n, y);
  return LastError();
}

int BatchNormGrad(const BatchNormParams& p, const float* dy, const float* x, const float* scale, const float* mean,
                  const float* var, float* dx, float* dscale, float* doffset, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (p.channels == 0) return 0;
  BatchNormGradSumsKernel<<<RowBlocks(p.channels), kThreads, 0, s>>>(p, dy, x, mean, var, dscale, doffset);
  const int e = LastError();
  if (e != 0) return e;
  const int64_t n = p.count * p.channels;
  if (n == 0) return 0;
  BatchNormGradApplyKernel<<<GridFor(n), kThreads, 0, s>>>(p, dy, x, scale, mean, var, dscale, doffset, n, dx);
  return LastError();
}

int ArgReduce(ElementType type, bool max, const void* in, int64_t outer, int64_t size, int64_t inner, bool out_int64,
              void* out, void* stream) {
  const int64_t n = outer * inner;
  if (n == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (out_int64) {
      ArgReduceKernel<T, int64_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const T*>(in), max, size, inner, n,
                                                                  static_cast<int64_t*>(out));
    } else {
      ArgReduceKernel<T, int32_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<const T*>(in), max, size, inner, n,
                                                                  static_cast<int32_t*>(out));
    }
    return LastError();
  });
}

int InTopK(const float* predictions, const void* targets, bool targets_int64, int64_t batch, int64_t classes,
           int64_t k, bool* out, void* stream) {
  if (batch == 0) return 0;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (targets_int64) {
    InTopKKernel<int64_t><<<GridFor(batch), kThreads, 0, s>>>(predictions, static_cast<const int64_t*>(targets),
                                                              classes, k, batch, out);
  } else {
    InTopKKernel<int32_t><<<GridFor(batch), kThreads, 0, s>>>(predictions, static_cast<const int32_t*>(targets),
                                                              classes, k, batch, out);
  }
  return LastError();
}

int SparseXent(ElementType type, const void* logits, const void* labels, bool labels_int64, int64_t rows,
               int64_t classes, void* loss, void* backprop, void* stream) {
  if (rows == 0 || classes == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (labels_int64) {
      SparseXentKernel<T, int64_t><<<RowBlocks(rows), kThreads, 0, s>>>(
          static_cast<const T*>(logits), static_cast<const int64_t*>(labels), rows, classes, static_cast<T*>(loss),
          static_cast<T*>(backprop));
    } else {
      SparseXentKernel<T, int32_t><<<RowBlocks(rows), kThreads, 0, s>>>(
          static_cast<const T*>(logits), static_cast<const int32_t*>(labels), rows, classes, static_cast<T*>(loss),
          static_cast<T*>(backprop));
    }
    return LastError();
  });
}

int LeakyReluGrad(ElementType type, const void* gradients, const void* features, int64_t n, float alpha, void* out,
                  void* stream) {
  if (n == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    LeakyReluGradKernel<T><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(gradients), static_cast<const T*>(features), n, alpha, static_cast<T*>(out));
    return LastError();
  });
}

int Range(ElementType type, double start, double delta, int64_t n, void* out, void* stream) {
  if (n == 0) return 0;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (type) {
    case ElementType::kFloat32:
      RangeKernel<float><<<GridFor(n), kThreads, 0, s>>>(static_cast<float>(start), static_cast<float>(delta), n,
                                                         static_cast<float*>(out));
      return LastError();
    case ElementType::kFloat64:
      RangeKernel<double><<<GridFor(n), kThreads, 0, s>>>(start, delta, n, static_cast<double*>(out));
      return LastError();
    case ElementType::kInt64:
      RangeKernel<int64_t><<<GridFor(n), kThreads, 0, s>>>(static_cast<int64_t>(start), static_cast<int64_t>(delta),
                                                           n, static_cast<int64_t*>(out));
      return LastError();
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int StridedScatter(int element_bytes, const void* in, const IndexMap& map, int64_t n, void* out, void* stream) {
  return LaunchStrided(true, element_bytes, in, map, n, out, stream);
}

int Scatter(ElementType type, ScatterOp op, void* var, int64_t rows, int64_t row_size, const void* indices,
            bool indices_int64, int64_t count, const void* updates, bool scalar_update, void* stream) {
  const int64_t n = count * row_size;
  if (n == 0) return 0;
  auto launch = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (indices_int64) {
      ScatterKernel<T, int64_t><<<GridFor(n), kThreads, 0, s>>>(op, static_cast<T*>(var), rows, row_size,
                                                                static_cast<const int64_t*>(indices),
                                                                static_cast<const T*>(updates), scalar_update, n);
    } else {
      ScatterKernel<T, int32_t><<<GridFor(n), kThreads, 0, s>>>(op, static_cast<T*>(var), rows, row_size,
                                                                static_cast<const int32_t*>(indices),
                                                                static_cast<const T*>(updates), scalar_update, n);
    }
    return LastError();
  };
  switch (type) {
    case ElementType::kFloat32: return launch(static_cast<float*>(nullptr));
    case ElementType::kFloat64: return launch(static_cast<double*>(nullptr));
    case ElementType::kInt32: return launch(static_cast<int32_t*>(nullptr));
    case ElementType::kInt64: return launch(static_cast<int64_t*>(nullptr));
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int PadImages(int element_bytes, const void* in, int64_t batch, int64_t rows, int64_t cols, int64_t depth,
              int64_t top, int64_t bottom, int64_t left, int64_t right, void* out, void* stream) {
  const int64_t out_rows = rows + top + bottom, out_cols = cols + left + right;
  const int64_t n = batch * out_rows * out_cols * depth;
  if (n == 0) return 0;
  return DispatchBytes(element_bytes, [&](auto* tag) {
    using U = std::remove_pointer_t<decltype(tag)>;
    PadKernel<U><<<GridFor(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const U*>(in), rows, cols, depth, out_rows, out_cols, top, left, n, static_cast<U*>(out));
    return LastError();
  });
}

int ApplyUpdate(ElementType type, UpdateOp op, void* const* tensors, const void* const* scalars, const void* grad,
                bool flag, int64_t n, void* stream) {
  if (n == 0) return 0;
  return DispatchFloat(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int count = UpdateScalars(op), slots = UpdateSlots(op);
    ScalarPointers<T> sp{};
    for (int k = 0; k < count; ++k) sp.p[k] = static_cast<const T*>(scalars[k]);
    T* var = static_cast<T*>(tensors[0]);
    T* slot1 = slots > 0 ? static_cast<T*>(tensors[1]) : nullptr;
    T* slot2 = slots > 1 ? static_cast<T*>(tensors[2]) : nullptr;
    const T* g = static_cast<const T*>(grad);
    auto launch = [&](auto op_tag) {
      UpdateKernel<T, decltype(op_tag)::value><<<GridFor(n), kThreads, 0, s>>>(var, slot1, slot2, sp, g, flag, n);
    };
    switch (op) {
      case UpdateOp::kGradientDescent: launch(std::integral_constant<UpdateOp, UpdateOp::kGradientDescent>()); break;
      case UpdateOp::kMomentum: launch(std::integral_constant<UpdateOp, UpdateOp::kMomentum>()); break;
      case UpdateOp::kAdam: launch(std::integral_constant<UpdateOp, UpdateOp::kAdam>()); break;
      case UpdateOp::kAdagrad: launch(std::integral_constant<UpdateOp, UpdateOp::kAdagrad>()); break;
      case UpdateOp::kRMSProp: launch(std::integral_constant<UpdateOp, UpdateOp::kRMSProp>()); break;
    }
    return LastError();
  });
}

}  // namespace cuda
}  // namespace tfrun
