// Convolutions, pooling, local response normalization and batch
// normalization on the CPU. Convolutions (Conv2D and its two
// gradients) run on oneDNN, as TensorFlow 2.21's default CPU build runs
// them (TF_ENABLE_ONEDNN_OPTS rewrites them to oneDNN ops); pooling is the
// window scan of TensorFlow's own CPU kernels (maxpooling_op.cc), with its
// checks and error texts.
#include <immintrin.h>

#include <dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/base/parallel.h"
#include "kernels/cpu/cpu_eigen.h"
#include "kernels/cpu/depthwise_avx2.h"
#include "kernels/cpu/glibc_powf.h"
#include "kernels/cpu/matmul_avx2.h"
#include "core/runtime/nn_shapes.h"
#include "kernels/cpu/dnnl_loader.h"
#include "kernels/cpu/tf_float_math.h"

namespace tfrun {
namespace cpu {
namespace {

// One engine for the process (oneDNN's primitive cache keeps the compiled
// kernels across calls, so a training step's convolutions are compiled
// once), and a stream for each thread that runs kernels: nodes may run at
// the same time (executor.h), and oneDNN streams are not to be shared
// between threads.
struct Dnnl {
  dnnl::engine& engine;
  dnnl::stream& stream;
};

Dnnl TheDnnl() {
  static auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  // Kept to the end like the engine: nothing may call oneDNN after exit.
  thread_local auto* stream = new dnnl::stream(*engine);
  return Dnnl{*engine, *stream};
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

// Whether every element of `blocked` lies where it lies in `plain`, a
// layout without blocks: a dimension that one inner block holds whole is
// as a plain dimension of the block's stride (its outer stride is never
// used). oneDNN's forward convolutions want their filter as Acdb64a,
// which for 64 output channels is HWIO's own bytes, and its reorder of
// CIFAR-10's 5x5x64x64 filter into the same bytes took 0.2 ms.
bool SameBytes(const memory::desc& blocked, const memory::desc& plain) {
  const dnnl_memory_desc_t& b = blocked.data;
  const dnnl_memory_desc_t& p = plain.data;
  if (b.format_kind != dnnl_blocked || p.format_kind != dnnl_blocked || b.ndims != p.ndims ||
      b.data_type != p.data_type || b.offset0 != p.offset0 || p.format_desc.blocking.inner_nblks != 0) {
    return false;
  }
  const dnnl_blocking_desc_t& blocks = b.format_desc.blocking;
  for (int d = 0; d < b.ndims; ++d) {
    if (b.dims[d] != p.dims[d] || b.padded_dims[d] != b.dims[d]) return false;
    if (b.dims[d] == 1) continue;  // its stride multiplies only 0
    int64_t stride = blocks.strides[d];
    int blocks_of_d = 0;
    for (int k = 0; k < blocks.inner_nblks; ++k) {
      if (blocks.inner_idxs[k] != d) continue;
      if (++blocks_of_d > 1 || blocks.inner_blks[k] != b.dims[d]) return false;
      stride = 1;
      for (int later = k + 1; later < blocks.inner_nblks; ++later) stride *= blocks.inner_blks[later];
    }
    if (stride != p.format_desc.blocking.strides[d]) return false;
  }
  return true;
}

// A memory of `wanted`'s layout holding the HWIO filter at `data`
// (reordered when oneDNN chose another layout).
memory FilterIn(const ConvGeometry& g, const memory::desc& wanted, float* data) {
  const Dnnl d = TheDnnl();
  MultiThreadedSection section;  // oneDNN's OpenMP team
  memory user(Hwio(g), d.engine, data);
  if (wanted == user.get_desc()) return user;
  if (SameBytes(wanted, user.get_desc())) return memory(wanted, d.engine, data);
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

// oneDNN's forward convolution of `g`: `src` (NHWC) with the HWIO
// `filter` into `dst` (NHWC). Conv2D, and Conv2DBackpropInput's stride-1
// form (TransposedConv). Inside RunDnnl.
void ForwardConvolution(const ConvGeometry& g, float* src, float* filter, float* dst) {
  const Dnnl d = TheDnnl();
  MultiThreadedSection section;  // oneDNN's OpenMP team
  const auto pd = ForwardDesc(g, Weights(g));
  memory source(pd.src_desc(), d.engine, src);
  memory weights = FilterIn(g, pd.weights_desc(), filter);
  memory destination(pd.dst_desc(), d.engine, dst);
  dnnl::convolution_forward(pd).execute(
      d.stream, {{DNNL_ARG_SRC, source}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, destination}});
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
  return RunDnnl(c, [&] { ForwardConvolution(g, input.data<float>(), filter.data<float>(), c.output.data<float>()); });
}

#include "kernels/cpu/depthwise_rows.inc"

// DepthwiseConv2dNative (depthwise_conv_op.cc, TensorFlow's CPU kernel
// for float): each output element sums its window's products in filter
// order (rows, then columns), each product rounded before it is added,
// from 0; positions in the padding add nothing. Vectorised over the
// output channels of one pixel, which keeps that order per element.
template <typename T>
Status DepthwiseConvKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& filter = c.inputs[1];
  int64_t multiplier = 1;
  TFRUN_ASSIGN_OR_RETURN(const ConvGeometry g, PlanDepthwiseConv(c, input.shape(), filter.shape(), &multiplier));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  if (c.output.num_elements() == 0) return Status::Ok();
  const T* in = input.data<T>();
  const T* w = filter.data<T>();
  T* out = c.output.data<T>();
  const int64_t depth = g.out_depth;
  const int64_t cost = g.out_cols * depth * g.filter_rows * g.filter_cols;
  const avx2::DepthwiseGeometry geometry{g.in_rows,    g.in_cols,     g.in_depth,  g.filter_rows,
                                         g.filter_cols, multiplier,   g.out_rows,  g.out_cols,
                                         g.stride_rows, g.stride_cols, g.pad_top,   g.pad_left};
  ParallelRows(g.batch * g.out_rows, cost, [&](int64_t first, int64_t last) {
    if constexpr (std::is_same_v<T, float>) {
      if (avx2::Available()) {
        avx2::DepthwiseConvRowsF32(in, w, out, geometry, first, last);
        return;
      }
    }
    DepthwiseRows(in, w, out, geometry, first, last);
  });
  return Status::Ok();
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

// A stride-1, undilated convolution's input gradient is itself a
// forward convolution: of out_backprop, with the filter turned around
// (rows and columns reversed, input and output depths swapped) and each
// side padded by filter size - 1 - its padding. TensorFlow's oneDNN
// computes it so ("brg_conv_bwd ... +brg_conv_fwd"); this oneDNN's direct
// backward-data kernel took twice as long on CIFAR-10's second layer.
// Empty where that does not hold (strides, dilations, padding wider than
// the filter).
std::optional<ConvGeometry> TransposedConv(const ConvGeometry& g) {
  if (g.stride_rows != 1 || g.stride_cols != 1 || g.dilation_rows != 1 || g.dilation_cols != 1) return std::nullopt;
  const int64_t rows = g.filter_rows - 1, cols = g.filter_cols - 1;
  if (g.pad_top > rows || g.pad_bottom > rows || g.pad_left > cols || g.pad_right > cols) return std::nullopt;
  ConvGeometry t = g;
  t.in_rows = g.out_rows;
  t.in_cols = g.out_cols;
  t.in_depth = g.out_depth;
  t.out_rows = g.in_rows;
  t.out_cols = g.in_cols;
  t.out_depth = g.in_depth;
  t.pad_top = rows - g.pad_top;
  t.pad_bottom = rows - g.pad_bottom;
  t.pad_left = cols - g.pad_left;
  t.pad_right = cols - g.pad_right;
  return t;
}

// `g`'s HWIO filter turned around for TransposedConv: element
// [r][q][o][i] is filter[rows-1-r][cols-1-q][i][o].
std::vector<float> FlippedFilter(const ConvGeometry& g, const float* filter) {
  const int64_t in = g.in_depth, out = g.out_depth;
  std::vector<float> flipped(g.filter_rows * g.filter_cols * in * out);
  for (int64_t r = 0; r < g.filter_rows; ++r) {
    for (int64_t q = 0; q < g.filter_cols; ++q) {
      const float* from = filter + ((g.filter_rows - 1 - r) * g.filter_cols + (g.filter_cols - 1 - q)) * in * out;
      float* to = flipped.data() + (r * g.filter_cols + q) * in * out;
      for (int64_t i = 0; i < in; ++i) {
        for (int64_t o = 0; o < out; ++o) to[o * in + i] = from[i * out + o];
      }
    }
  }
  return flipped;
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
  if (const std::optional<ConvGeometry> transposed = TransposedConv(*g)) {
    return RunDnnl(c, [&] {
      std::vector<float> flipped = FlippedFilter(*g, filter.data<float>());
      ForwardConvolution(*transposed, out_backprop.data<float>(), flipped.data(), c.output.data<float>());
    });
  }
  return RunDnnl(c, [&] {
    const Dnnl d = TheDnnl();
  MultiThreadedSection section;  // oneDNN's OpenMP team
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
    const Dnnl d = TheDnnl();
  MultiThreadedSection section;  // oneDNN's OpenMP team
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
  ParallelRows(batch, cost_per_image, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) f(b);
  });
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


// A window's first maximum per depth: place[k] = the first of `positions`
// (the window's elements of depth k at image + offset[p] + k) holding the
// maximum, a later one only when strictly greater (false for NaN, as
// TensorFlow's `>`: a NaN never replaces nor is replaced), for k from
// `k` to depth. Each depth's best value and place stay in registers over
// the window; float32 takes four lanes at a time (SSE2), eight where the
// processor has AVX2, before this one-by-one form (a branch per element
// was a tenth of CIFAR-10's training step, and the compiler keeps it: a
// float comparison may trap).
template <typename T>
void FirstMaxFrom(const T* image, const int64_t* offset, int positions, int64_t k, int64_t depth,
                  int32_t* place) {
  for (; k < depth; ++k) {
    T best = image[offset[0] + k];
    int32_t at = 0;
    for (int p = 1; p < positions; ++p) {
      const T v = image[offset[p] + k];
      if (v > best) {
        best = v;
        at = p;
      }
    }
    place[k] = at;
  }
}

void FirstMaxSse(const float* image, const int64_t* offset, int positions, int64_t depth, int32_t* place) {
  int64_t k = 0;
  for (; k + 4 <= depth; k += 4) {
    __m128 best = _mm_loadu_ps(image + offset[0] + k);
    __m128i at = _mm_setzero_si128();
    for (int p = 1; p < positions; ++p) {
      const __m128 v = _mm_loadu_ps(image + offset[p] + k);
      const __m128 greater = _mm_cmpgt_ps(v, best);
      best = _mm_or_ps(_mm_and_ps(greater, v), _mm_andnot_ps(greater, best));
      const __m128i mask = _mm_castps_si128(greater);
      at = _mm_or_si128(_mm_and_si128(mask, _mm_set1_epi32(p)), _mm_andnot_si128(mask, at));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(place + k), at);
  }
  FirstMaxFrom(image, offset, positions, k, depth, place);
}

__attribute__((target("avx2"))) void FirstMaxAvx2(const float* image, const int64_t* offset, int positions,
                                                  int64_t depth, int32_t* place) {
  int64_t k = 0;
  for (; k + 8 <= depth; k += 8) {
    __m256 best = _mm256_loadu_ps(image + offset[0] + k);
    __m256i at = _mm256_setzero_si256();
    for (int p = 1; p < positions; ++p) {
      const __m256 v = _mm256_loadu_ps(image + offset[p] + k);
      const __m256 greater = _mm256_cmp_ps(v, best, _CMP_GT_OS);
      best = _mm256_blendv_ps(best, v, greater);
      at = _mm256_blendv_epi8(at, _mm256_set1_epi32(p), _mm256_castps_si256(greater));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(place + k), at);
  }
  // The compiler leaves the ymm registers' upper halves dirty before this
  // tail call; SSE code after that ran at a fraction of its speed
  // (CIFAR-10's LRNGrad 5.2 -> 12.2 ms a step).
  _mm256_zeroupper();
  FirstMaxSse(image + k, offset, positions, depth - k, place + k);  // the last depth % 8
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
    static const bool eight_lanes = ProcessorHasAvx2();
    ParallelBatch(g.batch, g.in_rows * g.in_cols * depth, [&](int64_t b) {
      // Per depth: the place in the window of its first maximum (the
      // window's positions counted row by row); `offset` turns a place into
      // its element in the image, without a division per element (which
      // was most of the kernel's time).
      std::vector<int32_t> place(depth);
      std::vector<int64_t> offset;
      T* image_out = out + b * g.in_rows * g.in_cols * depth;
      ForEachWindow(g, b, [&](int64_t r, int64_t q, int64_t r0, int64_t r1, int64_t q0, int64_t q1) {
        if (r0 >= r1 || q0 >= q1) return;
        offset.clear();
        for (int64_t y = r0; y < r1; ++y) {
          for (int64_t x = q0; x < q1; ++x) offset.push_back((y * g.in_cols + x) * depth);
        }
        const T* image = in + b * g.in_rows * g.in_cols * depth;
        const int positions = static_cast<int>(offset.size());
        if constexpr (std::is_same_v<T, float>) {
          (eight_lanes ? FirstMaxAvx2 : FirstMaxSse)(image, offset.data(), positions, depth, place.data());
        } else {
          FirstMaxFrom(image, offset.data(), positions, 0, depth, place.data());
        }
        const T* go = gr + ((b * g.out_rows + r) * g.out_cols + q) * depth;
        for (int64_t k = 0; k < depth; ++k) image_out[offset[place[k]] + k] += go[k];
      });
    });
    return Status::Ok();
  });
}

// ---- Average pooling (avgpooling_op.cc, pooling_ops_common.h) ----

// SpatialAvgPool: each output sums its window's inputs in input order (rows,
// then columns) and divides by how many there were (padding left out).
template <typename T>
void AvgPoolImage(const PoolGeometry& g, const T* in, T* out, int64_t b) {
  const int64_t depth = g.depth;
  ForEachWindow(g, b, [&](int64_t r, int64_t q, int64_t r0, int64_t r1, int64_t q0, int64_t q1) {
    T* o = out + ((b * g.out_rows + r) * g.out_cols + q) * depth;
    std::fill_n(o, depth, T(0));
    for (int64_t y = r0; y < r1; ++y) {
      for (int64_t x = q0; x < q1; ++x) {
        const T* i = in + ((b * g.in_rows + y) * g.in_cols + x) * depth;
        for (int64_t k = 0; k < depth; ++k) o[k] += i[k];
      }
    }
    const T count = static_cast<T>((r1 - r0) * (q1 - q0));
    for (int64_t k = 0; k < depth; ++k) o[k] /= count;
  });
}

// MaxPool and AvgPool: each image's windows on the pool.
template <bool Average>
Status PoolKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const PoolGeometry g, PlanPool(c, input.shape(), kCpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  return ForDType<IsFloatOrDouble>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ParallelBatch(g.batch, g.in_rows * g.in_cols * g.depth, [&](int64_t b) {
      if constexpr (Average) {
        AvgPoolImage<T>(g, input.data<T>(), c.output.data<T>(), b);
      } else {
        MaxPoolImage<T>(g, input.data<T>(), c.output.data<T>(), b);
      }
    });
    return Status::Ok();
  });
}

// AvgPoolGrad(orig_input_shape, grad): each output's gradient times
// 1 / (window rows * window columns), the product rounded from double to
// T once, added to every input of its window (TensorFlow's broadcast
// window, quirk included: PoolGeometry::BroadcastRows).
Status AvgPoolGradKernel(KernelContext& c) {
  const Tensor& grad = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const AvgPoolGradPlan plan, PlanAvgPoolGrad(c, kCpu));
  const PoolGeometry& g = plan.geometry;
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output_shape));
  return ForDType<IsFloatOrDouble>(c.node.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* out = c.output.data<T>();
    std::fill_n(out, c.output.num_elements(), T(0));
    const T* gr = grad.data<T>();
    const int64_t depth = g.depth;
    ParallelBatch(g.batch, g.in_rows * g.in_cols * depth, [&](int64_t b) {
      for (int64_t r = 0; r < g.out_rows; ++r) {
        int64_t rows = 0;
        const int64_t r0 = g.BroadcastRows(r, &rows);
        for (int64_t q = 0; q < g.out_cols; ++q) {
          int64_t cols = 0;
          const int64_t q0 = g.BroadcastCols(q, &cols);
          const T coeff = static_cast<T>(1.0 / static_cast<double>(rows * cols));
          const T* go = gr + ((b * g.out_rows + r) * g.out_cols + q) * depth;
          for (int64_t y = r0; y < r0 + rows; ++y) {
            for (int64_t x = q0; x < q0 + cols; ++x) {
              T* o = out + ((b * g.in_rows + y) * g.in_cols + x) * depth;
              for (int64_t k = 0; k < depth; ++k) o[k] += go[k] * coeff;
            }
          }
        }
      }
    });
    return Status::Ok();
  });
}

