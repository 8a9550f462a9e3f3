#include "kernels/cpu/cpu_kernels.h"

#include "kernels/cpu/matmul_avx2.h"

#include "core/runtime/kernel_shapes.h"
#include "kernels/cpu/cpu_eigen.h"
#include "kernels/cpu/dnnl_loader.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace tfrun {

namespace {

using namespace cpu;  // NOLINT: this file's own helpers

// Allocates the node's output of `shape` and calls body(TypeTag<T>{}) for
// its numeric element type T (the op table keeps bool away from these
// kernels).
// `forwardable`: inputs whose buffer may become the output's
// (KernelContext::ForwardOrAllocateOutput; elementwise kernels only).
template <typename Body>
Status ForNumericOutput(KernelContext& c, const StatusOr<Shape>& shape, Body&& body,
                        std::initializer_list<size_t> forwardable = {}) {
  if (!shape.ok()) return shape.status();
  TFRUN_RETURN_IF_ERROR(c.ForwardOrAllocateOutput(forwardable, *shape));
  return DispatchDType(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return RuntimeError(fmt::format("no CPU kernel for {}", Name(c.node.dtype)));
    } else {
      return body(tag);
    }
  });
}

// Where TensorFlow's CPU MatMul (TF 2.21's x86 build, which has no FMA)
// sums each output's K products one by one in order, each product rounded
// before it is added, from +0.0: a vector-matrix product (M = 1) or a
// matrix-vector one (N = 1) under Eigen's coefficient-based threshold
// (M + K + N < 20), neither operand transposed (LaunchBatchMatMul's
// SequentialMatMulKernel; measured: [[3, -3]] x [[-4.45], [-9.3]] is
// 14.550002, where a fused multiply-add gives 14.550001). Elsewhere its
// contraction fuses multiply and add in K order, as tfrun's AVX2 kernel
// does; the transposed and larger vector products take Eigen's GEMV, whose
// order tfrun does not copy (README, Differences).
// Only up to LaunchBatchMatMul's kMaxCostOuterParallelism (128 * 128): above
// it TensorFlow splits the product into blocks (not measured), and the
// fast kernel keeps large vector products fast.
// float32 products of at least this many multiply-adds (m * k * n) go to
// oneDNN's GEMM, which uses the CPU's widest instructions (AVX-512 where
// there is), as TensorFlow 2.21's default CPU build sends them to oneDNN.
// Measured on an AVX-512 Xeon (bench/RESULTS.md), oneDNN is the faster
// from 32x32x32 up (28 against 4 GFLOP/s there, 211 against 207 at 2048),
// but below 48^3 the AVX2 kernel stays: there it sums as TensorFlow's
// Eigen does, which TensorFlow gives bit for bit with oneDNN on or off up
// to 40x40 (measured), so small products print TensorFlow's last digit.
constexpr int64_t kDnnlMatMulWork = int64_t{48} * 48 * 48;

bool SumsProductsOneByOne(int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
  return !ta && !tb && k > 1 && m * k * n <= 128 * 128 && (m == 1 || (n == 1 && m + k + n < 20));
}

template <typename T>
void SequentialMatMul(const T* a, const T* b, int64_t m, int64_t k, int64_t n, T* out) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = T(0);
      for (int64_t p = 0; p < k; ++p) {
        const T product = a[i * k + p] * b[p * n + j];  // built with -ffp-contract=off
        sum += product;
      }
      out[i * n + j] = sum;
    }
  }
}

