#include "kernels/cpu/cpu_kernels.h"

#include "kernels/cpu/matmul_avx2.h"

#define EIGEN_USE_THREADS
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>

namespace tfrun {
namespace {

int g_threads = 0;

// Small tensors run inline; the pool starts on first use by a large one.
constexpr int64_t kParallelElements = 1 << 15;

const Eigen::ThreadPoolDevice& PoolDevice() {
  static auto* pool =
      new Eigen::ThreadPool(g_threads > 0 ? g_threads : std::max(1u, std::thread::hardware_concurrency()));
  static auto* device = new Eigen::ThreadPoolDevice(pool, pool->NumThreads());
  return *device;
}

template <typename T>
using Flat = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T>
using ConstFlat = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T>
using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>, Eigen::Aligned>;
template <typename T>
using ConstMatrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>, Eigen::Aligned>;

// Evaluates `out = expr` inline or on the pool, by size.
template <typename Out, typename Expr>
void Assign(Out out, const Expr& expr, int64_t n) {
  if (n >= kParallelElements) {
    out.device(PoolDevice()) = expr;
  } else {
    out = expr;
  }
}

// Integer arithmetic wraps (two's complement), as TensorFlow's kernels do in
// practice, without signed-overflow undefined behaviour.
template <typename T>
using Arith = std::conditional_t<std::is_same_v<T, int32_t>, uint32_t,
                                 std::conditional_t<std::is_same_v<T, int64_t>, uint64_t, T>>;

// Allocates the node's output and calls body(TypeTag<T>{}) for its numeric
// element type T (the op table keeps bool away from these kernels).
template <typename Body>
Status ForNumericOutput(KernelContext& c, Body&& body) {
  TFRUN_ASSIGN_OR_RETURN(c.output, c.Allocate(c.node.dtype, c.node.shape));
  return DispatchDType(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return RuntimeError(fmt::format("no CPU kernel for {}", Name(c.node.dtype)));
    } else {
      return body(tag);
    }
  });
}

Status MatMulKernel(KernelContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  return ForNumericOutput(c, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // float16/bfloat16 accumulate in float32; integers wrap.
    using Acc =
        std::conditional_t<std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>, float, Arith<T>>;
    const int64_t m = c.node.shape[0], n = c.node.shape[1];
    const int64_t ka = a.shape()[1], kb = b.shape()[1];
    if (m * n == 0) return Status::Ok();
    Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> dims;
    dims[0] = Eigen::IndexPair<Eigen::Index>(c.node.transpose_a ? 0 : 1, c.node.transpose_b ? 1 : 0);
    auto run = [&](const Acc* pa, const Acc* pb, Acc* po) {
      ConstMatrix<Acc> ma(pa, a.shape()[0], ka);
      ConstMatrix<Acc> mb(pb, b.shape()[0], kb);
      Matrix<Acc> mo(po, m, n);
      const int64_t k = c.node.transpose_a ? a.shape()[0] : ka;
      if (m * n * k >= kParallelElements * 8) {
        mo.device(PoolDevice()) = ma.contract(mb, dims);
      } else {
        mo = ma.contract(mb, dims);
      }
    };
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (avx2::Available()) {
        auto fn = [](auto... args) {
          if constexpr (std::is_same_v<T, float>) {
            avx2::MatMulF32(args...);
          } else {
            avx2::MatMulF64(args...);
          }
        };
        fn(a.data<T>(), a.shape()[0], ka, c.node.transpose_a, b.data<T>(), b.shape()[0], kb, c.node.transpose_b,
           c.output.data<T>(), g_threads);
        return Status::Ok();
      }
    }
    if constexpr (std::is_same_v<Acc, float> && !std::is_same_v<T, float>) {
      std::vector<float> fa(a.num_elements()), fb(b.num_elements()), fo(m * n);
      for (int64_t i = 0; i < a.num_elements(); ++i) fa[i] = static_cast<float>(a.data<T>()[i]);
      for (int64_t i = 0; i < b.num_elements(); ++i) fb[i] = static_cast<float>(b.data<T>()[i]);
      run(fa.data(), fb.data(), fo.data());
      for (int64_t i = 0; i < m * n; ++i) c.output.data<T>()[i] = T(fo[i]);
    } else {
      run(reinterpret_cast<const Acc*>(a.data<T>()), reinterpret_cast<const Acc*>(b.data<T>()),
          reinterpret_cast<Acc*>(c.output.data<T>()));
    }
    return Status::Ok();
  });
}