// ---- Local response normalization (lrn_op.cc) ----

// bias + alpha * the sum of the squares within the radius of each j of a
// depth vector, into norm: the squares added in depth order (TensorFlow's
// band contraction adds them so; its gradient's loop too), out-of-range
// squares as the zeros of `squares` (depth + 2 * radius long): adding +0
// to a sum of squares changes nothing. Eight j at a time, their sums in
// registers over the window (9 passes over `norm` were 3% of CIFAR-10's
// step).
void LrnNorms(const float* row, int64_t depth, const LrnPlan& p, std::vector<float>& squares, float* norm) {
  squares.assign(depth + 2 * p.radius, 0.0f);
  for (int64_t k = 0; k < depth; ++k) squares[p.radius + k] = row[k] * row[k];
  const int64_t window = 2 * p.radius + 1;
  int64_t j = 0;
  const __m128 alpha = _mm_set1_ps(p.alpha), bias = _mm_set1_ps(p.bias);
  for (; j + 8 <= depth; j += 8) {
    __m128 low = _mm_setzero_ps(), high = _mm_setzero_ps();
    for (int64_t d = 0; d < window; ++d) {
      const float* s = squares.data() + j + d;
      low = _mm_add_ps(low, _mm_loadu_ps(s));
      high = _mm_add_ps(high, _mm_loadu_ps(s + 4));
    }
    _mm_storeu_ps(norm + j, _mm_add_ps(_mm_mul_ps(low, alpha), bias));
    _mm_storeu_ps(norm + j + 4, _mm_add_ps(_mm_mul_ps(high, alpha), bias));
  }
  for (; j < depth; ++j) {
    float sum = 0.0f;
    for (int64_t d = 0; d < window; ++d) sum += squares[j + d];
    const float scaled = sum * p.alpha;
    norm[j] = scaled + p.bias;
  }
}

