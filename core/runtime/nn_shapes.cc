#include "core/runtime/nn_shapes.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace tfrun {
namespace {

// GetWindowedOutputSizeVerbose (kernel_shape_util.cc), one dimension.
Status WindowedOutputSize(KernelContext& c, const std::string& padding, int64_t in, int64_t filter, int64_t dilation,
                          int64_t stride, int64_t explicit_before, int64_t explicit_after, int64_t* out,
                          int64_t* before, int64_t* after) {
  if (stride <= 0) return c.Fail(fmt::format("Stride must be > 0, but got {}", stride));
  if (dilation < 1) return c.Fail(fmt::format("Dilation rate must be >= 1, but got {}", dilation));
  const int64_t effective = (filter - 1) * dilation + 1;
  if (padding == "VALID") {
    *out = (in - effective + stride) / stride;
    *before = *after = 0;
  } else if (padding == "EXPLICIT") {
    *out = (in + explicit_before + explicit_after - effective + stride) / stride;
    *before = explicit_before;
    *after = explicit_after;
  } else {  // SAME
    *out = (in + stride - 1) / stride;
    const int64_t needed = std::max<int64_t>(0, (*out - 1) * stride + effective - in);
    *before = needed / 2;
    *after = needed - *before;
  }
  if (*out < 0) {
    return c.Fail(fmt::format("Computed output size would be negative: {} [input_size: {}, effective_filter_size: {}, "
                              "stride: {}]",
                              *out, in, effective, stride));
  }
  return Status::Ok();
}

// Sizes, strides and dilations past this are refused before any
// arithmetic on them could overflow (a graph file may say anything).
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;

Status CheckWindowValues(KernelContext& c, std::initializer_list<const std::vector<int64_t>*> lists) {
  for (const std::vector<int64_t>* list : lists) {
    for (int64_t v : *list) {
      if (v < 0 || v >= kMaxWindowValue) {
        return c.Fail(fmt::format("{}: a size, stride or dilation of {} is out of range", c.node.op, v));
      }
    }
  }
  return Status::Ok();
}

Status CheckOutBackprop(KernelContext& c, const ConvGeometry& g, const Tensor& out_backprop) {
  const Shape expected{g.batch, g.out_rows, g.out_cols, g.out_depth};
  if (out_backprop.shape() != expected) {
    return c.Fail(fmt::format("{}: Size of out_backprop doesn't match computed: actual = {}, computed = {}",
                              c.node.op, ShapeDebugString(out_backprop.shape()), ShapeDebugString(expected)));
  }
  return Status::Ok();
}

// A convolution's strides and dilations (4 each, dilations 1 where the
// node has none), checked as Conv2DParameters checks them, the batch and
// depth strides 1.
struct ConvWindow {
  std::vector<int64_t> strides, dilations;
};
StatusOr<ConvWindow> ReadConvWindow(KernelContext& c, const Shape& input, const Shape& filter) {
  ConvWindow w;
  w.strides = c.IntListAttr("strides");
  w.dilations = c.IntListAttr("dilations");
  if (w.dilations.empty()) w.dilations = {1, 1, 1, 1};
  if (w.strides.size() != 4) return c.Fail("Sliding window strides field must specify 4 dimensions");
  if (w.dilations.size() != 4) return c.Fail("Sliding window dilations field must specify 4 dimensions");
  std::vector<int64_t> explicit_values = c.IntListAttr("explicit_paddings");
  TFRUN_RETURN_IF_ERROR(CheckWindowValues(c, {&input, &filter, &w.strides, &w.dilations, &explicit_values}));
  if (w.strides[0] != 1 || w.strides[3] != 1) {
    return c.Fail("Current implementation does not yet support strides in the batch and depth dimensions.");
  }
  return w;
}

// A convolution's input dimensions and filter window (NHWC; the filter
// [rows, cols, ...]).
ConvGeometry InputAndFilter(const Shape& input, const Shape& filter) {
  ConvGeometry g;
  g.batch = input[0];
  g.in_rows = input[1];
  g.in_cols = input[2];
  g.in_depth = input[3];
  g.filter_rows = filter[0];
  g.filter_cols = filter[1];
  return g;
}

// The output's rows and columns and the padding before and after each, from
// the node's padding attrs and `g`'s sizes, strides and dilations.
Status PlaceWindow(KernelContext& c, ConvGeometry* g) {
  const std::string padding = c.StringAttr("padding", "VALID");
  std::vector<int64_t> explicit_paddings = c.IntListAttr("explicit_paddings");
  explicit_paddings.resize(8, 0);
  TFRUN_RETURN_IF_ERROR(WindowedOutputSize(c, padding, g->in_rows, g->filter_rows, g->dilation_rows, g->stride_rows,
                                           explicit_paddings[2], explicit_paddings[3], &g->out_rows, &g->pad_top,
                                           &g->pad_bottom));
  return WindowedOutputSize(c, padding, g->in_cols, g->filter_cols, g->dilation_cols, g->stride_cols,
                            explicit_paddings[4], explicit_paddings[5], &g->out_cols, &g->pad_left, &g->pad_right);
}

}  // namespace

