// Elementwise math, comparisons, reductions and the softmax family on the
// CPU, as Eigen expressions where TensorFlow's CPU kernels are Eigen
// expressions (cwise_ops.h, reduction_ops.h, xent_op.h), so their
// arithmetic is Eigen's: float32 Tanh, Sigmoid, Exp and Log TensorFlow's
// Eigen's approximations (tf_float_math.h), sums its tree reductions.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "core/runtime/kernel_shapes.h"
#include "core/base/parallel.h"
#include "kernels/cpu/cpu_eigen.h"
#include "kernels/cpu/tf_float_math.h"
#include "kernels/elementwise_family.h"

namespace tfrun {
namespace cpu {
namespace {

// ---- Broadcasting (TensorFlow's BCast, for any number of operands) ----

// Calls f(i, offsets) for every output element i, offsets[k] being operand
// k's element (an odometer over the output's coordinates).
template <size_t K, typename F>
void ForEachBroadcast(const BroadcastPlan& plan, F&& f) {
  const int64_t n = NumElements(plan.output).value_or(0);
  std::array<int64_t, K> offsets{};
  if (plan.all_simple) {
    // Each operand is the output's shape (element i) or one element (0).
    std::array<int64_t, K> scale{};
    for (size_t k = 0; k < K; ++k) scale[k] = plan.single[k] ? 0 : 1;
    for (int64_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < K; ++k) offsets[k] = i * scale[k];
      f(i, offsets);
    }
    return;
  }
  const size_t rank = plan.output.size();
  std::vector<int64_t> coord(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, offsets);
    for (size_t d = rank; d-- > 0;) {
      for (size_t k = 0; k < K; ++k) offsets[k] += plan.strides[k][d];
      if (++coord[d] < plan.output[d]) break;
      for (size_t k = 0; k < K; ++k) offsets[k] -= plan.strides[k][d] * plan.output[d];
      coord[d] = 0;
    }
  }
}

// ---- Elementwise binary ops ----

// The binary family's functions (elementwise_family.h); Add, Sub and Mul
// have their kernels in cpu_kernels.cc (ArithmeticKernel).
using Binary = BinaryFn;

template <typename T>
T FloorModOf(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    if (y == 0) return 0;  // TensorFlow fails (below) before this is reached
    // x % -1 is 0, but INT_MIN % -1 traps (the quotient overflows);
    // TensorFlow's functor gives 0.
    if constexpr (std::is_signed_v<T>) {
      if (y == -1) return 0;
    }
    T r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  } else {
    const T r = std::fmod(x, y);
    return r != T(0) && ((r < T(0)) != (y < T(0))) ? r + y : r;
  }
}

template <typename T>
T FloorDivOf(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (y == -1 && x == std::numeric_limits<T>::min()) return x;
    }
    const T q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  } else {
    return std::floor(x / y);
  }
}

// One element of op(x, y) in T (half and bfloat16 through float).
template <Binary Op, typename T>
T ApplyBinary(T x, T y) {
  if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    return T(ApplyBinary<Op, float>(static_cast<float>(x), static_cast<float>(y)));
  } else {
    if constexpr (Op == Binary::kRealDiv) return x / y;
    if constexpr (Op == Binary::kFloorDiv) return FloorDivOf(x, y);
    if constexpr (Op == Binary::kFloorMod) return FloorModOf(x, y);
    if constexpr (Op == Binary::kMaximum) return x < y ? y : x;
    if constexpr (Op == Binary::kMinimum) return y < x ? y : x;
    if constexpr (Op == Binary::kSquaredDifference) return (x - y) * (x - y);
    if constexpr (Op == Binary::kPow) return static_cast<T>(std::pow(x, y));
    // The gradient ops take (gradients, features) or (y, dy), as TensorFlow's.
    // relu_op_functor.h: gradients * (features > 0), so a negative gradient gives -0 (and NaN stays NaN).
    if constexpr (Op == Binary::kReluGrad) return x * T(y > T(0) ? 1 : 0);
    if constexpr (Op == Binary::kSigmoidGrad) return y * x * (T(1) - x);
    if constexpr (Op == Binary::kTanhGrad) return y * (T(1) - x * x);
    // cwise_ops_gradients.h, the products grouped as its functors group
    // them (their packet and scalar forms round alike; a 0 gradient is +0).
    if constexpr (Op == Binary::kRsqrtGrad) return y == T(0) ? T(0) : T(-0.5) * (y * x) * (x * x);
    if constexpr (Op == Binary::kSqrtGrad) return (T(0.5) / x) * y;
    if constexpr (Op == Binary::kReciprocalGrad) return y == T(0) ? T(0) : -(x * x) * y;
    // cwise_ops.h div_no_nan: 0 where y is 0, whatever x is.
    if constexpr (Op == Binary::kDivNoNan) return y == T(0) ? T(0) : x / y;
    // relu_op_functor.h: g * ((f > 0) * (f < 6)); elu_op.h: a < 0 ? (a + 1) * g : g.
    if constexpr (Op == Binary::kRelu6Grad) return x * T(y > T(0) && y < T(6) ? 1 : 0);
    if constexpr (Op == Binary::kEluGrad) return y < T(0) ? (y + T(1)) * x : x;
  }
}

template <Binary Op, typename T>
struct BinaryFunctor {
  T operator()(const T& x, const T& y) const { return ApplyBinary<Op, T>(x, y); }
};

template <Binary Op>
constexpr bool kFloatOnly = BinaryFloatOnly(Op);

// The gradient ops take two tensors of one shape (no broadcasting).
template <Binary Op>
constexpr bool kSameShape = Op >= Binary::kReluGrad;

// Two operands' broadcast, NumPy's way; none where they have one shape,
// whose element-by-element loop needs no plan (a plan's vectors cost more
// than a scalar's arithmetic: a while loop's Less and Add).
StatusOr<std::optional<BroadcastPlan>> PlanUnlessSameShape(KernelContext& c) {
  const Shape& x = c.inputs[0].shape();
  const Shape& y = c.inputs[1].shape();
  if (x == y) return std::optional<BroadcastPlan>();
  std::optional<BroadcastPlan> plan = PlanBroadcast({&x, &y});
  if (!plan) return c.Fail(fmt::format("Incompatible shapes: {} vs. {}", ShapeDebugString(x), ShapeDebugString(y)));
  return plan;
}