Status MatMulProduct(KernelContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  return ForNumericOutput(c, MatMulShape(c), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // float16/bfloat16 accumulate in float32; integers wrap.
    using Acc =
        std::conditional_t<std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>, float, Arith<T>>;
    const int64_t m = c.output.shape()[0], n = c.output.shape()[1];
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
        MultiThreadedSection section;
        mo.device(PoolDevice()) = ma.contract(mb, dims);
      } else {
        mo = ma.contract(mb, dims);
      }
    };
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const int64_t k = c.node.transpose_a ? a.shape()[0] : ka;
      if (SumsProductsOneByOne(m, k, n, c.node.transpose_a, c.node.transpose_b)) {
        SequentialMatMul(a.data<T>(), b.data<T>(), m, k, n, c.output.data<T>());
        return Status::Ok();
      }
      if constexpr (std::is_same_v<T, float>) {
        if (m * n * k >= kDnnlMatMulWork &&
            DnnlMatMulF32(a.data<T>(), a.shape()[0], ka, c.node.transpose_a, b.data<T>(), b.shape()[0], kb,
                          c.node.transpose_b, c.output.data<T>())) {
          return Status::Ok();
        }
      }
      if (avx2::Available()) {
        auto fn = [](auto... args) {
          if constexpr (std::is_same_v<T, float>) {
            avx2::MatMulF32(args...);
          } else {
            avx2::MatMulF64(args...);
          }
        };
        fn(a.data<T>(), a.shape()[0], ka, c.node.transpose_a, b.data<T>(), b.shape()[0], kb, c.node.transpose_b,
           c.output.data<T>(), Threads());
        return Status::Ok();
      }
    }
    if constexpr (std::is_same_v<Acc, float> && !std::is_same_v<T, float>) {
      std::vector<float> fa(a.num_elements()), fb(b.num_elements()), fo(m * n);
      for (int64_t i = 0; i < a.num_elements(); ++i) fa[i] = static_cast<float>(a.data<T>()[i]);
      for (int64_t i = 0; i < b.num_elements(); ++i) fb[i] = static_cast<float>(b.data<T>()[i]);
      run(fa.data(), fb.data(), fo.data());
      if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
        // TensorFlow's CPU MatMul multiplies bfloat16 in float32 and keeps
        // the upper half of each product's bits (FloatToBFloat16 in
        // bfloat16.cc truncates): [[1.5]] x [[1.0390625]] is 1.5546875,
        // where rounding would give 1.5625.
        for (int64_t i = 0; i < m * n; ++i) {
          uint32_t bits;
          std::memcpy(&bits, &fo[i], sizeof bits);
          const uint16_t upper = static_cast<uint16_t>(bits >> 16);
          std::memcpy(&c.output.data<T>()[i], &upper, sizeof upper);
        }
      } else {
        for (int64_t i = 0; i < m * n; ++i) c.output.data<T>()[i] = T(fo[i]);
      }
    } else {
      run(reinterpret_cast<const Acc*>(a.data<T>()), reinterpret_cast<const Acc*>(b.data<T>()),
          reinterpret_cast<Acc*>(c.output.data<T>()));
    }
    return Status::Ok();
  });
}

// The sign of an exactly zero MatMul result, as TensorFlow's CPU kernel
// makes it (matmul_op_impl.h, measured on TF 2.21): a product with a
// transposed operand that LaunchBatchMatMul hands to Eigen's coefficient-
// based product (some dimension 1, and M + K + N under Eigen's
// EIGEN_GEMM_TO_COEFFBASED_THRESHOLD of 20) sums the K products with no
// +0.0 to start from, so K products that are all -0.0 sum to -0.0; every
// other path starts from +0.0. tfrun's kernels start from +0.0.
template <typename T>
void SignZerosAsEigen(KernelContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const bool ta = c.node.transpose_a, tb = c.node.transpose_b;
  const int64_t m = c.output.shape()[0], n = c.output.shape()[1];
  const int64_t k = ta ? a.shape()[0] : a.shape()[1];
  if (!(ta || tb) || std::min({m, k, n}) > 1 || m + k + n >= 20 || k == 0) return;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* out = c.output.data<T>();
  auto at = [&](int64_t i, int64_t j) { return static_cast<float>(ta ? pa[j * m + i] : pa[i * k + j]); };
  auto bt = [&](int64_t i, int64_t j) { return static_cast<float>(tb ? pb[j * k + i] : pb[i * n + j]); };
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (static_cast<float>(out[i * n + j]) != 0.0f) continue;
      bool all_negative_zero = true;
      for (int64_t p = 0; p < k && all_negative_zero; ++p) {
        const double product = static_cast<double>(at(i, p)) * static_cast<double>(bt(p, j));
        all_negative_zero = product == 0.0 && std::signbit(product);
      }
      if (all_negative_zero) out[i * n + j] = T(-0.0f);
    }
  }
}

Status MatMulKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(MatMulProduct(c));
  return DispatchDType(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Eigen::half> ||
                  std::is_same_v<T, Eigen::bfloat16>) {
      SignZerosAsEigen<T>(c);
    }
    return Status::Ok();
  });
}

// SparseMatMul of float32 and bfloat16 operands (dense here): both widened
// to float32, then the float32 product.
Status SparseMatMulKernel(KernelContext& c) {
  for (Tensor& in : c.inputs) {
    TFRUN_ASSIGN_OR_RETURN(in, CastOnHost(in, DType::kFloat32));
  }
  return MatMulKernel(c);
}