StatusOr<ConvGeometry> PlanConv(KernelContext& c, const Shape& input, const Shape& filter,
                                std::string_view device_type) {
  if (c.StringAttr("data_format", "NHWC") != "NHWC") {
    if (device_type == kCpu) return c.Fail("The Conv2D op currently only supports the NHWC tensor format on CPU.");
    return c.Fail("tfrun runs Conv2D in the NHWC format only (data_format NCHW)");
  }
  if (input.size() != 4) return c.Fail("input must be 4-dimensional" + ShapeDebugString(input));
  if (filter.size() != 4) return c.Fail("filter must be 4-dimensional: " + ShapeDebugString(filter));
  // Conv2DOp's check (it ran and printed [] before; the gradients' own
  // shapes carry the filter's).
  if (c.node.op == "Conv2D" && NumElements(filter).value_or(0) == 0) {
    return c.Fail("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  }
  TFRUN_ASSIGN_OR_RETURN(const ConvWindow window, ReadConvWindow(c, input, filter));
  const std::vector<int64_t>& strides = window.strides;
  const std::vector<int64_t>& dilations = window.dilations;
  if (dilations[0] != 1 || dilations[3] != 1) {
    return c.Fail("Current implementation does not yet support dilations in the batch and depth dimensions.");
  }
  ConvGeometry g = InputAndFilter(input, filter);
  g.out_depth = filter[3];
  if (filter[2] == 0 || g.in_depth % filter[2] != 0) {
    return c.Fail(fmt::format("input depth must be evenly divisible by filter depth: {} vs {}", g.in_depth, filter[2]));
  }
  if (filter[2] != g.in_depth) return c.Fail("tfrun does not run grouped convolutions (filter depth < input depth)");
  g.stride_rows = strides[1];
  g.stride_cols = strides[2];
  g.dilation_rows = dilations[1];
  g.dilation_cols = dilations[2];
  TFRUN_RETURN_IF_ERROR(PlaceWindow(c, &g));
  return g;
}


StatusOr<ConvGeometry> PlanDepthwiseConv(KernelContext& c, const Shape& input, const Shape& filter,
                                         int64_t* multiplier) {
  if (c.StringAttr("data_format", "NHWC") != "NHWC") {
    return c.Fail("Depthwise convolution on CPU is only supported for NHWC format");
  }
  if (input.size() != 4) return c.Fail("input must be 4-dimensional" + ShapeDebugString(input));
  if (filter.size() != 4) return c.Fail("filter must be 4-dimensional: " + ShapeDebugString(filter));
  TFRUN_ASSIGN_OR_RETURN(const ConvWindow window, ReadConvWindow(c, input, filter));
  const std::vector<int64_t>& strides = window.strides;
  const std::vector<int64_t>& dilations = window.dilations;
  if (strides[1] != strides[2]) {
    return c.Fail("Current implementation only supports equal length strides in the row and column dimensions.");
  }
  if (dilations[0] != 1 || dilations[1] != 1 || dilations[2] != 1 || dilations[3] != 1) {
    return c.Fail("Current libxsmm and customized CPU implementations do not yet support dilation rates larger "
                  "than 1.");
  }
  if (input[3] != filter[2]) {
    return c.Fail(fmt::format("input and filter must have the same depth: {} vs {}", input[3], filter[2]));
  }
  ConvGeometry g = InputAndFilter(input, filter);
  *multiplier = filter[3];
  if (__builtin_mul_overflow(g.in_depth, filter[3], &g.out_depth)) return c.Fail("the output depth overflows");
  g.stride_rows = strides[1];
  g.stride_cols = strides[2];
  TFRUN_RETURN_IF_ERROR(PlaceWindow(c, &g));
  return g;
}

// A 4-vector of sizes (Conv2DBackpropInput's input_sizes, the filter's
// filter_sizes) as a shape.
StatusOr<Shape> ConvSizesInput(KernelContext& c, const Tensor& sizes, std::string_view what) {
  if (sizes.rank() != 1 || sizes.num_elements() != 4) {
    return c.Fail(fmt::format("Conv2DBackprop{}: {}_sizes input must be 1-dim, not {}",
                              what == "input" ? "Input" : "Filter", what, sizes.rank()));
  }
  Shape shape(4);
  for (int i = 0; i < 4; ++i) shape[i] = sizes.GetAsInt64(i);
  return shape;
}

StatusOr<ConvGradientPlan> PlanConvGradient(KernelContext& c, const Shape& input_shape, const Shape& filter_shape,
                                            const Shape& output_shape, const Tensor& other,
                                            const Tensor& out_backprop, std::string_view device_type) {
  ConvGradientPlan plan;
  TFRUN_ASSIGN_OR_RETURN(plan.geometry, PlanConv(c, input_shape, filter_shape, device_type));
  TFRUN_RETURN_IF_ERROR(CheckOutBackprop(c, plan.geometry, out_backprop));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(output_shape));
  plan.zeros = c.output.num_elements() > 0 && (out_backprop.num_elements() == 0 || other.num_elements() == 0);
  return plan;
}

StatusOr<PoolGeometry> PlanPool(KernelContext& c, const Shape& input, std::string_view device_type) {
  const bool average = c.node.op.rfind("AvgPool", 0) == 0;
  if (c.StringAttr("data_format", "NHWC") != "NHWC") {
    if (device_type == kCpu) {
      return c.Fail(fmt::format("Default {}PoolingOp only supports NHWC on device type CPU", average ? "Avg" : "Max"));
    }
    return c.Fail(fmt::format("tfrun runs {} in the NHWC format only (data_format NCHW)", c.node.op));
  }
  const std::vector<int64_t> ksize = c.IntListAttr("ksize");
  const std::vector<int64_t> strides = c.IntListAttr("strides");
  if (ksize.size() != 4) return c.Fail("Sliding window ksize field must specify 4 dimensions");
  if (strides.size() != 4) return c.Fail("Sliding window stride field must specify 4 dimensions");
  if (ksize[0] != 1 || strides[0] != 1) {
    return c.Fail("Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[3] != 1 || strides[3] != 1) {
    if (average) return c.Fail("Non-spatial pooling is not yet supported. Volunteers? :)");
    return c.Fail("tfrun's MaxPool pools over rows and columns only");
  }
  for (int d = 1; d < 3; ++d) {
    if (ksize[d] <= 0) return c.Fail(fmt::format("Sliding window ksize for dimension {} was zero.", d));
  }
  if (input.size() != 4) {
    return c.Fail(c.node.op == "AvgPoolGrad" ? "out_backprop must be 4-dimensional" : "tensor_in must be 4-dimensional");
  }
  TFRUN_RETURN_IF_ERROR(CheckWindowValues(c, {&input, &ksize, &strides}));
  PoolGeometry g;
  g.batch = input[0];
  g.in_rows = input[1];
  g.in_cols = input[2];
  g.depth = input[3];
  g.window_rows = ksize[1];
  g.window_cols = ksize[2];
  g.stride_rows = strides[1];
  g.stride_cols = strides[2];
  const std::string padding = c.StringAttr("padding", "VALID");
  int64_t after = 0;
  TFRUN_RETURN_IF_ERROR(WindowedOutputSize(c, padding, g.in_rows, g.window_rows, 1, g.stride_rows, 0, 0, &g.out_rows,
                                           &g.pad_top, &after));
  TFRUN_RETURN_IF_ERROR(WindowedOutputSize(c, padding, g.in_cols, g.window_cols, 1, g.stride_cols, 0, 0, &g.out_cols,
                                           &g.pad_left, &after));
  if (g.pad_top >= g.window_rows || g.pad_left >= g.window_cols) {
    return c.Fail("Pooling window is smaller than the padding");
  }
  return g;
}

StatusOr<PoolGeometry> PlanMaxPoolGrad(KernelContext& c, std::string_view device_type) {
  TFRUN_ASSIGN_OR_RETURN(const PoolGeometry g, PlanPool(c, c.inputs[0].shape(), device_type));
  const Tensor& grad = c.inputs[2];
  if (grad.shape() != g.output_shape()) {
    return c.Fail(fmt::format("Expected grad shape to be {}, but got {}", ShapeDebugString(g.output_shape()),
                              ShapeDebugString(grad.shape())));
  }
  return g;
}

StatusOr<AvgPoolGradPlan> PlanAvgPoolGrad(KernelContext& c, std::string_view device_type) {
  const Tensor& sizes = c.inputs[0];
  const Tensor& grad = c.inputs[1];
  if (sizes.rank() != 1 || sizes.num_elements() != 4) {
    return c.Fail("out_backprop must be 1-dimensional and 4 elements");
  }
  if (grad.rank() != 4) return c.Fail("out_backprop must be 4-dimensional");
  AvgPoolGradPlan plan;
  TFRUN_ASSIGN_OR_RETURN(plan.output_shape, ShapeFromVector(c, sizes));
  TFRUN_ASSIGN_OR_RETURN(plan.geometry, PlanPool(c, plan.output_shape, device_type));
  PoolGeometry& g = plan.geometry;
  if (device_type != kCpu) {
    if (grad.shape() != g.output_shape()) {
      return c.Fail(fmt::format("Expected grad shape to be {}, but got {}", ShapeDebugString(g.output_shape()),
                                ShapeDebugString(grad.shape())));
    }
    return plan;
  }
  // TensorFlow's CPU kernel walks the gradient's own shape, not the
  // forward's output shape (a gradient of another shape is not refused);
  // it refuses a window starting past the input, and tfrun any write past
  // the output (with the text of TensorFlow's later bounds check).
  g.batch = grad.shape()[0];
  g.out_rows = grad.shape()[1];
  g.out_cols = grad.shape()[2];
  g.depth = grad.shape()[3];
  int64_t row_end = 0, col_end = 0;
  for (int64_t r = 0; r < g.out_rows; ++r) {
    if (r * g.stride_rows > g.in_rows) return c.Fail("index * stride must be less than or equal to input size");
    int64_t rows = 0;
    row_end = std::max(row_end, g.BroadcastRows(r, &rows) + rows);
  }
  for (int64_t q = 0; q < g.out_cols; ++q) {
    if (q * g.stride_cols > g.in_cols) return c.Fail("index * stride must be less than or equal to input size");
    int64_t cols = 0;
    col_end = std::max(col_end, g.BroadcastCols(q, &cols) + cols);
  }
  if (g.batch > 0 && row_end > 0 && col_end > 0 && g.depth > 0) {
    const int64_t last_pixel = ((g.batch - 1) * g.in_rows + row_end - 1) * g.in_cols + col_end - 1;
    int64_t elements = 1;
    for (int64_t d : plan.output_shape) elements *= d;
    if ((last_pixel + 1) > elements / g.depth || elements % g.depth != 0) {
      return c.Fail(fmt::format(
          "Output only has {} elements but computation requested would use element with index={}", elements,
          (last_pixel + 1) * g.depth - 1));
    }
  }
  return plan;
}

int64_t PoolGeometry::BroadcastRows(int64_t out_row, int64_t* size) const {
  return BroadcastSize(out_row, in_rows, window_rows, stride_rows, pad_top, size);
}
int64_t PoolGeometry::BroadcastCols(int64_t out_col, int64_t* size) const {
  return BroadcastSize(out_col, in_cols, window_cols, stride_cols, pad_left, size);
}

int64_t PoolGeometry::BroadcastSize(int64_t index, int64_t in_size, int64_t window, int64_t stride, int64_t pad,
                                    int64_t* size) {
  int64_t start = index * stride;
  *size = window;
  if (start < pad) {
    *size = window + start - pad;
    start = 0;
  } else {
    start -= pad;
  }
  // Replaces the size cut by the padding before, as TensorFlow does: a
  // window wider than the input with padding on both sides covers it all.
  if (start + window > in_size) *size = std::min(in_size - start, window);
  return start;
}

StatusOr<LrnPlan> PlanLrn(KernelContext& c, std::initializer_list<const Tensor*> tensors,
                          std::string_view device_type) {
  LrnPlan p;
  p.radius = c.IntAttr("depth_radius", 5);
  if (p.radius < 0 || p.radius > std::numeric_limits<int>::max()) {
    return c.Fail(fmt::format("depth_radius = {} larger than int max", p.radius));
  }
  p.bias = c.FloatAttr("bias", 1);
  p.alpha = c.FloatAttr("alpha", 1);
  p.beta = c.FloatAttr("beta", 0.5f);
  const Shape& shape = (*tensors.begin())->shape();
  for (const Tensor* t : tensors) {
    if (t->rank() != 4) {
      return c.Fail(tensors.size() == 1 ? "in must be 4-dimensional" : "inputs must be 4-dimensional");
    }
    if (t->shape() != shape) return c.Fail("input_grads, input_image, and out_image should have the same shape");
  }
  const int64_t n = (*tensors.begin())->num_elements();
  if (n > std::numeric_limits<int>::max()) return c.Fail("argument to LRN too large");
  if (device_type != kCpu) {
    if (!(p.beta >= 0.01f)) return c.Fail(fmt::format("cuDNN requires beta >= 0.01, got: {}", p.beta));
    if (p.radius < 1 || p.radius > 7) {
      return c.Fail(fmt::format("cuDNN requires depth_radius in [1, 7], got: {}", p.radius));
    }
    if (!(p.bias >= 1e-5f)) return c.Fail(fmt::format("cuDNN requires bias >= 1e-5, got: {}", p.bias));
  }
  p.depth = shape[3];
  p.rows = p.depth == 0 ? 0 : n / p.depth;
  return p;
}

namespace {

StatusOr<BatchNormPlan> BatchNormAttrs(KernelContext& c, const Tensor& x) {
  BatchNormPlan p;
  const std::string format = c.StringAttr("data_format", "NHWC");
  if (format != "NHWC" && format != "NCHW") {
    return c.Fail(fmt::format("tfrun runs {} in the NHWC and NCHW formats only (data_format {})", c.node.op, format));
  }
  p.nchw = format == "NCHW";
  p.training = c.BoolAttr("is_training", true);
  p.epsilon = c.FloatAttr("epsilon", 0.0001f);
  p.exponential_avg_factor = c.FloatAttr("exponential_avg_factor", 1.0f);
  if (x.rank() != 4) {
    return c.Fail(fmt::format("input must be 4-dimensional{}", ShapeDebugString(x.shape())));
  }
  p.channels = x.shape()[p.nchw ? 1 : 3];
  return p;
}

Status CheckChannelVector(KernelContext& c, const BatchNormPlan& p, const Tensor& t, std::string_view name) {
  if (t.rank() != 1) return c.Fail(fmt::format("{} must be 1-dimensional{}", name, ShapeDebugString(t.shape())));
  if (t.num_elements() != p.channels) {
    return c.Fail(fmt::format("{} must have the same number of elements as the channels of x, got {} and {}", name,
                              t.num_elements(), p.channels));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<BatchNormPlan> PlanBatchNorm(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const BatchNormPlan p, BatchNormAttrs(c, c.inputs[0]));
  TFRUN_RETURN_IF_ERROR(CheckChannelVector(c, p, c.inputs[1], "scale"));
  TFRUN_RETURN_IF_ERROR(CheckChannelVector(c, p, c.inputs[2], "offset"));
  // A training step with the default factor never reads the running
  // statistics (tf.compat.v1.nn.fused_batch_norm passes empty ones), and
  // TensorFlow checks them only when it does; the kernels read them only
  // then too.
  if (!p.training || p.exponential_avg_factor != 1.0f) {
    TFRUN_RETURN_IF_ERROR(CheckChannelVector(c, p, c.inputs[3], "mean"));
    TFRUN_RETURN_IF_ERROR(CheckChannelVector(c, p, c.inputs[4], "variance"));
  }
  return p;
}

StatusOr<BatchNormPlan> PlanBatchNormGrad(KernelContext& c) {
  const Tensor& dy = c.inputs[0];
  const Tensor& x = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const BatchNormPlan p, BatchNormAttrs(c, x));
  if (dy.rank() != 4) return c.Fail(fmt::format("input must be 4-dimensional{}", ShapeDebugString(dy.shape())));
  if (dy.shape() != x.shape()) {
    return c.Fail(fmt::format("x and y_backprop must have same shape, but x has shape {} and y_backprop has shape {}",
                              ShapeDebugString(x.shape()), ShapeDebugString(dy.shape())));
  }
  TFRUN_RETURN_IF_ERROR(CheckChannelVector(c, p, c.inputs[2], "scale"));
  TFRUN_RETURN_IF_ERROR(CheckChannelVector(c, p, c.inputs[3], "reserve_space_1"));
  TFRUN_RETURN_IF_ERROR(CheckChannelVector(c, p, c.inputs[4], "reserve_space_2"));
  return p;
}

}  // namespace tfrun