// ReluGrad of float32, relu_op_functor.h's gradients * (features > 0),
// four lanes at a time, eight where the processor has AVX2: the
// comparison's mask picks 1 or 0, then the product, so a NaN or infinite
// gradient and a -0 come out as TensorFlow's do. Eigen 3.4 evaluates the
// comparison and its cast one element at a time, and a plain loop keeps a
// branch (a float comparison may trap): a quarter of CIFAR-10's ReluGrad
// time, against TensorFlow's.
void ReluGradRangeSse(const float* gradients, const float* features, float* out, int64_t begin, int64_t end) {
  const __m128 zero = _mm_setzero_ps();
  const __m128 one = _mm_set1_ps(1.0f);
  int64_t i = begin;
  for (; i + 4 <= end; i += 4) {
    const __m128 positive = _mm_cmpgt_ps(_mm_loadu_ps(features + i), zero);
    _mm_storeu_ps(out + i, _mm_mul_ps(_mm_loadu_ps(gradients + i), _mm_and_ps(positive, one)));
  }
  for (; i < end; ++i) out[i] = gradients[i] * (features[i] > 0.0f ? 1.0f : 0.0f);
}

__attribute__((target("avx2"))) void ReluGradRangeAvx2(const float* gradients, const float* features, float* out,
                                                       int64_t begin, int64_t end) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 positive = _mm256_cmp_ps(_mm256_loadu_ps(features + i), zero, _CMP_GT_OS);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(gradients + i), _mm256_and_ps(positive, one)));
  }
  _mm256_zeroupper();  // before SSE code (FirstMaxAvx2 in nn_kernels.cc says why)
  ReluGradRangeSse(gradients, features, out, i, end);
}

void ReluGradF32(const float* gradients, const float* features, float* out, int64_t n) {
  const auto range = [&](int64_t begin, int64_t end) {
    (ProcessorHasAvx2() ? ReluGradRangeAvx2 : ReluGradRangeSse)(gradients, features, out, begin, end);
  };
  if (n < kParallelElements) {
    range(0, n);
    return;
  }
  MultiThreadedSection section;
  PoolDevice().parallelFor(n, Eigen::TensorOpCost(2 * sizeof(float), sizeof(float), 3),
                           [&](Eigen::Index begin, Eigen::Index end) { range(begin, end); });
}

template <Binary Op>
Status BinaryKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& y = c.inputs[1];
  if constexpr (kSameShape<Op>) TFRUN_RETURN_IF_ERROR(RequireSameShape(c));
  TFRUN_ASSIGN_OR_RETURN(const std::optional<BroadcastPlan> plan, PlanUnlessSameShape(c));
  const bool same_shape = !plan.has_value();
  if constexpr (Op == Binary::kFloorMod || Op == Binary::kFloorDiv) {
    if (x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64) {
      for (int64_t i = 0; i < y.num_elements(); ++i) {
        if (IntAt(y, i) == 0) return c.Fail("Integer division by zero");
      }
    }
  }
  // An input of the output's shape on its last read becomes the output, as
  // TensorFlow's BinaryOpShared forwards {0, 1}: each element is written
  // after its own inputs are read (a broadcast input is never forwarded).
  TFRUN_RETURN_IF_ERROR(c.ForwardOrAllocateOutput({0, 1}, same_shape ? x.shape() : plan->output));
  return ForDType<IsNumber>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (kFloatOnly<Op> && !kIsFloat<T>) {
      return RuntimeError(fmt::format("no CPU kernel for {}", Name(c.node.dtype)));
    } else {
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* out = c.output.data<T>();
      const int64_t n = c.output.num_elements();
      if (same_shape) {  // the gradients' case: on the pool when large
        if constexpr (Op == Binary::kReluGrad && std::is_same_v<T, float>) {
          ReluGradF32(px, py, out, n);
        } else if constexpr (Op == Binary::kReluGrad) {
          // relu_op_functor.h's own expression.
          Assign(FlatOf<T>(c.output), ConstFlatOf<T>(x) * (ConstFlatOf<T>(y) > T(0)).template cast<T>(), n);
        } else {
          Assign(FlatOf<T>(c.output), ConstFlatOf<T>(x).binaryExpr(ConstFlatOf<T>(y), BinaryFunctor<Op, T>()), n);
        }
        return Status::Ok();
      }
      ForEachBroadcast<2>(*plan, [&](int64_t i, const std::array<int64_t, 2>& o) {
        out[i] = ApplyBinary<Op, T>(px[o[0]], py[o[1]]);
      });
      return Status::Ok();
    }
  });
}

// LeakyReluGrad(gradients, features) (relu_op_functor.h):
// (features > 0).select(gradients, gradients * alpha).
Status LeakyReluGradKernel(KernelContext& c) {
  const Tensor& g = c.inputs[0];
  const Tensor& f = c.inputs[1];
  TFRUN_RETURN_IF_ERROR(RequireSameShape(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.shape()));
  const float alpha = c.FloatAttr("alpha", 0.2f);
  return ForDType<IsFloat>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* pg = g.data<T>();
    const T* pf = f.data<T>();
    T* out = c.output.data<T>();
    for (int64_t i = 0; i < g.num_elements(); ++i) out[i] = pf[i] > T(0) ? pg[i] : T(pg[i] * T(alpha));
    return Status::Ok();
  });
}

// ---- Comparisons and Select ----

using Compare = CompareFn;  // the comparison family (elementwise_family.h)

template <Compare Op, typename T>
bool ApplyCompare(T x, T y) {
  if constexpr (Op == Compare::kLess) return x < y;
  if constexpr (Op == Compare::kLessEqual) return x <= y;
  if constexpr (Op == Compare::kGreater) return x > y;
  if constexpr (Op == Compare::kGreaterEqual) return x >= y;
  if constexpr (Op == Compare::kEqual) return x == y;
  if constexpr (Op == Compare::kNotEqual) return x != y;
}

template <Compare Op>
Status CompareKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& y = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const std::optional<BroadcastPlan> plan, PlanUnlessSameShape(c));
  const bool same_shape = !plan.has_value();
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(same_shape ? x.shape() : plan->output));
  return ForDType<IsAnyType>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, StringByte>) {
      // Strings: TensorFlow registers Equal and NotEqual only.
      if constexpr (Op != Compare::kEqual && Op != Compare::kNotEqual) {
        return RuntimeError("no CPU kernel for string comparisons");
      } else {
        bool* out = c.output.data<bool>();
        const auto compare = [&](int64_t i, int64_t a, int64_t b) {
          out[i] = ApplyCompare<Op, std::string_view>(x.StringAt(a), y.StringAt(b));
        };
        if (same_shape) {
          for (int64_t i = 0; i < c.output.num_elements(); ++i) compare(i, i, i);
        } else {
          ForEachBroadcast<2>(*plan, [&](int64_t i, const std::array<int64_t, 2>& o) { compare(i, o[0], o[1]); });
        }
        return Status::Ok();
      }
    } else {
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      bool* out = c.output.data<bool>();
      if (same_shape) {
        const int64_t n = c.output.num_elements();
        for (int64_t i = 0; i < n; ++i) out[i] = ApplyCompare<Op, T>(px[i], py[i]);
        return Status::Ok();
      }
      ForEachBroadcast<2>(*plan, [&](int64_t i, const std::array<int64_t, 2>& o) {
        out[i] = ApplyCompare<Op, T>(px[o[0]], py[o[1]]);
      });
      return Status::Ok();
    }
  });
}