// out = (...((in(first) + in(first + 1)) + ...) in one pass (Eigen's
// expression, each step rounded in the dtype), or out + (that) where
// `accumulate`: aggregate_ops.h's Add2 ... Add9 functors, and Add8p's
// `out += in1 + ... + in8`.
template <size_t... I, typename Out, typename In>
void SumInOnePass(Out out, const In& in, size_t first, bool accumulate, int64_t n, std::index_sequence<I...>) {
  if (accumulate) {
    Assign(out, out + (... + in(first + I)), n);
  } else {
    Assign(out, (... + in(first + I)), n);
  }
}

template <typename Out, typename In>
void SumOf(Out out, const In& in, size_t first, size_t count, bool accumulate, int64_t n) {
  switch (count) {
    case 1: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<1>());
    case 2: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<2>());
    case 3: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<3>());
    case 4: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<4>());
    case 5: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<5>());
    case 6: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<6>());
    case 7: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<7>());
    case 8: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<8>());
    default: return SumInOnePass(out, in, first, accumulate, n, std::make_index_sequence<9>());
  }
}

// The order in which AddN adds its inputs, as TensorFlow 2.21 runs a
// graph: Grappler first sorts the inputs of AddN by name ("a_10/read"
// before "a_9/read", "x" before "x:1"; measured on its partition graphs),
// then aggregate_ops.h takes the buffer of the first input it can (here:
// one the executor hands on its last read, nothing else holding it) and
// moves that input to the front. Sets the output's buffer where it took one.
std::vector<size_t> AddNOrder(KernelContext& c, const Shape& shape) {
  const size_t num = c.inputs.size();
  std::vector<size_t> order(num);
  std::iota(order.begin(), order.end(), 0);
  if (c.graph != nullptr && c.node.inputs.size() == num) {
    std::vector<std::string> names(num);
    for (size_t i = 0; i < num; ++i) {
      const NodeOutput in = c.node.input(i);
      names[i] = c.graph->nodes[in.node].name + (in.index > 0 ? ":" + std::to_string(in.index) : "");
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  }
  for (size_t k = 0; k < num && num > 1; ++k) {
    if (c.CanForward(order[k], shape)) {
      c.output = c.inputs[order[k]];
      std::swap(order[0], order[k]);
      break;
    }
  }
  return order;
}

// AddN in that order: the first num % 8 inputs in one pass (8 where none
// are left over, 9 where one is), then every next 8 summed and added to
// the output (aggregate_ops.h), each step rounded in the dtype.
Status AddNKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, AddNShape(c));
  const std::vector<size_t> order = AddNOrder(c, shape);
  if (!c.output.is_valid()) TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  return DispatchDType(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return RuntimeError(fmt::format("no CPU kernel for {}", Name(c.node.dtype)));
    } else {
      using A = Arith<T>;
      const size_t num = order.size();
      const int64_t n = c.output.num_elements();
      Flat<A> out(reinterpret_cast<A*>(c.output.data<T>()), n);
      const auto in = [&](size_t i) {
        return ConstFlat<A>(reinterpret_cast<const A*>(c.inputs[order[i]].template data<T>()), n);
      };
      if (num == 1) {
        Assign(out, in(0), n);
        return Status::Ok();
      }
      size_t first = num % 8 == 0 ? 8 : num % 8 == 1 ? 9 : num % 8;
      SumOf(out, in, 0, first, false, n);
      for (; first < num; first += 8) SumOf(out, in, first, 8, true, n);
      return Status::Ok();
    }
  });
}

using BinaryOp = BinaryFn;  // Add, Sub and Mul of the binary family

template <BinaryOp Op, typename A>
A ApplyBinary(A a, A b) {
  if constexpr (Op == BinaryOp::kAdd) return a + b;
  if constexpr (Op == BinaryOp::kSub) return a - b;
  if constexpr (Op == BinaryOp::kMul) return a * b;
}

