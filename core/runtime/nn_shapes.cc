#include "core/runtime/nn_shapes.h"

#include <fmt/format.h>

#include <algorithm>
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
  const std::vector<int64_t> strides = c.IntListAttr("strides");
  std::vector<int64_t> dilations = c.IntListAttr("dilations");
  if (dilations.empty()) dilations = {1, 1, 1, 1};
  if (strides.size() != 4) return c.Fail("Sliding window strides field must specify 4 dimensions");
  if (dilations.size() != 4) return c.Fail("Sliding window dilations field must specify 4 dimensions");
  std::vector<int64_t> explicit_values = c.IntListAttr("explicit_paddings");
  TFRUN_RETURN_IF_ERROR(CheckWindowValues(c, {&input, &filter, &strides, &dilations, &explicit_values}));
  if (strides[0] != 1 || strides[3] != 1) {
    return c.Fail("Current implementation does not yet support strides in the batch and depth dimensions.");
  }
  if (dilations[0] != 1 || dilations[3] != 1) {
    return c.Fail("Current implementation does not yet support dilations in the batch and depth dimensions.");
  }
  ConvGeometry g;
  g.batch = input[0];
  g.in_rows = input[1];
  g.in_cols = input[2];
  g.in_depth = input[3];
  g.filter_rows = filter[0];
  g.filter_cols = filter[1];
  g.out_depth = filter[3];
  if (filter[2] == 0 || g.in_depth % filter[2] != 0) {
    return c.Fail(fmt::format("input depth must be evenly divisible by filter depth: {} vs {}", g.in_depth, filter[2]));
  }
  if (filter[2] != g.in_depth) return c.Fail("tfrun does not run grouped convolutions (filter depth < input depth)");
  g.stride_rows = strides[1];
  g.stride_cols = strides[2];
  g.dilation_rows = dilations[1];
  g.dilation_cols = dilations[2];
  const std::string padding = c.StringAttr("padding", "VALID");
  std::vector<int64_t> explicit_paddings = c.IntListAttr("explicit_paddings");
  explicit_paddings.resize(8, 0);
  TFRUN_RETURN_IF_ERROR(WindowedOutputSize(c, padding, g.in_rows, g.filter_rows, g.dilation_rows, g.stride_rows,
                                           explicit_paddings[2], explicit_paddings[3], &g.out_rows, &g.pad_top,
                                           &g.pad_bottom));
  TFRUN_RETURN_IF_ERROR(WindowedOutputSize(c, padding, g.in_cols, g.filter_cols, g.dilation_cols, g.stride_cols,
                                           explicit_paddings[4], explicit_paddings[5], &g.out_cols, &g.pad_left,
                                           &g.pad_right));
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
  if (c.StringAttr("data_format", "NHWC") != "NHWC") {
    if (device_type == kCpu) return c.Fail("Default MaxPoolingOp only supports NHWC on device type CPU");
    return c.Fail("tfrun runs MaxPool in the NHWC format only (data_format NCHW)");
  }
  const std::vector<int64_t> ksize = c.IntListAttr("ksize");
  const std::vector<int64_t> strides = c.IntListAttr("strides");
  if (ksize.size() != 4) return c.Fail("Sliding window ksize field must specify 4 dimensions");
  if (strides.size() != 4) return c.Fail("Sliding window stride field must specify 4 dimensions");
  if (ksize[0] != 1 || strides[0] != 1) {
    return c.Fail("Pooling is not yet supported on the batch dimension.");
  }
  if (ksize[3] != 1 || strides[3] != 1) return c.Fail("tfrun's MaxPool pools over rows and columns only");
  for (int d = 1; d < 3; ++d) {
    if (ksize[d] <= 0) return c.Fail(fmt::format("Sliding window ksize for dimension {} was zero.", d));
  }
  if (input.size() != 4) return c.Fail("tensor_in must be 4-dimensional");
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

}  // namespace tfrun