// LogicalAnd and LogicalOr (cwise_op_logical_and.cc, _or.cc): bool in and
// out, broadcast as the comparisons are.
template <bool kAnd>
Status LogicalBinaryKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& y = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const std::optional<BroadcastPlan> plan, PlanUnlessSameShape(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan ? plan->output : x.shape()));
  const bool* px = x.data<bool>();
  const bool* py = y.data<bool>();
  bool* out = c.output.data<bool>();
  const auto apply = [](bool a, bool b) { return kAnd ? (a && b) : (a || b); };
  if (!plan) {
    for (int64_t i = 0; i < c.output.num_elements(); ++i) out[i] = apply(px[i], py[i]);
  } else {
    ForEachBroadcast<2>(*plan, [&](int64_t i, const std::array<int64_t, 2>& o) { out[i] = apply(px[o[0]], py[o[1]]); });
  }
  return Status::Ok();
}

Status LogicalNotKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(x.shape()));
  for (int64_t i = 0; i < x.num_elements(); ++i) c.output.data<bool>()[i] = !x.data<bool>()[i];
  return Status::Ok();
}

// SelectV2(condition, t, e): all three broadcast together.
Status SelectV2Kernel(KernelContext& c) {
  const Tensor& cond = c.inputs[0];
  const Tensor& t = c.inputs[1];
  const Tensor& e = c.inputs[2];
  const std::optional<BroadcastPlan> plan = PlanBroadcast({&cond.shape(), &t.shape(), &e.shape()});
  if (!plan) {
    return c.Fail(fmt::format("condition {}, then {}, and else {} must be broadcastable",
                              ShapeDebugString(cond.shape()), ShapeDebugString(t.shape()),
                              ShapeDebugString(e.shape())));
  }
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan->output));
  const size_t element = Info(c.node.dtype).size;
  const bool* pc = cond.data<bool>();
  const char* pt = static_cast<const char*>(t.raw());
  const char* pe = static_cast<const char*>(e.raw());
  char* out = static_cast<char*>(c.output.raw());
  ForEachBroadcast<3>(*plan, [&](int64_t i, const std::array<int64_t, 3>& o) {
    std::memcpy(out + i * element, pc[o[0]] ? pt + o[1] * element : pe + o[2] * element, element);
  });
  return Status::Ok();
}

// Select(condition, t, e): condition of t's shape, or a vector along t's
// first dimension.
Status SelectKernel(KernelContext& c) {
  const Tensor& cond = c.inputs[0];
  const Tensor& t = c.inputs[1];
  const Tensor& e = c.inputs[2];
  if (t.shape() != e.shape()) {
    return c.Fail(fmt::format("'then' and 'else' must have the same size.  but received: {} vs. {}",
                              ShapeDebugString(t.shape()), ShapeDebugString(e.shape())));
  }
  const bool rows = cond.rank() == 1 && t.rank() > 1;
  if (!rows && cond.shape() != t.shape()) {
    return c.Fail(fmt::format("'condition' and 'then' must have the same size.  but received: {} vs. {}",
                              ShapeDebugString(cond.shape()), ShapeDebugString(t.shape())));
  }
  if (rows && cond.shape()[0] != t.shape()[0]) {
    return c.Fail("Number of batches of 'then' must match size of 'cond', but saw: " + std::to_string(t.shape()[0]) +
                  " vs. " + std::to_string(cond.shape()[0]));
  }
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(t.shape()));
  const size_t element = Info(c.node.dtype).size;
  const int64_t n = t.num_elements();
  const int64_t per_row = rows && cond.num_elements() > 0 ? n / cond.num_elements() : 1;
  for (int64_t i = 0; i < n; ++i) {
    const bool pick = cond.data<bool>()[rows ? i / per_row : i];
    std::memcpy(static_cast<char*>(c.output.raw()) + i * element,
                static_cast<const char*>((pick ? t : e).raw()) + i * element, element);
  }
  return Status::Ok();
}

// ---- Elementwise unary ops ----

