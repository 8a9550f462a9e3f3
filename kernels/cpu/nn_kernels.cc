// Convolutions and pooling on the CPU. Convolutions (Conv2D and its two
// gradients) run on oneDNN, as TensorFlow 2.21's default CPU build runs
// them (TF_ENABLE_ONEDNN_OPTS rewrites them to oneDNN ops); pooling is the
// window scan of TensorFlow's own CPU kernels (maxpooling_op.cc), with its
// checks and error texts.
#include <dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

#include "kernels/cpu/cpu_eigen.h"
#include "core/runtime/nn_shapes.h"
#include "kernels/cpu/dnnl_loader.h"

namespace tfrun {
namespace cpu {
namespace {

// One engine and stream for the process (oneDNN's primitive cache keeps
// the compiled kernels across calls, so a training step's convolutions
// are compiled once).
struct Dnnl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Dnnl& TheDnnl() {
  static Dnnl* dnnl = new Dnnl();
  return *dnnl;
}

using dnnl::memory;

memory::desc Nhwc(int64_t n, int64_t h, int64_t w, int64_t c) {
  return memory::desc({n, c, h, w}, memory::data_type::f32, memory::format_tag::nhwc);
}
memory::desc Hwio(const ConvGeometry& g) {
  return memory::desc({g.out_depth, g.in_depth, g.filter_rows, g.filter_cols}, memory::data_type::f32,
                      memory::format_tag::hwio);
}
memory::desc Weights(const ConvGeometry& g) {  // any layout: oneDNN picks its own
  return memory::desc({g.out_depth, g.in_depth, g.filter_rows, g.filter_cols}, memory::data_type::f32,
                      memory::format_tag::any);
}

dnnl::convolution_forward::primitive_desc ForwardDesc(const ConvGeometry& g, const memory::desc& weights) {
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      Nhwc(g.batch, g.in_rows, g.in_cols, g.in_depth), weights, Nhwc(g.batch, g.out_rows, g.out_cols, g.out_depth),
      {g.stride_rows, g.stride_cols}, {g.dilation_rows - 1, g.dilation_cols - 1}, {g.pad_top, g.pad_left},
      {g.pad_bottom, g.pad_right});
  return dnnl::convolution_forward::primitive_desc(d, TheDnnl().engine);
}

// A memory of `wanted`'s layout holding the HWIO filter at `data`
// (reordered when oneDNN chose another layout).
memory FilterIn(const ConvGeometry& g, const memory::desc& wanted, float* data) {
  Dnnl& d = TheDnnl();
  memory user(Hwio(g), d.engine, data);
  if (wanted == user.get_desc()) return user;
  memory reordered(wanted, d.engine);
  dnnl::reorder(user, reordered).execute(d.stream, user, reordered);
  return reordered;
}

// oneDNN errors (an unsupported shape, memory) as the op's error.
template <typename F>
Status RunDnnl(KernelContext& c, F&& f) {
  std::string why;
  if (!DnnlAvailable(&why)) return RuntimeError(fmt::format("{}: {}", c.node.op, why));
  try {
    f();
    TheDnnl().stream.wait();
  } catch (const dnnl::error& e) {
    return RuntimeError(fmt::format("{}: oneDNN failed: {}", c.node.op, e.what()));
  }
  return Status::Ok();
}

Status Conv2DKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& filter = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const ConvGeometry g, PlanConv(c, input.shape(), filter.shape(), kCpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  if (c.output.num_elements() == 0) return Status::Ok();
  if (input.num_elements() == 0 || filter.num_elements() == 0) {
    std::memset(c.output.raw(), 0, c.output.num_bytes());
    return Status::Ok();
  }
  return RunDnnl(c, [&] {
    Dnnl& d = TheDnnl();
    const auto pd = ForwardDesc(g, Weights(g));
    memory src(pd.src_desc(), d.engine, input.data<float>());
    memory weights = FilterIn(g, pd.weights_desc(), filter.data<float>());
    memory dst(pd.dst_desc(), d.engine, c.output.data<float>());
    dnnl::convolution_forward(pd).execute(d.stream,
                                          {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
  });
}

Status Zeros(Tensor& t) {
  std::memset(t.raw(), 0, t.num_bytes());
  return Status::Ok();
}

// The backward-data or backward-weights descriptor of `g` (the same
// arguments in the same order).
template <typename Desc>
Desc GradientDesc(const ConvGeometry& g) {
  return Desc(dnnl::algorithm::convolution_direct, Nhwc(g.batch, g.in_rows, g.in_cols, g.in_depth), Weights(g),
              Nhwc(g.batch, g.out_rows, g.out_cols, g.out_depth), {g.stride_rows, g.stride_cols},
              {g.dilation_rows - 1, g.dilation_cols - 1}, {g.pad_top, g.pad_left}, {g.pad_bottom, g.pad_right});
}

Status Conv2DBackpropInputKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape input_shape, ConvSizesInput(c, c.inputs[0], "input"));
  const Tensor& filter = c.inputs[1];
  const Tensor& out_backprop = c.inputs[2];
  TFRUN_ASSIGN_OR_RETURN(const ConvGradientPlan plan,
                         PlanConvGradient(c, input_shape, filter.shape(), input_shape, filter, out_backprop, kCpu));
  if (c.output.num_elements() == 0) return Status::Ok();
  if (plan.zeros) return Zeros(c.output);
  const ConvGeometry* g = &plan.geometry;
  return RunDnnl(c, [&] {
    Dnnl& d = TheDnnl();
    const auto forward = ForwardDesc(*g, Weights(*g));
    dnnl::convolution_backward_data::primitive_desc pd(GradientDesc<dnnl::convolution_backward_data::desc>(*g),
                                                       d.engine, forward);
    memory diff_dst(pd.diff_dst_desc(), d.engine, out_backprop.data<float>());
    memory weights = FilterIn(*g, pd.weights_desc(), filter.data<float>());
    memory diff_src(pd.diff_src_desc(), d.engine, c.output.data<float>());
    dnnl::convolution_backward_data(pd).execute(
        d.stream, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DIFF_SRC, diff_src}});
  });
}