// LRN, float32, depth up to 384 (TensorFlow's band-matrix path): the sum of
// squares of each window along the depth, in depth order (its contraction
// with a 0/1 band adds the squares in order; the zeros change nothing),
// times alpha plus bias; then x * s^-beta as Eigen computes it: its
// reciprocal for beta 1, its rsqrt for 0.5, else exp(log(s) * -beta), each
// with Eigen's packet functions on whole packets of 8 and the scalar ones
// on the rest (ApplyTfFloatFunction). Deeper tensors with beta 1 or 0.5 take
// TensorFlow's running-sum path (SingleThreadedLRN). Each thread takes its
// rows through every stage while they are in its cache.
Status LrnKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const LrnPlan p, PlanLrn(c, {&input}, kCpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(input.shape()));
  const int64_t depth = p.depth;
  const int64_t n = input.num_elements();
  const int64_t rows = p.rows;
  const float* x = input.data<float>();
  float* out = c.output.data<float>();
  const bool running_sum = depth > 384 && (p.beta == 1.0f || p.beta == 0.5f);
  ParallelRows(rows, depth * (2 * p.radius + 12), [&](int64_t first, int64_t last) {
    std::vector<float> padded;
    for (int64_t i = first; i < last; ++i) {
      const float* xi = x + i * depth;
      float* si = out + i * depth;
      if (running_sum) {
        // SingleThreadedLRN: squares times alpha, a sum that adds the
        // entering square and subtracts the leaving one.
        padded.assign(depth + 2 * p.radius, 0.0f);
        for (int64_t k = 0; k < depth; ++k) padded[p.radius + k] = xi[k] * xi[k] * p.alpha;
        float acc = 0;
        for (int64_t k = 0; k < 2 * p.radius; ++k) acc += padded[k];
        for (int64_t j = 0; j < depth; ++j) {
          acc += padded[j + 2 * p.radius];
          si[j] = p.bias + acc;
          acc -= padded[j];
        }
        continue;
      }
      LrnNorms(xi, depth, p, padded, si);
    }
    const int64_t begin = first * depth;
    const int64_t end = last * depth;
    if (p.beta == 1.0f) {
      ApplyTfFloatFunctionPart(TfFloatFunction::kReciprocal, out, out, begin, end, n);
    } else if (p.beta == 0.5f) {
      ApplyTfFloatFunctionPart(TfFloatFunction::kRsqrt, out, out, begin, end, n);
    } else {
      ApplyTfFloatFunctionPart(TfFloatFunction::kLog, out, out, begin, end, n);
      for (int64_t i = begin; i < end; ++i) out[i] *= -p.beta;
      ApplyTfFloatFunctionPart(TfFloatFunction::kExp, out, out, begin, end, n);
    }
    for (int64_t i = begin; i < end; ++i) out[i] = x[i] * out[i];
  });
  return Status::Ok();
}