template <UnaryOp Op>
Status UnaryKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  // Elu reads its input again after writing exp(x) to the output: never in
  // its input's buffer. The others read each element before writing it.
  if constexpr (Op == UnaryOp::kElu) {
    TFRUN_RETURN_IF_ERROR(c.AllocateOutput(x.shape()));
  } else {
    TFRUN_RETURN_IF_ERROR(c.ForwardOrAllocateOutput({0}, x.shape()));
  }
  return ForDType<IsNumber>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (UnaryFloatOnly(Op) && !kIsFloat<T>) {
      return RuntimeError(fmt::format("no CPU kernel for {}", Name(c.node.dtype)));
    } else {
      const int64_t n = x.num_elements();
      if constexpr (std::is_same_v<T, float> &&
                    (Op == UnaryOp::kTanh || Op == UnaryOp::kSigmoid || Op == UnaryOp::kExp ||
                     Op == UnaryOp::kLog || Op == UnaryOp::kRsqrt || Op == UnaryOp::kReciprocal)) {
        // TensorFlow's Eigen approximations, not Debian's (tf_float_math.h).
        constexpr TfFloatFunction f = Op == UnaryOp::kTanh      ? TfFloatFunction::kTanh
                                      : Op == UnaryOp::kSigmoid ? TfFloatFunction::kSigmoid
                                      : Op == UnaryOp::kExp     ? TfFloatFunction::kExp
                                      : Op == UnaryOp::kLog     ? TfFloatFunction::kLog
                                      : Op == UnaryOp::kRsqrt   ? TfFloatFunction::kRsqrt
                                                                : TfFloatFunction::kReciprocal;
        ApplyTfFloatFunction(f, x.data<float>(), c.output.data<float>(), n);
        return Status::Ok();
      }
      auto in = ConstFlatOf<T>(x);
      auto out = FlatOf<T>(c.output);
      if constexpr (Op == UnaryOp::kNeg) Assign(out, -in, n);
      if constexpr (Op == UnaryOp::kSquare) Assign(out, in.square(), n);
      if constexpr (Op == UnaryOp::kSqrt) Assign(out, in.sqrt(), n);
      if constexpr (Op == UnaryOp::kRsqrt) Assign(out, in.unaryExpr(ExactRsqrt()), n);  // double, half, bfloat16
      if constexpr (Op == UnaryOp::kExp) Assign(out, in.exp(), n);
      if constexpr (Op == UnaryOp::kLog) Assign(out, in.log(), n);
      if constexpr (Op == UnaryOp::kSigmoid) Assign(out, in.sigmoid(), n);
      if constexpr (Op == UnaryOp::kTanh) Assign(out, in.tanh(), n);
      if constexpr (Op == UnaryOp::kAbs) Assign(out, in.abs(), n);
      if constexpr (Op == UnaryOp::kSign) Assign(out, in.sign(), n);
      if constexpr (Op == UnaryOp::kReciprocal) Assign(out, in.inverse(), n);
      if constexpr (Op == UnaryOp::kLog1p) Assign(out, in.log1p(), n);
      if constexpr (Op == UnaryOp::kRelu6) Assign(out, in.cwiseMax(T(0)).cwiseMin(T(6)), n);
      if constexpr (Op == UnaryOp::kFloor || Op == UnaryOp::kCeil || Op == UnaryOp::kRound) {
        // Element by element in float or double: the C library's floor,
        // ceil and rint (half to even) round as SSE4.1's roundps, which
        // TensorFlow's build uses, and keep -0 (ceil(-0.5) is -0), which
        // Eigen's SSE2 fallback loses. TensorFlow 2.21's CPU Round of an
        // integer gives 0 for every value (measured, int32 and int64:
        // testdata/golden/DERIVATIONS.md); tfrun gives the same.
        const T* p = x.data<T>();
        T* o = c.output.data<T>();
        using Wide = std::conditional_t<std::is_same_v<T, double>, double, float>;
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (!kIsFloat<T>) {
            o[i] = T(0);
          } else {
            const Wide v = static_cast<Wide>(p[i]);
            o[i] = T(Op == UnaryOp::kFloor ? std::floor(v) : Op == UnaryOp::kCeil ? std::ceil(v) : std::rint(v));
          }
        }
      }
      if constexpr (Op == UnaryOp::kElu || Op == UnaryOp::kLeakyRelu) {
        // elu_op.h: exp(x) - 1 below 0 (not expm1); relu_op.h LeakyRelu:
        // x above 0, else x * alpha.
        const T* p = x.data<T>();
        T* o = c.output.data<T>();
        if constexpr (Op == UnaryOp::kElu) {
          if constexpr (std::is_same_v<T, float>) {
            ApplyTfFloatFunction(TfFloatFunction::kExp, p, o, n);
          } else {
            Assign(out, in.exp(), n);
          }
          for (int64_t i = 0; i < n; ++i) o[i] = p[i] < T(0) ? T(o[i] - T(1)) : p[i];
        } else {
          const T alpha = T(c.FloatAttr("alpha", 0.2f));
          for (int64_t i = 0; i < n; ++i) o[i] = p[i] > T(0) ? p[i] : T(p[i] * alpha);
        }
      }
      if constexpr (Op == UnaryOp::kSoftplus) {
        // softplus_op.h: x above -log(eps)+2 is x, below log(eps)+2 exp(x).
        const T threshold = T(std::log(std::numeric_limits<float>::epsilon()) + 2);
        const T* p = x.data<T>();
        T* o = c.output.data<T>();
        for (int64_t i = 0; i < n; ++i) {
          const T v = p[i];
          o[i] = v > -threshold ? v : v < threshold ? T(std::exp(static_cast<float>(v)))
                                                    : T(std::log1p(std::exp(static_cast<float>(v))));
        }
      }
      return Status::Ok();
    }
  });
}

// UnaryKernel for each op, indexed by UnaryOp.
template <size_t... I>
KernelFn UnaryKernelFor(UnaryOp op, std::index_sequence<I...>) {
  static constexpr KernelFn kKernels[] = {&UnaryKernel<static_cast<UnaryOp>(I)>...};
  return kKernels[static_cast<size_t>(op)];
}

// ZerosLike, OnesLike: every type but string.
template <int Value>
Status FillLikeKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[0].shape()));
  return ForDType<IsAnyType>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, StringByte>) {
      return RuntimeError("no CPU kernel for strings");
    } else {
      std::fill_n(c.output.data<T>(), c.output.num_elements(), T(Value));
      return Status::Ok();
    }
  });
}

// ---- Reductions (Sum, Mean, Prod, Max, Min, All, Any) ----

using Reduce = ReduceFn;  // the reduction family (elementwise_family.h)

template <Reduce Op, typename T>
T Identity() {
  if constexpr (Op == Reduce::kProd || Op == Reduce::kAll) return T(1);
  if constexpr (Op == Reduce::kMax) return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                                               : std::numeric_limits<T>::lowest();
  if constexpr (Op == Reduce::kMin) return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                                               : std::numeric_limits<T>::max();
  return T(0);
}

// `out = in.reduce(dims)` with the Eigen reducer of Op.
template <Reduce Op, typename Out, typename In, typename Dims>
void EigenReduce(Out out, const In& in, const Dims& dims, int64_t n) {
  if constexpr (Op == Reduce::kSum) Assign(out, in.sum(dims), n);
  if constexpr (Op == Reduce::kMean) Assign(out, in.mean(dims), n);
  if constexpr (Op == Reduce::kProd) Assign(out, in.prod(dims), n);
  if constexpr (Op == Reduce::kMax) Assign(out, in.maximum(dims), n);
  if constexpr (Op == Reduce::kMin) Assign(out, in.minimum(dims), n);
  if constexpr (Op == Reduce::kAll) Assign(out, in.all(dims), n);
  if constexpr (Op == Reduce::kAny) Assign(out, in.any(dims), n);
}

// TensorFlow's sum of a row of n floats (its Eigen's InnerMostDimReducer
// on AVX, 8 lanes): whole blocks of 32 into four lane accumulators, folded
// into the first; then whole packets of 8 into it; the n % 8 left over
// summed in order; the result that sum plus the lanes folded
// ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)). Measured equal to TensorFlow 2.21's
// reduce_sum over the last axis on 4,920 rows of 1 to 1,000 values
// (DERIVATIONS.md), and to its whole-tensor reduce_sum up to 4,096 values
// (beyond that its reducer splits the work: kTfRowSumLimit).
constexpr int64_t kTfRowSumLimit = 4096;
float TfRowSum(const float* v, int64_t n) {
  constexpr int64_t kLanes = 8;
  float lanes[4][kLanes] = {};
  int64_t start = 0;
  if (n >= 4 * kLanes) {
    const int64_t blocks = n / (4 * kLanes) * (4 * kLanes);
    for (int64_t j = 0; j < blocks; j += 4 * kLanes) {
      for (int k = 0; k < 4; ++k) {
        for (int64_t l = 0; l < kLanes; ++l) lanes[k][l] += v[j + k * kLanes + l];
      }
    }
    for (int k = 1; k < 4; ++k) {
      for (int64_t l = 0; l < kLanes; ++l) lanes[0][l] += lanes[k][l];
    }
    start = blocks;
  }
  const int64_t packets = n / kLanes * kLanes;
  for (int64_t j = start; j < packets; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[0][l] += v[j + l];
  }
  float tail = 0;
  for (int64_t j = packets; j < n; ++j) tail += v[j];
  const float* a = lanes[0];
  const float b0 = a[0] + a[4], b1 = a[1] + a[5], b2 = a[2] + a[6], b3 = a[3] + a[7];
  return tail + ((b0 + b2) + (b1 + b3));
}