Status Conv2DBackpropFilterKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const Shape filter_shape, ConvSizesInput(c, c.inputs[1], "filter"));
  const Tensor& out_backprop = c.inputs[2];
  TFRUN_ASSIGN_OR_RETURN(const ConvGradientPlan plan,
                         PlanConvGradient(c, input.shape(), filter_shape, filter_shape, input, out_backprop, kCpu));
  if (c.output.num_elements() == 0) return Status::Ok();
  if (plan.zeros) return Zeros(c.output);
  const ConvGeometry* g = &plan.geometry;
  return RunDnnl(c, [&] {
    Dnnl& d = TheDnnl();
    const auto forward = ForwardDesc(*g, Weights(*g));
    dnnl::convolution_backward_weights::primitive_desc pd(
        GradientDesc<dnnl::convolution_backward_weights::desc>(*g), d.engine, forward);
    memory src(pd.src_desc(), d.engine, input.data<float>());
    memory diff_dst(pd.diff_dst_desc(), d.engine, out_backprop.data<float>());
    memory user(Hwio(*g), d.engine, c.output.data<float>());
    const bool direct = pd.diff_weights_desc() == user.get_desc();
    memory diff_weights = direct ? user : memory(pd.diff_weights_desc(), d.engine);
    dnnl::convolution_backward_weights(pd).execute(
        d.stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_WEIGHTS, diff_weights}});
    if (!direct) dnnl::reorder(diff_weights, user).execute(d.stream, diff_weights, user);
  });
}

// ---- Max pooling ----

// Calls f(b, out_row, out_col, in_index) for every output and, within its
// window (padding left out), for every input position, rows then columns:
// the scan order that decides which of equal maxima wins (the first).
template <typename F>
void ForEachWindow(const PoolGeometry& g, int64_t b, F&& f) {
  for (int64_t r = 0; r < g.out_rows; ++r) {
    const int64_t r0 = std::max<int64_t>(r * g.stride_rows - g.pad_top, 0);
    const int64_t r1 = std::min(r * g.stride_rows - g.pad_top + g.window_rows, g.in_rows);
    for (int64_t q = 0; q < g.out_cols; ++q) {
      const int64_t q0 = std::max<int64_t>(q * g.stride_cols - g.pad_left, 0);
      const int64_t q1 = std::min(q * g.stride_cols - g.pad_left + g.window_cols, g.in_cols);
      f(r, q, r0, r1, q0, q1);
    }
  }
}