// LRNGrad(grads, input, output): LaunchLRNGrad<CPUDevice>'s loops, float32.
// Its loop over j adds to out[k] for every k in j's window; the sums are
// the same taken per k over its window's j (each k's terms in ascending j,
// as the loop adds them), which packets of k compute (LrnGradientSums: the
// divisions were most of the kernel's time one by one). Its std::pow,
// the C library's, in packets of the same bits (glibc_powf.h).
Status LrnGradKernel(KernelContext& c) {
  const Tensor& grads = c.inputs[0];
  const Tensor& input = c.inputs[1];
  const Tensor& activations = c.inputs[2];
  TFRUN_ASSIGN_OR_RETURN(const LrnPlan p, PlanLrn(c, {&grads, &input, &activations}, kCpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(input.shape()));
  const int64_t depth = p.depth;
  const int64_t rows = p.rows;
  const int64_t radius = p.radius;
  const float* x = input.data<float>();
  const float* y = activations.data<float>();
  const float* g = grads.data<float>();
  float* out = c.output.data<float>();
  const float alpha_beta_2 = -2.0f * p.alpha * p.beta;
  ParallelRows(rows, depth * (2 * radius + 1) * 4, [&](int64_t first, int64_t last) {
    // Indexed j + radius; the padding's grad 0 leaves its terms out.
    std::vector<float> squares, norms(depth + 2 * radius, 1.0f), scale(depth + 2 * radius, 0.0f),
        power(depth + 2 * radius, 0.0f), grad(depth + 2 * radius, 0.0f), gathered(depth),
        powers(depth);
    std::vector<int64_t> with_gradient(depth);
    for (int64_t i = first; i < last; ++i) {
      const float* xi = x + i * depth;
      LrnNorms(xi, depth, p, squares, norms.data() + radius);
      int64_t nonzero = 0;
      for (int64_t j = 0; j < depth; ++j) {
        grad[radius + j] = g[i * depth + j];
        scale[radius + j] = alpha_beta_2 * y[i * depth + j];
        nonzero += grad[radius + j] != 0.0f;
      }
      if (2 * nonzero > depth) {
        PowfLikeGlibc(norms.data() + radius, -p.beta, power.data() + radius, depth);
      } else {
        // pow only where a gradient needs it (after max pooling most are 0).
        int64_t count = 0;
        for (int64_t j = 0; j < depth; ++j) {
          with_gradient[count] = j;
          gathered[count] = norms[radius + j];
          count += grad[radius + j] != 0.0f;  // no branch: the zeros fall at random
        }
        PowfLikeGlibc(gathered.data(), -p.beta, powers.data(), count);
        for (int64_t n = 0; n < count; ++n) power[radius + with_gradient[n]] = powers[n];
      }
      LrnGradientSums(xi, scale.data(), norms.data(), power.data(), grad.data(), depth, radius, out + i * depth);
    }
  });
  return Status::Ok();
}

// ---- Batch normalization (FusedBatchNorm, V2, V3 and their gradients) ----
//
// On oneDNN, as TensorFlow 2.21's CPU build runs them (its oneDNN rewrite
// turns them into _MklNativeFusedBatchNorm* ops; with TF_ENABLE_ONEDNN_OPTS=0
// its Eigen kernels give other last bits). tfrun's oneDNN is Debian's, not
// the one TensorFlow bundles, so sums may round differently
// (docs/differences.md).

memory::desc DataDesc(const Shape& s, bool nchw) {
  return nchw ? memory::desc({s[0], s[1], s[2], s[3]}, memory::data_type::f32, memory::format_tag::nchw)
              : memory::desc({s[0], s[3], s[1], s[2]}, memory::data_type::f32, memory::format_tag::nhwc);
}

memory ChannelMemory(int64_t channels, const float* data) {
  return memory(memory::desc({channels}, memory::data_type::f32, memory::format_tag::a), TheDnnl().engine,
                const_cast<float*>(data));
}

// FusedBatchNorm*(x, scale, offset, mean, variance) -> y, batch_mean,
// batch_variance, reserve_space_1 (the batch mean), reserve_space_2 (its
// variance) and, for V3, reserve_space_3 (empty). Training normalizes by the
// batch's statistics; the running ones are updated with
// exponential_avg_factor and Bessel's correction (N / (N - 1)), as
// TensorFlow's kernels do. Inference uses the given mean and variance.
Status FusedBatchNormKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const BatchNormPlan plan, PlanBatchNorm(c));
  const Tensor& x = c.inputs[0];
  const int64_t channels = plan.channels;
  TFRUN_ASSIGN_OR_RETURN(Tensor y, c.Allocate(DType::kFloat32, x.shape()));
  std::vector<Tensor> stats;
  for (int i = 0; i < 4; ++i) {
    TFRUN_ASSIGN_OR_RETURN(Tensor t, c.Allocate(DType::kFloat32, {channels}));
    stats.push_back(std::move(t));
  }
  float* batch_mean = stats[0].data<float>();
  float* batch_var = stats[1].data<float>();
  float* saved_mean = stats[2].data<float>();
  float* saved_var = stats[3].data<float>();
  const float* scale = c.inputs[1].data<float>();
  const float* offset = c.inputs[2].data<float>();
  const float* old_mean = c.inputs[3].data<float>();
  const float* old_var = c.inputs[4].data<float>();
  auto finish = [&]() -> Status {
    c.outputs.clear();
    c.outputs.push_back(std::move(y));
    for (Tensor& t : stats) c.outputs.push_back(std::move(t));
    if (c.node.op == "FusedBatchNormV3") {
      TFRUN_ASSIGN_OR_RETURN(Tensor reserve, c.Allocate(DType::kFloat32, {0}));
      c.outputs.push_back(std::move(reserve));
    }
    return Status::Ok();
  };
  if (x.num_elements() == 0) {
    // TensorFlow's: an empty batch has NaN statistics.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (Tensor& t : stats) std::fill_n(t.data<float>(), channels, plan.training ? nan : 0.0f);
    if (!plan.training) {
      std::copy_n(old_mean, channels, batch_mean);
      std::copy_n(old_var, channels, batch_var);
    }
    return finish();
  }
  TFRUN_RETURN_IF_ERROR(RunDnnl(c, [&] {
    const Dnnl d = TheDnnl();
  MultiThreadedSection section;  // oneDNN's OpenMP team
    const memory::desc data = DataDesc(x.shape(), plan.nchw);
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    if (!plan.training) flags = flags | dnnl::normalization_flags::use_global_stats;
    dnnl::batch_normalization_forward::desc desc(
        plan.training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference, data, plan.epsilon,
        flags);
    dnnl::batch_normalization_forward::primitive_desc pd(desc, d.engine);
    memory src(data, d.engine, x.data<float>());
    memory dst(data, d.engine, y.data<float>());
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src},
                                            {DNNL_ARG_DST, dst},
                                            {DNNL_ARG_SCALE, ChannelMemory(channels, scale)},
                                            {DNNL_ARG_SHIFT, ChannelMemory(channels, offset)}};
    if (plan.training) {
      args.emplace(DNNL_ARG_MEAN, ChannelMemory(channels, saved_mean));
      args.emplace(DNNL_ARG_VARIANCE, ChannelMemory(channels, saved_var));
    } else {
      args.emplace(DNNL_ARG_MEAN, ChannelMemory(channels, old_mean));
      args.emplace(DNNL_ARG_VARIANCE, ChannelMemory(channels, old_var));
    }
    dnnl::batch_normalization_forward(pd).execute(d.stream, args);
  }));
  if (plan.training) {
    const int64_t n = x.num_elements() / channels;
    const float adjust = static_cast<float>(n) / static_cast<float>(n > 1 ? n - 1 : 1);
    const float factor = plan.exponential_avg_factor;
    for (int64_t k = 0; k < channels; ++k) {
      if (factor == 1.0f) {
        batch_mean[k] = saved_mean[k];
        batch_var[k] = saved_var[k] * adjust;
      } else {
        const float keep = 1.0f - factor;
        batch_mean[k] = keep * old_mean[k] + factor * saved_mean[k];
        batch_var[k] = keep * old_var[k] + factor * saved_var[k] * adjust;
      }
    }
  } else {
    std::copy_n(old_mean, channels, batch_mean);
    std::copy_n(old_var, channels, batch_var);
    std::copy_n(old_mean, channels, saved_mean);
    std::copy_n(old_var, channels, saved_var);
  }
  return finish();
}