// Columns [c0, c1) of the sums of `rows` rows of `cols` floats, in
// TensorFlow's order (its Eigen's InnerMostDimPreserver on 8-lane packets):
// a column is summed from 0 down the rows; from 16 rows, whole packets of
// columns keep four sums, row j in sum j % 4 over the rows in whole fours,
// folded into the first in order, which then takes the rows left over. The
// last cols % 8 columns are Eigen's scalar path: always from 0 down.
// Measured equal to TensorFlow 2.21's reduce_sum(x, 0) (DERIVATIONS.md).
void OuterRowSums(const float* in, int64_t rows, int64_t cols, int64_t c0, int64_t c1, float* out) {
  constexpr int64_t kLanes = 8;
  const int64_t packed_end = std::min(c1, cols / kLanes * kLanes);
  auto down_the_rows = [&](int64_t from, int64_t to) {
    std::fill(out + from, out + to, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = in + r * cols;
      for (int64_t j = from; j < to; ++j) out[j] += row[j];
    }
  };
  if (rows < 16) {
    down_the_rows(c0, c1);
    return;
  }
  const int64_t fours = rows / 4 * 4;
  constexpr int64_t kChunk = 256;  // columns whose four sums stay in registers and L1
  for (int64_t j0 = c0; j0 < packed_end; j0 += kChunk) {
    const int64_t j1 = std::min(packed_end, j0 + kChunk);
    float sums[4][kChunk] = {};
    for (int64_t r = 0; r < fours; r += 4) {
      for (int k = 0; k < 4; ++k) {
        const float* row = in + (r + k) * cols;
        for (int64_t j = j0; j < j1; ++j) sums[k][j - j0] += row[j];
      }
    }
    for (int64_t j = j0; j < j1; ++j) {
      float s = sums[0][j - j0];
      s += sums[1][j - j0];
      s += sums[2][j - j0];
      s += sums[3][j - j0];
      for (int64_t r = fours; r < rows; ++r) s += in[r * cols + j];
      out[j] = s;
    }
  }
  down_the_rows(std::max(c0, packed_end), c1);
}

template <Reduce Op>
Status ReduceKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const ReductionLayout layout, PlanReduction(c));
  const Tensor& input = c.inputs[0];
  const std::vector<int64_t>& d = layout.dims;
  return ForDType<IsAnyType>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    constexpr bool logical = Op == Reduce::kAll || Op == Reduce::kAny;
    if constexpr (std::is_same_v<T, StringByte> || (std::is_same_v<T, bool> != logical)) {
      return RuntimeError(fmt::format("no CPU kernel for {}", Name(c.node.dtype)));
    } else {
      if (input.num_elements() > 0 && (d.empty() || (d.size() == 1 && !layout.first_reduced))) {
        // Only dimensions of size 1 reduced: the input as it is, reshaped,
        // as TensorFlow's Grappler makes such a reduction a Reshape (a
        // CIFAR-10 tower's gradient "average" over one tower was a copy of
        // 3.5 MB).
        c.output = input.Reshaped(layout.output);
        return Status::Ok();
      }
      TFRUN_RETURN_IF_ERROR(c.AllocateOutput(layout.output));
      const T* in = input.data<T>();
      T* out = c.output.data<T>();
      const int64_t n_out = c.output.num_elements();
      const int64_t n_in = input.num_elements();
      if (n_in == 0) {
        // Nothing to reduce: the reducer's identity (Mean: 0/0).
        T fill = Identity<Op, T>();
        if constexpr (Op == Reduce::kMean && kIsFloat<T>) fill = T(std::numeric_limits<float>::quiet_NaN());
        std::fill_n(out, n_out, fill);
        return Status::Ok();
      }
      using Index = Eigen::Index;
      if constexpr (std::is_same_v<T, float> && (Op == Reduce::kSum || Op == Reduce::kMean)) {
        // float32 sums in TensorFlow's order where it is known (TfRowSum):
        // everything, or the last of two dimensions; Mean is the sum over
        // the count, as TensorFlow's MeanReducer divides.
        const bool everything = d.size() == 1 && layout.first_reduced;
        const bool rows = d.size() == 2 && !layout.first_reduced;
        const int64_t row = everything ? d[0] : rows ? d[1] : 0;
        if ((everything || rows) && row <= kTfRowSumLimit) {
          for (int64_t r = 0; r < n_out; ++r) {
            const float sum = TfRowSum(in + r * row, row);
            out[r] = Op == Reduce::kMean ? sum / static_cast<float>(row) : sum;
          }
          return Status::Ok();
        }
      }
      if constexpr (std::is_same_v<T, float> && (Op == Reduce::kSum || Op == Reduce::kMean)) {
        // Rows summed into columns (the towers' gradients averaged) in
        // TensorFlow's order (OuterRowSums); Mean is that sum over the
        // count. Eigen's own evaluation of it took three times TensorFlow's
        // time.
        if (d.size() == 2 && layout.first_reduced) {
          const int64_t rows = d[0], cols = d[1];
          constexpr int64_t kBlock = 1024;  // columns a task: a multiple of the packet
          ParallelRows((cols + kBlock - 1) / kBlock, rows * kBlock, [&](int64_t first, int64_t last) {
            const int64_t c0 = first * kBlock, c1 = std::min(cols, last * kBlock);
            OuterRowSums(in, rows, cols, c0, c1, out);
            if (Op == Reduce::kMean) {
              const float count = static_cast<float>(rows);
              for (int64_t j = c0; j < c1; ++j) out[j] /= count;
            }
          });
          return Status::Ok();
        }
      }
      if (d.size() == 1) {  // everything
        TensorN<T, 0> o(out);
        EigenReduce<Op>(o, ConstTensorN<T, 1>(in, d[0]), Eigen::array<Index, 1>{0}, n_in);
      } else if (d.size() == 2) {
        TensorN<T, 1> o(out, n_out);
        EigenReduce<Op>(o, ConstTensorN<T, 2>(in, d[0], d[1]),
                        Eigen::array<Index, 1>{layout.first_reduced ? 0 : 1}, n_in);
      } else if (d.size() == 3 && !layout.first_reduced) {
        TensorN<T, 2> o(out, d[0], d[2]);
        EigenReduce<Op>(o, ConstTensorN<T, 3>(in, d[0], d[1], d[2]), Eigen::array<Index, 1>{1}, n_in);
      } else if (d.size() == 3) {
        TensorN<T, 1> o(out, n_out);
        EigenReduce<Op>(o, ConstTensorN<T, 3>(in, d[0], d[1], d[2]), Eigen::array<Index, 2>{0, 2}, n_in);
      } else {
        // More alternations: reduce the first reduced pair of dimensions at a
        // time, as TensorFlow's kernel would after its own reshapes (rare in
        // practice: only for axes like [0, 2, 4]).
        std::vector<int64_t> dims = d;
        bool first_reduced = layout.first_reduced;
        // (unique_ptr, not vector: vector<bool> has no data())
        int64_t current_size = n_in;
        std::unique_ptr<T[]> current(new T[n_in]);
        std::copy(in, in + n_in, current.get());
        while (dims.size() > 1 || first_reduced) {
          const size_t r = first_reduced ? 0 : 1;
          int64_t outer = 1, inner = 1;
          for (size_t k = 0; k < r; ++k) outer *= dims[k];
          for (size_t k = r + 1; k < dims.size(); ++k) inner *= dims[k];
          std::unique_ptr<T[]> next(new T[outer * inner]);
          TensorN<T, 2> o(next.get(), outer, inner);
          EigenReduce<Op>(o, ConstTensorN<T, 3>(current.get(), outer, dims[r], inner), Eigen::array<Index, 1>{1},
                          current_size);
          current_size = outer * inner;
          // (Mean: a mean of means over equal-sized groups is the mean.)
          current.swap(next);
          dims.erase(dims.begin() + r);
          if (r == 0) {
            first_reduced = false;
          } else if (r < dims.size()) {
            dims[r - 1] *= dims[r];  // the kept dimensions around it merge
            dims.erase(dims.begin() + r);
          }
          if (dims.size() == 1 && !first_reduced) break;
        }
        std::copy(current.get(), current.get() + n_out, out);
      }
      return Status::Ok();
    }
  });
}