template <BinaryOp Op>
Status BinaryKernel(KernelContext& c) {
  StatusOr<BinaryPlan> plan = PlanBinary(c);
  return ForNumericOutput(c, plan.ok() ? StatusOr<Shape>(plan->output) : StatusOr<Shape>(plan.status()),
                          [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using A = Arith<T>;
    const int64_t n = c.output.num_elements();
    const Tensor& x = c.inputs[0];
    const Tensor& y = c.inputs[1];
    if (plan->broadcasts()) {
      const A* px = reinterpret_cast<const A*>(x.data<T>());
      const A* py = reinterpret_cast<const A*>(y.data<T>());
      A* out = reinterpret_cast<A*>(c.output.data<T>());
      const Shape& dims = plan->output;
      const size_t rank = dims.size();
      // One operand whole, the other one row repeated along the last
      // dimension (a batch norm's scale, a bias added with `+`): row by
      // row, on the pool when large. The same sums as the odometer's.
      const int64_t cols = rank == 0 ? 1 : dims[rank - 1];
      auto is_row = [&](const Tensor& t, const std::vector<int64_t>& strides) {
        if (rank == 0 || t.num_elements() != cols || (cols > 1 && strides[rank - 1] != 1)) return false;
        for (size_t k = 0; k + 1 < rank; ++k) {
          if (strides[k] != 0) return false;
        }
        return true;
      };
      const bool y_row = x.num_elements() == n && is_row(y, plan->y_strides);
      const bool x_row = !y_row && y.num_elements() == n && is_row(x, plan->x_strides);
      if (cols > 0 && (x_row || y_row)) {
        ParallelRows(n / cols, cols, [&](int64_t first, int64_t last) {
          for (int64_t r = first; r < last; ++r) {
            A* o = out + r * cols;
            if (y_row) {
              const A* a = px + r * cols;
              for (int64_t k = 0; k < cols; ++k) o[k] = ApplyBinary<Op, A>(a[k], py[k]);
            } else {
              const A* b = py + r * cols;
              for (int64_t k = 0; k < cols; ++k) o[k] = ApplyBinary<Op, A>(px[k], b[k]);
            }
          }
        });
        return Status::Ok();
      }
      // Otherwise an odometer over the output's coordinates, each
      // operand's offset moved by its strides (0 where it stretches).
      std::vector<int64_t> coord(rank, 0);
      int64_t xi = 0, yi = 0;
      for (int64_t i = 0; i < n; ++i) {
        out[i] = ApplyBinary<Op, A>(px[xi], py[yi]);
        for (size_t k = rank; k-- > 0;) {
          xi += plan->x_strides[k];
          yi += plan->y_strides[k];
          if (++coord[k] < dims[k]) break;
          xi -= plan->x_strides[k] * dims[k];
          yi -= plan->y_strides[k] * dims[k];
          coord[k] = 0;
        }
      }
      return Status::Ok();
    }
    Flat<A> out(reinterpret_cast<A*>(c.output.data<T>()), n);
    ConstFlat<A> fx(reinterpret_cast<const A*>(x.data<T>()), x.num_elements());
    ConstFlat<A> fy(reinterpret_cast<const A*>(y.data<T>()), y.num_elements());
    auto apply = [&](auto lhs, auto rhs) {
      if constexpr (Op == BinaryOp::kAdd) Assign(out, lhs + rhs, n);
      if constexpr (Op == BinaryOp::kSub) Assign(out, lhs - rhs, n);
      if constexpr (Op == BinaryOp::kMul) Assign(out, lhs * rhs, n);
    };
    // A scalar operand as Eigen's constant, as TensorFlow's scalar_left
    // and scalar_right functors bind it: a packet of it is one broadcast
    // load, where broadcast() computed every packet's index (a third of
    // the time of the gradient's scaling by its L2 weight).
    if (x.rank() == 0 && y.rank() != 0) {
      apply(fy.constant(fx(0)), fy);
    } else if (y.rank() == 0 && x.rank() != 0) {
      apply(fx, fx.constant(fy(0)));
    } else {
      apply(fx, fy);
    }
    return Status::Ok();
  }, {0, 1});
}

// static_cast with defined results where C++ leaves them undefined: NaN and
// out-of-range floats become the integer minimum, as x86's cvtt* do (and so
// TensorFlow's CPU Cast on x86).
template <typename To, typename From>
To CastValue(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<double>(v) != 0.0;
  } else if constexpr (std::is_unsigned_v<To> && !std::is_integral_v<From>) {
    // C++ leaves out-of-range conversions undefined; TensorFlow's compiled
    // static_cast goes through a signed integer on x86, so a value within
    // int64's range wraps (300.0 -> uint8 44). Beyond it: 0.
    const double d = static_cast<double>(v);
    constexpr double two63 = 9223372036854775808.0;
    if (std::is_same_v<To, uint64_t> && d >= 0 && d < 2 * two63) return static_cast<To>(d);
    if (d > -two63 && d < two63) return static_cast<To>(static_cast<int64_t>(d));
    return To(0);
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

void CastInto(const Tensor& in, Tensor& out) {
  DispatchDType(in.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    DispatchDType(out.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = in.data<From>();
      To* dst = out.data<To>();
      for (int64_t i = 0; i < in.num_elements(); ++i) dst[i] = CastValue<To>(src[i]);
    });
  });
}