// Over the batch on the pool: every image's work is its own.
template <typename F>
void ParallelBatch(int64_t batch, int64_t cost_per_image, F&& f) {
  if (batch > 1 && batch * cost_per_image >= kParallelElements) {
    PoolDevice().parallelFor(batch, Eigen::TensorOpCost(0, 0, static_cast<double>(cost_per_image)),
                             [&](Eigen::Index first, Eigen::Index last) {
                               for (Eigen::Index b = first; b < last; ++b) f(b);
                             });
  } else {
    for (int64_t b = 0; b < batch; ++b) f(b);
  }
}

template <typename T>
void MaxPoolImage(const PoolGeometry& g, const T* in, T* out, int64_t b) {
  const int64_t depth = g.depth;
  ForEachWindow(g, b, [&](int64_t r, int64_t q, int64_t r0, int64_t r1, int64_t q0, int64_t q1) {
    T* o = out + ((b * g.out_rows + r) * g.out_cols + q) * depth;
    std::fill_n(o, depth, std::numeric_limits<T>::lowest());
    for (int64_t y = r0; y < r1; ++y) {
      for (int64_t x = q0; x < q1; ++x) {
        const T* i = in + ((b * g.in_rows + y) * g.in_cols + x) * depth;
        for (int64_t k = 0; k < depth; ++k) o[k] = i[k] > o[k] ? i[k] : o[k];
      }
    }
  });
}

Status MaxPoolKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const PoolGeometry g, PlanPool(c, input.shape(), kCpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  return ForDType<IsFloatOrDouble>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ParallelBatch(g.batch, g.in_rows * g.in_cols * g.depth, [&](int64_t b) {
      MaxPoolImage<T>(g, input.data<T>(), c.output.data<T>(), b);
    });
    return Status::Ok();
  });
}

// MaxPoolGrad(orig_input, orig_output, grad): each output's gradient goes
// to the first position of its window holding the maximum (maxpooling_op.cc
// SpatialMaxPoolWithArgMaxHelper: strictly greater replaces).
Status MaxPoolGradKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& grad = c.inputs[2];
  TFRUN_ASSIGN_OR_RETURN(const PoolGeometry g, PlanMaxPoolGrad(c, kCpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(input.shape()));
  return ForDType<IsFloatOrDouble>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = input.data<T>();
    const T* gr = grad.data<T>();
    T* out = c.output.data<T>();
    std::fill_n(out, c.output.num_elements(), T(0));
    const int64_t depth = g.depth;
    ParallelBatch(g.batch, g.in_rows * g.in_cols * depth, [&](int64_t b) {
      std::vector<T> best(depth);
      std::vector<int64_t> where(depth);
      ForEachWindow(g, b, [&](int64_t r, int64_t q, int64_t r0, int64_t r1, int64_t q0, int64_t q1) {
        std::fill(best.begin(), best.end(), std::numeric_limits<T>::lowest());
        std::fill(where.begin(), where.end(), -1);
        for (int64_t y = r0; y < r1; ++y) {
          for (int64_t x = q0; x < q1; ++x) {
            const int64_t base = ((b * g.in_rows + y) * g.in_cols + x) * depth;
            for (int64_t k = 0; k < depth; ++k) {
              if (in[base + k] > best[k] || where[k] < 0) {
                best[k] = in[base + k];
                where[k] = base + k;
              }
            }
          }
        }
        const T* go = gr + ((b * g.out_rows + r) * g.out_cols + q) * depth;
        for (int64_t k = 0; k < depth; ++k) {
          if (where[k] >= 0) out[where[k]] += go[k];
        }
      });
    });
    return Status::Ok();
  });
}

}  // namespace

void RegisterNnKernels(KernelRegistry* registry) {
  const DTypeSet f32{DType::kFloat32};
  const DTypeSet f32_64{DType::kFloat32, DType::kFloat64};
  registry->Bind("Conv2D", kCpu, f32, Conv2DKernel);
  registry->Bind("Conv2DBackpropInput", kCpu, f32, Conv2DBackpropInputKernel);
  registry->Bind("Conv2DBackpropFilter", kCpu, f32, Conv2DBackpropFilterKernel);
  registry->Bind("MaxPool", kCpu, f32_64, MaxPoolKernel);
  registry->Bind("MaxPoolGrad", kCpu, f32_64, MaxPoolGradKernel);
}

}  // namespace cpu
}  // namespace tfrun