// ---- The softmax family ----

// Rows of the last dimension: Softmax and LogSoftmax (softmax_op_functor.h:
// shifted by the row's maximum).
template <bool Log>
Status SoftmaxKernel(KernelContext& c) {
  const Tensor& logits = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const RowsPlan plan, PlanSoftmax(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(logits.shape()));
  return ForDType<IsFloatOrDouble>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const int64_t classes = plan.classes, rows = plan.rows;
    if (rows == 0) return Status::Ok();
    ConstMatrix<T> in(logits.data<T>(), rows, classes);
    Matrix<T> out(c.output.data<T>(), rows, classes);
    const Eigen::array<Eigen::Index, 1> along_class{1};
    const Eigen::array<Eigen::Index, 2> by_class{1, classes};
    const Eigen::array<Eigen::Index, 2> batch_by_one{rows, 1};
    const int64_t n = logits.num_elements();
    Assign(out, in - in.maximum(along_class).eval().reshape(batch_by_one).broadcast(by_class), n);
    if constexpr (Log) {
      Assign(out, out - out.exp().sum(along_class).log().eval().reshape(batch_by_one).broadcast(by_class), n);
    } else {
      Assign(out, out.exp(), n);
      Assign(out, out * out.sum(along_class).inverse().eval().reshape(batch_by_one).broadcast(by_class), n);
    }
    return Status::Ok();
  });
}

// SoftmaxCrossEntropyWithLogits(features, labels) -> (loss, backprop), as
// xent_op.h computes them; labels and logits broadcast to one 2-D shape.
Status SoftmaxXentKernel(KernelContext& c) {
  const Tensor& logits_in = c.inputs[0];
  const Tensor& labels_in = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const BroadcastPlan xent, PlanSoftmaxXent(c));
  const BroadcastPlan* plan = &xent;
  const int64_t rows = plan->output[0], classes = plan->output[1];
  TFRUN_ASSIGN_OR_RETURN(Tensor loss, c.Allocate(c.node.dtype, {rows}));
  TFRUN_ASSIGN_OR_RETURN(Tensor backprop, c.Allocate(c.node.dtype, plan->output));
  TFRUN_RETURN_IF_ERROR(ForDType<IsFloatOrDouble>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // An operand that broadcasts is made whole first (TensorFlow does the
    // same); one of the output's shape, the usual case, is read in place.
    std::vector<T> logits_v, labels_v;
    auto whole = [&](const Tensor& t, int k, std::vector<T>* copy) -> const T* {
      if (t.shape() == plan->output) return t.data<T>();
      copy->resize(rows * classes);
      ForEachBroadcast<2>(*plan, [&](int64_t i, const std::array<int64_t, 2>& o) { (*copy)[i] = t.data<T>()[o[k]]; });
      return copy->data();
    };
    const T* logits_data = whole(logits_in, 0, &logits_v);
    const T* labels_data = whole(labels_in, 1, &labels_v);
    if (rows * classes == 0) {
      std::fill_n(loss.data<T>(), rows, classes == 0 ? T(std::numeric_limits<float>::quiet_NaN()) : T(0));
      return Status::Ok();
    }
    ConstMatrix<T> logits(logits_data, rows, classes);
    ConstMatrix<T> labels(labels_data, rows, classes);
    Matrix<T> back(backprop.data<T>(), rows, classes);
    Flat<T> out_loss(loss.data<T>(), rows);
    const Eigen::array<Eigen::Index, 1> along_class{1};
    const Eigen::array<Eigen::Index, 2> by_class{1, classes};
    const Eigen::array<Eigen::Index, 2> batch_by_one{rows, 1};
    const int64_t n = rows * classes;
    std::vector<T> scratch_v(rows);
    Flat<T> scratch(scratch_v.data(), rows);
    Assign(scratch, logits.maximum(along_class), n);
    Assign(back, logits - scratch.reshape(batch_by_one).broadcast(by_class), n);
    Assign(scratch, back.exp().sum(along_class), n);
    Assign(out_loss, (labels * (scratch.log().eval().reshape(batch_by_one).broadcast(by_class) - back)).eval().sum(along_class), n);
    Assign(back, (back.exp() / scratch.reshape(batch_by_one).broadcast(by_class)) - labels, n);
    return Status::Ok();
  }));
  c.outputs = {std::move(loss), std::move(backprop)};
  return Status::Ok();
}