Status AddNKernel(KernelContext& c) {
  return ForNumericOutput(c, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using A = Arith<T>;
    const int64_t n = c.output.num_elements();
    Flat<A> out(reinterpret_cast<A*>(c.output.data<T>()), n);
    auto in = [&](size_t i) { return ConstFlat<A>(reinterpret_cast<const A*>(c.inputs[i].template data<T>()), n); };
    // Left to right, each step rounded in the dtype, as TensorFlow's AddN.
    if (c.inputs.size() == 1) {
      Assign(out, in(0), n);
    } else {
      Assign(out, in(0) + in(1), n);
    }
    for (size_t i = 2; i < c.inputs.size(); ++i) Assign(out, out + in(i), n);
    return Status::Ok();
  });
}

enum class BinaryOp { kAdd, kSub, kMul };

template <BinaryOp Op>
Status BinaryKernel(KernelContext& c) {
  return ForNumericOutput(c, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using A = Arith<T>;
    const int64_t n = c.output.num_elements();
    const Tensor& x = c.inputs[0];
    const Tensor& y = c.inputs[1];
    Flat<A> out(reinterpret_cast<A*>(c.output.data<T>()), n);
    ConstFlat<A> fx(reinterpret_cast<const A*>(x.data<T>()), x.num_elements());
    ConstFlat<A> fy(reinterpret_cast<const A*>(y.data<T>()), y.num_elements());
    auto apply = [&](auto lhs, auto rhs) {
      if constexpr (Op == BinaryOp::kAdd) Assign(out, lhs + rhs, n);
      if constexpr (Op == BinaryOp::kSub) Assign(out, lhs - rhs, n);
      if constexpr (Op == BinaryOp::kMul) Assign(out, lhs * rhs, n);
    };
    // One operand may be a scalar (graph-format.md).
    if (x.rank() == 0 && y.rank() != 0) {
      apply(fx.reshape(Eigen::array<Eigen::Index, 1>{1}).broadcast(Eigen::array<Eigen::Index, 1>{n}), fy);
    } else if (y.rank() == 0 && x.rank() != 0) {
      apply(fx, fy.reshape(Eigen::array<Eigen::Index, 1>{1}).broadcast(Eigen::array<Eigen::Index, 1>{n}));
    } else {
      apply(fx, fy);
    }
    return Status::Ok();
  });
}

// static_cast with defined results where C++ leaves them undefined: NaN and
// out-of-range floats become the integer minimum, as x86's cvtt* do (and so
// TensorFlow's CPU Cast on x86).
template <typename To, typename From>
To CastValue(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<double>(v) != 0.0;
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    const double d = static_cast<double>(v);
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = -lo;  // 2^31 or 2^63
    if (!(d >= lo && d < hi)) return std::numeric_limits<To>::min();
    return static_cast<To>(d);
  } else if constexpr (std::is_same_v<To, Eigen::half> || std::is_same_v<To, Eigen::bfloat16>) {
    return To(static_cast<float>(v));  // Eigen converts through float
  } else {
    return static_cast<To>(v);
  }
}

Status CastKernel(KernelContext& c) {
  const Tensor& in = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(c.output, c.Allocate(c.node.dtype, c.node.shape));
  DispatchDType(in.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    DispatchDType(c.node.dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = in.data<From>();
      To* dst = c.output.data<To>();
      for (int64_t i = 0; i < in.num_elements(); ++i) dst[i] = CastValue<To>(src[i]);
    });
  });
  return Status::Ok();
}

}  // namespace

void SetCpuThreads(int threads) { g_threads = threads; }

void RegisterCpuKernels(KernelRegistry* registry) {
  struct Binding {
    const char* op;
    KernelFn fn;
  };
  static constexpr Binding kBindings[] = {
      {"MatMul", MatMulKernel},
      {"AddN", AddNKernel},
      {"Add", BinaryKernel<BinaryOp::kAdd>},
      {"Sub", BinaryKernel<BinaryOp::kSub>},
      {"Mul", BinaryKernel<BinaryOp::kMul>},
      {"Cast", CastKernel},
  };
  for (const Binding& b : kBindings) registry->Bind(b.op, kCpu, b.fn);
  BindHandleKernels(registry, kCpu);
}

}  // namespace tfrun