// FusedBatchNormGrad*(y_backprop, x, scale, reserve_space_1,
// reserve_space_2[, reserve_space_3]) -> x_backprop, scale_backprop,
// offset_backprop and two empty outputs. Training: through the batch's
// statistics (the reserve spaces: the forward's batch mean and variance);
// inference: through fixed ones (the population mean and variance).
Status FusedBatchNormGradKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const BatchNormPlan plan, PlanBatchNormGrad(c));
  const Tensor& dy = c.inputs[0];
  const Tensor& x = c.inputs[1];
  const int64_t channels = plan.channels;
  TFRUN_ASSIGN_OR_RETURN(Tensor dx, c.Allocate(DType::kFloat32, x.shape()));
  TFRUN_ASSIGN_OR_RETURN(Tensor dscale, c.Allocate(DType::kFloat32, {channels}));
  TFRUN_ASSIGN_OR_RETURN(Tensor doffset, c.Allocate(DType::kFloat32, {channels}));
  if (x.num_elements() == 0) {
    std::fill_n(dscale.data<float>(), channels, 0.0f);
    std::fill_n(doffset.data<float>(), channels, 0.0f);
  } else {
    const std::vector<float> unused_shift(channels, 0.0f);
    TFRUN_RETURN_IF_ERROR(RunDnnl(c, [&] {
      const Dnnl d = TheDnnl();
  MultiThreadedSection section;  // oneDNN's OpenMP team
      const memory::desc data = DataDesc(x.shape(), plan.nchw);
      auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
      if (!plan.training) flags = flags | dnnl::normalization_flags::use_global_stats;
      dnnl::batch_normalization_forward::desc forward(dnnl::prop_kind::forward_training, data, plan.epsilon, flags);
      dnnl::batch_normalization_forward::primitive_desc hint(forward, d.engine);
      dnnl::batch_normalization_backward::desc desc(dnnl::prop_kind::backward, data, data, plan.epsilon, flags);
      dnnl::batch_normalization_backward::primitive_desc pd(desc, d.engine, hint);
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, memory(data, d.engine, x.data<float>())},
          {DNNL_ARG_DIFF_DST, memory(data, d.engine, dy.data<float>())},
          {DNNL_ARG_MEAN, ChannelMemory(channels, c.inputs[3].data<float>())},
          {DNNL_ARG_VARIANCE, ChannelMemory(channels, c.inputs[4].data<float>())},
          {DNNL_ARG_SCALE, ChannelMemory(channels, c.inputs[2].data<float>())},
          // oneDNN 2.6 asks for the shift with use_shift though the
          // gradient never reads it.
          {DNNL_ARG_SHIFT, ChannelMemory(channels, unused_shift.data())},
          {DNNL_ARG_DIFF_SRC, memory(data, d.engine, dx.data<float>())},
          {DNNL_ARG_DIFF_SCALE, ChannelMemory(channels, dscale.data<float>())},
          {DNNL_ARG_DIFF_SHIFT, ChannelMemory(channels, doffset.data<float>())}};
      dnnl::batch_normalization_backward(pd).execute(d.stream, args);
    }));
  }
  c.outputs.clear();
  c.outputs.push_back(std::move(dx));
  c.outputs.push_back(std::move(dscale));
  c.outputs.push_back(std::move(doffset));
  for (int i = 0; i < 2; ++i) {
    TFRUN_ASSIGN_OR_RETURN(Tensor empty, c.Allocate(DType::kFloat32, {0}));
    c.outputs.push_back(std::move(empty));
  }
  return Status::Ok();
}

}  // namespace

