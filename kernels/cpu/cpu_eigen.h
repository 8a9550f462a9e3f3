// What the CPU kernel files share: Eigen's tensor maps over tfrun's
// buffers, the intra-op thread pool, and dispatch on the node's dtype.
#pragma once

#define EIGEN_USE_THREADS
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>

#include "core/base/parallel.h"
#include "core/runtime/kernel_registry.h"
#include "kernels/elementwise_family.h"

namespace tfrun {
namespace cpu {

// The pool every CPU kernel shares (SetCpuThreads sizes it before the
// first use); started on first use by a large tensor.
const Eigen::ThreadPoolDevice& PoolDevice();
// The pool's thread count: what oneDNN and hand-parallel loops use too.
int Threads();

// Small tensors run inline; larger ones on the pool.
constexpr int64_t kParallelElements = 1 << 15;

template <typename T>
using Flat = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T>
using ConstFlat = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T>
using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T>
using ConstMatrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T, int N>
using ConstTensorN = Eigen::TensorMap<Eigen::Tensor<const T, N, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T, int N>
using TensorN = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor>, Eigen::Aligned>;

template <typename T>
Flat<T> FlatOf(const Tensor& t) {
  return Flat<T>(t.data<T>(), t.num_elements());
}
template <typename T>
ConstFlat<T> ConstFlatOf(const Tensor& t) {
  return ConstFlat<T>(t.data<T>(), t.num_elements());
}

// Evaluates `out = expr` inline or on the pool, by size.
template <typename Out, typename Expr>
void Assign(Out out, const Expr& expr, int64_t n) {
  if (n >= kParallelElements) {
    MultiThreadedSection section;
    out.device(PoolDevice()) = expr;
  } else {
    out = expr;
  }
}

// Calls f(first, last) over ranges of `rows` independent rows (images,
// LRN's depth vectors, a reduction's columns) of `cost` each, on the pool when there is enough
// work.
template <typename F>
void ParallelRows(int64_t rows, int64_t cost, F&& f) {
  if (rows > 1 && rows * cost >= kParallelElements) {
    MultiThreadedSection section;
    PoolDevice().parallelFor(rows, Eigen::TensorOpCost(0, 0, static_cast<double>(cost)),
                             [&](Eigen::Index first, Eigen::Index last) { f(first, last); });
  } else {
    f(0, rows);
  }
}

// Integer arithmetic wraps (two's complement), as TensorFlow's kernels do in
// practice, without signed-overflow undefined behaviour.
template <typename T>
using Arith = std::conditional_t<std::is_same_v<T, int32_t>, uint32_t,
                                 std::conditional_t<std::is_same_v<T, int64_t>, uint64_t, T>>;

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Eigen::half> ||
                          std::is_same_v<T, Eigen::bfloat16>;

// Calls body(TypeTag<T>{}) for `dtype` when it is one of the types the
// body's kernel is written for (`Allowed<T>`), else fails naming it.
template <template <typename> class Allowed, typename Body>
Status ForDType(DType dtype, Body&& body) {
  return DispatchDType(dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (Allowed<T>::value) {
      return body(tag);
    } else {
      return RuntimeError(fmt::format("no CPU kernel for {}", Name(dtype)));
    }
  });
}

// The types arithmetic kernels take: no bool, no string (StringByte), no
// unsigned (dtype.h: only moved).
template <typename T>
struct IsRealNumber : std::bool_constant<std::is_floating_point_v<T> || std::is_same_v<T, int32_t> ||
                                         std::is_same_v<T, int64_t>> {};
template <typename T>
struct IsNumber : std::bool_constant<IsRealNumber<T>::value || std::is_same_v<T, Eigen::half> ||
                                     std::is_same_v<T, Eigen::bfloat16>> {};
template <typename T>
struct IsFloat : std::bool_constant<kIsFloat<T>> {};
template <typename T>
struct IsFloatOrDouble : std::bool_constant<std::is_same_v<T, float> || std::is_same_v<T, double>> {};
template <typename T>
struct IsAnyType : std::true_type {};

// 1/sqrt(x) for the types whose packets TensorFlow's Eigen has no fast
// estimate for (double; half and bfloat16 computed in float). float32
// takes its estimate and Newton step on whole packets (tf_float_math.h:
// 1,882 of 8,009 values differed from this, measured).
struct ExactRsqrt {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, double>) {
      return 1.0 / std::sqrt(x);
    } else {
      return T(1.0 / std::sqrt(static_cast<double>(x)));
    }
  }
};

// Element i of an integer tensor in host memory (Tensor::GetAsInt64).
inline int64_t IntAt(const Tensor& t, int64_t i) { return t.GetAsInt64(i); }
// All of an integer vector's elements.
std::vector<int64_t> IntsOf(const Tensor& t);

// The kernel files' bindings, called by RegisterCpuKernels.
void RegisterMathKernels(KernelRegistry* registry);
void RegisterArrayKernels(KernelRegistry* registry);
void RegisterSummaryKernels(KernelRegistry* registry);
void RegisterQueueKernels(KernelRegistry* registry);
void RegisterCheckpointKernels(KernelRegistry* registry);
void RegisterNnKernels(KernelRegistry* registry);
void RegisterOptimizerKernels(KernelRegistry* registry);
// The elementwise fusion's kernels (fused_elementwise.cc).
void RegisterFusionKernels(KernelRegistry* registry);
// Add, Sub and Mul's kernels (cpu_kernels.cc), for the binary family's
// table (math_kernels.cc binds it); nullptr for the family's other
// functions.
KernelFn ArithmeticKernel(BinaryFn fn);

}  // namespace cpu
}  // namespace tfrun