Status CastKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[0].shape()));
  CastInto(c.inputs[0], c.output);
  return Status::Ok();
}

// The float32 loops of BiasAdd and Relu, also built for AVX2 (chosen when
// the program starts, target_clones): each element's operation is the
// same, so a lane gives the same bits eight or four at a time. Plain
// loops only, no library templates (matmul_avx2.h says why).
__attribute__((target_clones("avx2", "default"))) void BiasAddF32(const float* value, const float* bias, float* out,
                                                                  int64_t rows, int64_t channels) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < channels; ++k) out[r * channels + k] = value[r * channels + k] + bias[k];
  }
}

__attribute__((target_clones("avx2", "default"))) void ReluPacketsF32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f || in[i] != in[i] ? in[i] : 0.0f;
}

// value + bias along the last dimension, rounded in the dtype (half and
// bfloat16 through float, as Eigen evaluates them).
Status BiasAddKernel(KernelContext& c) {
  return ForNumericOutput(c, BiasAddShape(c), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using A = Arith<T>;
    const int64_t channels = c.inputs[1].num_elements();
    const int64_t rows = channels == 0 ? 0 : c.output.num_elements() / channels;
    const A* value = reinterpret_cast<const A*>(c.inputs[0].template data<T>());
    const A* bias = reinterpret_cast<const A*>(c.inputs[1].template data<T>());
    A* out = reinterpret_cast<A*>(c.output.data<T>());
    if constexpr (std::is_same_v<A, float>) {
      BiasAddF32(value, bias, out, rows, channels);
      return Status::Ok();
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < channels; ++k) out[r * channels + k] = value[r * channels + k] + bias[k];
    }
    return Status::Ok();
  }, {0});  // elementwise in the value: its buffer on its last read, as TensorFlow's BiasOp
}

// Elements TensorFlow's CPU build (AVX) evaluates a packet at a time in an
// elementwise Eigen expression: all but the tail of n % kPacket, the tail
// one by one. 0 where no packets are used (half and bfloat16).
template <typename T>
constexpr int64_t kAvxPacket = std::is_same_v<T, float> ? 8 : std::is_same_v<T, double> ? 4 : 0;

// Relu is cwiseMax<PropagateNaN>(0) in relu_op_functor.h: NaN passes, and
// -0.0 becomes +0.0 in packets (vmaxps returns its second operand, the
// zero, for two zeros) but stays -0.0 in the scalar tail (std::max keeps
// the first): relu of eight float32 -0.0s is eight 0.0s, of six it is six
// -0.0s, as TensorFlow 2.21 prints them.
Status ReluKernel(KernelContext& c) {
  return ForNumericOutput(c, c.inputs[0].shape(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = c.inputs[0].template data<T>();
    T* out = c.output.data<T>();
    const T zero = T(0);
    const int64_t n = c.output.num_elements();
    const int64_t packed = kAvxPacket<T> == 0 ? 0 : n - n % kAvxPacket<T>;
    if constexpr (std::is_same_v<T, float>) {
      ReluPacketsF32(in, out, packed);
    } else {
      for (int64_t i = 0; i < packed; ++i) out[i] = in[i] > zero || in[i] != in[i] ? in[i] : zero;
    }
    for (int64_t i = packed; i < n; ++i) out[i] = in[i] < zero ? zero : in[i];
    return Status::Ok();
  }, {0});
}