void RegisterNnKernels(KernelRegistry* registry) {
  const DTypeSet f32{DType::kFloat32};
  const DTypeSet f32_64{DType::kFloat32, DType::kFloat64};
  registry->Bind("Conv2D", kCpu, f32, Conv2DKernel);
  registry->Bind("DepthwiseConv2dNative", kCpu, f32_64, [](KernelContext& c) {
    return c.node.dtype == DType::kFloat64 ? DepthwiseConvKernel<double>(c) : DepthwiseConvKernel<float>(c);
  });
  registry->Bind("Conv2DBackpropInput", kCpu, f32, Conv2DBackpropInputKernel);
  registry->Bind("Conv2DBackpropFilter", kCpu, f32, Conv2DBackpropFilterKernel);
  registry->Bind("MaxPool", kCpu, f32_64, PoolKernel<false>);
  registry->Bind("MaxPoolGrad", kCpu, f32_64, MaxPoolGradKernel);
  registry->Bind("AvgPool", kCpu, f32_64, PoolKernel<true>);
  registry->Bind("AvgPoolGrad", kCpu, f32_64, AvgPoolGradKernel);
  registry->Bind("LRN", kCpu, f32, LrnKernel);
  registry->Bind("LRNGrad", kCpu, f32, LrnGradKernel);
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    registry->Bind(op, kCpu, f32, FusedBatchNormKernel);
  }
  for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    registry->Bind(op, kCpu, f32, FusedBatchNormGradKernel);
  }
}

}  // namespace cpu
}  // namespace tfrun