// SparseSoftmaxCrossEntropyWithLogits (sparse_xent_op.h): per row, the
// logits less their maximum; loss = log(sum(exp)) - the label's; backprop
// = exp / sum - one_hot(label). float32 as TensorFlow computes it: each
// row's exp and sum through its reducer (TfRowSum, the row's n % 8 last
// exps by expf), the backprop's exp over the whole [batch, classes] array
// at once, log by logf.
Status SparseSoftmaxXentKernel(KernelContext& c) {
  const Tensor& logits_in = c.inputs[0];
  const Tensor& labels = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const XentPlan plan, PlanSparseXent(c));
  const int64_t rows = plan.rows, classes = plan.classes;
  // CheckInvalidLabelIndex: the smallest label if negative, else the largest.
  if (rows > 0) {
    int64_t lowest = IntAt(labels, 0), highest = lowest;
    for (int64_t i = 1; i < rows; ++i) {
      lowest = std::min(lowest, IntAt(labels, i));
      highest = std::max(highest, IntAt(labels, i));
    }
    if (lowest < 0 || highest >= classes) {
      std::string values;
      for (int64_t i = 0; i < rows; ++i) values += (i > 0 ? " " : "") + std::to_string(IntAt(labels, i));
      return c.Fail(fmt::format("Received a label value of {} which is outside the valid range of [0, {}).  Label "
                                "values: {}",
                                lowest < 0 ? lowest : highest, classes, values));
    }
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor loss, c.Allocate(c.node.dtype, {rows}));
  TFRUN_ASSIGN_OR_RETURN(Tensor backprop, c.Allocate(c.node.dtype, {rows, classes}));
  TFRUN_RETURN_IF_ERROR(ForDType<IsFloatOrDouble>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* logits = logits_in.data<T>();
    T* back = backprop.data<T>();
    T* out_loss = loss.data<T>();
    std::vector<T> sums(rows), exps(std::is_same_v<T, float> ? classes : 0);
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = logits + r * classes;
      T* centered = back + r * classes;
      const T highest = *std::max_element(row, row + classes);
      for (int64_t j = 0; j < classes; ++j) centered[j] = row[j] - highest;
      if constexpr (std::is_same_v<T, float>) {
        ApplyTfFloatFunction(TfFloatFunction::kExp, centered, exps.data(), classes);
        sums[r] = TfRowSum(exps.data(), classes);
      } else {
        T sum = 0;
        for (int64_t j = 0; j < classes; ++j) sum += std::exp(centered[j]);
        sums[r] = sum;
      }
      out_loss[r] = std::log(sums[r]) - centered[IntAt(labels, r)];
    }
    if constexpr (std::is_same_v<T, float>) {
      ApplyTfFloatFunction(TfFloatFunction::kExp, back, back, rows * classes);
    } else {
      for (int64_t i = 0; i < rows * classes; ++i) back[i] = std::exp(back[i]);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t label = IntAt(labels, r);
      for (int64_t j = 0; j < classes; ++j) {
        back[r * classes + j] = back[r * classes + j] / sums[r] - (j == label ? T(1) : T(0));
      }
    }
    return Status::Ok();
  }));
  c.outputs = {std::move(loss), std::move(backprop)};
  return Status::Ok();
}

// ArgMax and ArgMin (argmax_op.cc): along `dimension`, the index of the
// first largest (smallest) value, as Eigen's ArgMaxPairReducer keeps the
// lower index on a tie and never takes a NaN (a row of NaNs gives 0).
template <bool Max>
Status ArgKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const ArgPlan plan, PlanArg(c));
  const int64_t outer = plan.outer, inner = plan.inner, size = plan.size;
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  return ForDType<IsNumber>(input.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = input.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        bool found = false;
        T best_value = T(0);
        for (int64_t k = 0; k < size; ++k) {
          const T v = in[(o * size + k) * inner + i];
          if (v != v) continue;  // NaN
          if (!found || (Max ? v > best_value : v < best_value)) {
            best = k;
            best_value = v;
            found = true;
          }
        }
        const int64_t at = o * inner + i;
        if (c.node.dtype == DType::kInt32) {
          c.output.data<int32_t>()[at] = static_cast<int32_t>(best);
        } else {
          c.output.data<int64_t>()[at] = best;
        }
      }
    }
    return Status::Ok();
  });
}

// InTopKV2(predictions, targets, k) (in_topk_op.h): whether fewer than k
// classes score above the target's; false where the target is out of
// range or its score not finite.
Status InTopKKernel(KernelContext& c) {
  const Tensor& predictions = c.inputs[0];
  const Tensor& targets = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const InTopKPlan plan, PlanInTopK(c));
  if (predictions.dtype() != DType::kFloat32) return RuntimeError("no CPU kernel for InTopKV2 of this type");
  const int64_t k = plan.k, batch = plan.batch, classes = plan.classes;
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({batch}));
  const float* p = predictions.data<float>();
  bool* out = c.output.data<bool>();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t target = IntAt(targets, b);
    if (target < 0 || target >= classes || !std::isfinite(p[b * classes + target])) {
      out[b] = false;
      continue;
    }
    const float score = p[b * classes + target];
    int64_t more = 0;
    for (int64_t j = 0; j < classes && more <= k; ++j) more += p[b * classes + j] > score ? 1 : 0;
    out[b] = more < k;
  }
  return Status::Ok();
}

// L2Loss: sum(t ** 2) / 2 (l2loss_op.cc).
Status L2LossKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({}));
  return ForDType<IsFloat>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    TensorN<T, 0> out(c.output.data<T>());
    auto in = ConstFlatOf<T>(c.inputs[0]);
    Assign(out, (in.square() * T(0.5)).sum(), c.inputs[0].num_elements());
    return Status::Ok();
  });
}

// BiasAddGrad: out_backprop summed over every dimension but the channels'
// (the last for NHWC, the second for NCHW).
Status BiasAddGradKernel(KernelContext& c) {
  const Tensor& grad = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const BiasGradPlan plan, PlanBiasAddGrad(c));
  const int64_t channels = plan.channels;
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({channels}));
  return ForDType<IsNumber>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const int64_t outer = plan.outer, inner = plan.inner;
    TensorN<T, 1> out(c.output.data<T>(), channels);
    if (grad.num_elements() == 0) {
      out.setZero();
      return Status::Ok();
    }
    if (inner == 1 && grad.num_elements() >= kParallelElements) {
      // NHWC: column sums of [outer, channels], each block of rows summed
      // on its own thread, the blocks' sums then added in order.
      const int64_t blocks = std::min<int64_t>(outer, Threads() * 4);
      std::vector<T> partial(blocks * channels, T(0));
      const T* in = grad.data<T>();
      MultiThreadedSection section;
      PoolDevice().parallelFor(blocks, Eigen::TensorOpCost(0, 0, static_cast<double>(grad.num_elements() / blocks)),
                               [&](Eigen::Index first, Eigen::Index last) {
                                 for (Eigen::Index b = first; b < last; ++b) {
                                   T* sum = partial.data() + b * channels;
                                   for (int64_t r = b * outer / blocks; r < (b + 1) * outer / blocks; ++r) {
                                     const T* row = in + r * channels;
                                     for (int64_t k = 0; k < channels; ++k) sum[k] += row[k];
                                   }
                                 }
                               });
      T* o = c.output.data<T>();
      std::fill_n(o, channels, T(0));
      for (int64_t b = 0; b < blocks; ++b) {
        for (int64_t k = 0; k < channels; ++k) o[k] += partial[b * channels + k];
      }
      return Status::Ok();
    }
    ConstTensorN<T, 3> in(grad.data<T>(), outer, channels, inner);
    Assign(out, in.sum(Eigen::array<Eigen::Index, 2>{0, 2}), grad.num_elements());
    return Status::Ok();
  });
}

}  // namespace