// Split and ConcatV2 copy bytes: in the [outer, axis, inner] view, each
// outer row of a piece is one contiguous run.
// Split and SplitV: output i is the run of sizes[i] rows along the axis
// from each outer row.
Status SplitKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const SplitPlan plan, PlanSplit(c));
  const Tensor& value = c.inputs[c.node.op == "SplitV" ? 0 : 1];
  const int64_t element = static_cast<int64_t>(Info(value.dtype()).size);
  const int64_t row = plan.input[plan.layout.axis] * plan.layout.inner * element;
  c.outputs.resize(c.node.num_outputs);
  int64_t offset = 0;  // bytes into each input row
  for (int i = 0; i < c.node.num_outputs; ++i) {
    TFRUN_ASSIGN_OR_RETURN(c.outputs[i], c.Allocate(c.node.dtype, plan.OutputShape(i)));
    const int64_t piece = plan.sizes[i] * plan.layout.inner * element;
    const char* src = static_cast<const char*>(value.raw()) + offset;
    char* dst = static_cast<char*>(c.outputs[i].raw());
    for (int64_t r = 0; r < plan.layout.outer && piece > 0; ++r) std::memcpy(dst + r * piece, src + r * row, piece);
    offset += piece;
  }
  return Status::Ok();
}

Status ConcatKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const ConcatPlan plan, PlanConcat(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  const int64_t element = static_cast<int64_t>(Info(c.node.dtype).size);
  const int64_t row = plan.output[plan.layout.axis] * plan.layout.inner * element;
  // Each output row is the inputs' pieces of that row, one after another:
  // its bytes [0, row) come from piece k's input at the piece's offset.
  std::vector<int64_t> piece_start = {0};  // bytes into an output row, per input, then the row's end
  for (size_t i = 0; i + 1 < c.inputs.size(); ++i) {
    piece_start.push_back(piece_start.back() + c.inputs[i].shape()[plan.layout.axis] * plan.layout.inner * element);
  }
  // The output's bytes [begin, end): on the kernel's threads when large
  // (a tower trainer's gradients, stacked: megabytes a piece).
  const auto copy = [&](int64_t begin, int64_t end) {
    char* out = static_cast<char*>(c.output.raw());
    while (begin < end) {
      const int64_t r = begin / row, at = begin % row;
      const int64_t k = std::upper_bound(piece_start.begin(), piece_start.end(), at) - piece_start.begin() - 1;
      const int64_t length = std::min(piece_start[k + 1] - at, end - begin);
      const int64_t piece = piece_start[k + 1] - piece_start[k];
      std::memcpy(out + begin, static_cast<const char*>(c.inputs[k].raw()) + r * piece + (at - piece_start[k]), length);
      begin += length;
    }
  };
  if (row == 0) return Status::Ok();
  ParallelFor(plan.layout.outer * row, copy, int64_t{1} << 21);
  return Status::Ok();
}

}  // namespace

namespace cpu {

KernelFn ArithmeticKernel(BinaryFn fn) {
  switch (fn) {
    case BinaryFn::kAdd: return BinaryKernel<BinaryOp::kAdd>;
    case BinaryFn::kSub: return BinaryKernel<BinaryOp::kSub>;
    case BinaryFn::kMul: return BinaryKernel<BinaryOp::kMul>;
    default: return nullptr;  // math_kernels.cc's
  }
}

}  // namespace cpu

StatusOr<Tensor> CastOnHost(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, t.shape()));
  CastInto(t, out);
  return out;
}

void RegisterCpuKernels(KernelRegistry* registry) {
  // What each kernel runs, by the node's (output) dtype.
  struct Binding {
    const char* op;
    DTypeSet dtypes;
    KernelFn fn;
  };
  static constexpr Binding kBindings[] = {
      {"MatMul", kNumericTypes, MatMulKernel},
      {"SparseMatMul", DTypeSet{DType::kFloat32}, SparseMatMulKernel},
      {"AddN", kNumericTypes, AddNKernel},
      {"Cast", kMovedTypes, CastKernel},
      {"BiasAdd", kNumericTypes, BiasAddKernel},
      {"Relu", kNumericTypes, ReluKernel},
      {"Split", kMovedTypes, SplitKernel},
      {"SplitV", kMovedTypes, SplitKernel},
      {"ConcatV2", kMovedTypes, ConcatKernel},
  };
  for (const Binding& b : kBindings) registry->Bind(b.op, kCpu, b.dtypes, b.fn);
  BindHandleKernels(registry, kCpu, kEveryDType);
  cpu::RegisterMathKernels(registry);
  cpu::RegisterArrayKernels(registry);
  cpu::RegisterSummaryKernels(registry);
  cpu::RegisterQueueKernels(registry);
  cpu::RegisterCheckpointKernels(registry);
  cpu::RegisterNnKernels(registry);
  cpu::RegisterOptimizerKernels(registry);
  cpu::RegisterFusionKernels(registry);
}

}  // namespace tfrun