namespace {

// Each family function's CPU kernel (a switch: the compiler says when a
// function of the table has none).
KernelFn BinaryKernelFor(BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kAdd:
    case BinaryFn::kSub:
    case BinaryFn::kMul: return ArithmeticKernel(fn);
    case BinaryFn::kRealDiv: return BinaryKernel<Binary::kRealDiv>;
    case BinaryFn::kFloorDiv: return BinaryKernel<Binary::kFloorDiv>;
    case BinaryFn::kFloorMod: return BinaryKernel<Binary::kFloorMod>;
    case BinaryFn::kMaximum: return BinaryKernel<Binary::kMaximum>;
    case BinaryFn::kMinimum: return BinaryKernel<Binary::kMinimum>;
    case BinaryFn::kSquaredDifference: return BinaryKernel<Binary::kSquaredDifference>;
    case BinaryFn::kPow: return BinaryKernel<Binary::kPow>;
    case BinaryFn::kDivNoNan: return BinaryKernel<Binary::kDivNoNan>;
    case BinaryFn::kReluGrad: return BinaryKernel<Binary::kReluGrad>;
    case BinaryFn::kSigmoidGrad: return BinaryKernel<Binary::kSigmoidGrad>;
    case BinaryFn::kTanhGrad: return BinaryKernel<Binary::kTanhGrad>;
    case BinaryFn::kRsqrtGrad: return BinaryKernel<Binary::kRsqrtGrad>;
    case BinaryFn::kSqrtGrad: return BinaryKernel<Binary::kSqrtGrad>;
    case BinaryFn::kReciprocalGrad: return BinaryKernel<Binary::kReciprocalGrad>;
    case BinaryFn::kRelu6Grad: return BinaryKernel<Binary::kRelu6Grad>;
    case BinaryFn::kEluGrad: return BinaryKernel<Binary::kEluGrad>;
  }
  return nullptr;
}

KernelFn CompareKernelFor(CompareFn fn) {
  switch (fn) {
    case CompareFn::kLess: return CompareKernel<Compare::kLess>;
    case CompareFn::kLessEqual: return CompareKernel<Compare::kLessEqual>;
    case CompareFn::kGreater: return CompareKernel<Compare::kGreater>;
    case CompareFn::kGreaterEqual: return CompareKernel<Compare::kGreaterEqual>;
    case CompareFn::kEqual: return CompareKernel<Compare::kEqual>;
    case CompareFn::kNotEqual: return CompareKernel<Compare::kNotEqual>;
  }
  return nullptr;
}

KernelFn ReduceKernelFor(ReduceFn fn) {
  switch (fn) {
    case ReduceFn::kSum: return ReduceKernel<Reduce::kSum>;
    case ReduceFn::kMean: return ReduceKernel<Reduce::kMean>;
    case ReduceFn::kProd: return ReduceKernel<Reduce::kProd>;
    case ReduceFn::kMax: return ReduceKernel<Reduce::kMax>;
    case ReduceFn::kMin: return ReduceKernel<Reduce::kMin>;
    case ReduceFn::kAll: return ReduceKernel<Reduce::kAll>;
    case ReduceFn::kAny: return ReduceKernel<Reduce::kAny>;
  }
  return nullptr;
}

}  // namespace

void RegisterMathKernels(KernelRegistry* registry) {
  struct Binding {
    const char* op;
    DTypeSet dtypes;
    KernelFn fn;
  };
  const DTypeSet floats = kFloatTypes;
  const DTypeSet numbers = kNumericTypes;
  const DTypeSet any = kAllTypes;
  const DTypeSet boolean{DType::kBool};
  const DTypeSet f32_64{DType::kFloat32, DType::kFloat64};
  const Binding bindings[] = {
      {"SelectV2", any, SelectV2Kernel},
      {"Select", any, SelectKernel},
      {"OnesLike", any, FillLikeKernel<1>},
      {"ZerosLike", any, FillLikeKernel<0>},
      {"Softmax", f32_64, SoftmaxKernel<false>},
      {"LogSoftmax", f32_64, SoftmaxKernel<true>},
      {"SoftmaxCrossEntropyWithLogits", f32_64, SoftmaxXentKernel},
      {"SparseSoftmaxCrossEntropyWithLogits", f32_64, SparseSoftmaxXentKernel},
      {"LeakyReluGrad", floats, LeakyReluGradKernel},
      {"ArgMax", DTypeSet{DType::kInt32, DType::kInt64}, ArgKernel<true>},
      {"ArgMin", DTypeSet{DType::kInt32, DType::kInt64}, ArgKernel<false>},
      {"InTopKV2", boolean, InTopKKernel},
      {"LogicalAnd", boolean, LogicalBinaryKernel<true>},
      {"LogicalOr", boolean, LogicalBinaryKernel<false>},
      {"LogicalNot", boolean, LogicalNotKernel},
      {"L2Loss", floats, L2LossKernel},
      {"BiasAddGrad", numbers, BiasAddGradKernel},
  };
  for (const Binding& b : bindings) registry->Bind(b.op, kCpu, b.dtypes, b.fn);
  constexpr auto kUnaryOps = std::make_index_sequence<static_cast<size_t>(UnaryOp::kCount)>();
  for (const UnaryFamilyRow& row : kUnaryFamily) {
    registry->Bind(row.op, kCpu, row.types == UnaryTypes::kFloats ? floats : numbers, UnaryKernelFor(row.fn, kUnaryOps));
  }
  for (const BinaryFamilyRow& row : kBinaryFamily) {
    registry->Bind(row.op, kCpu, row.types == UnaryTypes::kFloats ? floats : numbers, BinaryKernelFor(row.fn));
  }
  for (const CompareFamilyRow& row : kCompareFamily) registry->Bind(row.op, kCpu, boolean, CompareKernelFor(row.fn));
  for (const ReduceFamilyRow& row : kReduceFamily) {
    registry->Bind(row.op, kCpu, row.logical ? boolean : numbers, ReduceKernelFor(row.fn));
  }
}

}  // namespace cpu
}  // namespace tfrun
