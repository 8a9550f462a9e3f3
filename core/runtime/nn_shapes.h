// The geometry of convolutions and pooling from a kernel's inputs and
// attrs, checked as TensorFlow's kernels check them (conv_ops.cc,
// conv_grad_ops.cc, maxpooling_op.cc) and failing with their texts. Shared
// by the CPU (oneDNN) and GPU (cuDNN) kernels: NHWC data, HWIO filters.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/runtime/kernel_registry.h"

namespace tfrun {

// A convolution's geometry, as Conv2DParameters and Conv2DDimensions
// derive it. The paddings are TensorFlow's: SAME puts the odd one after.
struct ConvGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int64_t out_rows = 0, out_cols = 0;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  Shape input_shape() const { return {batch, in_rows, in_cols, in_depth}; }
  Shape filter_shape() const { return {filter_rows, filter_cols, in_depth, out_depth}; }
  Shape output_shape() const { return {batch, out_rows, out_cols, out_depth}; }
};

// Conv2D's geometry for `input` and `filter` (also its gradients', whose
// shapes come from a sizes input). `device_type` only words the refusal
// of NCHW.
StatusOr<ConvGeometry> PlanConv(KernelContext& c, const Shape& input, const Shape& filter,
                                std::string_view device_type);

// DepthwiseConv2dNative's geometry (depthwise_conv_op.cc): the filter
// [rows, cols, in_depth, multiplier], out_depth in_depth * multiplier.
// `multiplier` is set too.
StatusOr<ConvGeometry> PlanDepthwiseConv(KernelContext& c, const Shape& input, const Shape& filter,
                                         int64_t* multiplier);

// Conv2DBackpropInput's input_sizes or Conv2DBackpropFilter's
// filter_sizes (`what`: "input" or "filter"): a 4-vector in host memory.
StatusOr<Shape> ConvSizesInput(KernelContext& c, const Tensor& sizes, std::string_view what);

// A convolution gradient's plan: the geometry, out_backprop checked
// against it, and the node's output of `output_shape` allocated. `zeros`:
// the output is all zeros (out_backprop or `other` is empty) and nothing
// needs computing; the backend writes them. An empty output needs nothing.
struct ConvGradientPlan {
  ConvGeometry geometry;
  bool zeros = false;
};
StatusOr<ConvGradientPlan> PlanConvGradient(KernelContext& c, const Shape& input_shape, const Shape& filter_shape,
                                            const Shape& output_shape, const Tensor& other,
                                            const Tensor& out_backprop, std::string_view device_type);

// Max and average pooling's geometry over rows and columns (NHWC).
struct PoolGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, depth = 0;
  int64_t window_rows = 0, window_cols = 0, stride_rows = 0, stride_cols = 0;
  int64_t out_rows = 0, out_cols = 0, pad_top = 0, pad_left = 0;
  Shape output_shape() const { return {batch, out_rows, out_cols, depth}; }
  // AvgPoolGrad's window of output row (column) `out_row` over the input:
  // its first row and, in *size, how many (GetBroadcastSize in
  // avgpooling_op.cc, with its quirk: a window reaching past both ends
  // counts the whole input, padding before it or not).
  int64_t BroadcastRows(int64_t out_row, int64_t* size) const;
  int64_t BroadcastCols(int64_t out_col, int64_t* size) const;
  static int64_t BroadcastSize(int64_t index, int64_t in_size, int64_t window, int64_t stride, int64_t pad,
                               int64_t* size);
};
StatusOr<PoolGeometry> PlanPool(KernelContext& c, const Shape& input, std::string_view device_type);
// MaxPoolGrad(orig_input, orig_output, grad): the geometry, grad checked.
StatusOr<PoolGeometry> PlanMaxPoolGrad(KernelContext& c, std::string_view device_type);
// AvgPoolGrad(orig_input_shape, grad): the output's shape and the geometry
// of the forward pool of that shape. On the CPU its batch, output rows,
// columns and depth are the gradient's own (TensorFlow's CPU kernel reads
// the gradient by its shape), checked to write inside the output; on a GPU
// the gradient must have the forward's output shape.
struct AvgPoolGradPlan {
  PoolGeometry geometry;
  Shape output_shape;
};
StatusOr<AvgPoolGradPlan> PlanAvgPoolGrad(KernelContext& c, std::string_view device_type);

// LRN and LRNGrad (lrn_op.cc): the attrs, and the input (or the three
// inputs of the gradient: grads, input, output) checked as 4-D of one
// shape, viewed as `rows` rows of `depth`. On a GPU also cuDNN's limits,
// which TensorFlow's GPU kernel checks with these texts.
struct LrnPlan {
  int64_t rows = 0, depth = 0, radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;
};
StatusOr<LrnPlan> PlanLrn(KernelContext& c, std::initializer_list<const Tensor*> tensors,
                          std::string_view device_type);

// FusedBatchNorm, V2 and V3 (fused_batch_norm_op.cc): the attrs, x 4-D and
// the four vectors of x's channels, checked with TensorFlow's texts.
struct BatchNormPlan {
  int64_t channels = 0;
  bool nchw = false;
  bool training = true;
  float epsilon = 0.0001f;
  float exponential_avg_factor = 1.0f;
};
StatusOr<BatchNormPlan> PlanBatchNorm(KernelContext& c);
// FusedBatchNormGrad, V2 and V3: y_backprop and x of one 4-D shape, scale
// and the reserve spaces (mean, variance) of x's channels.
StatusOr<BatchNormPlan> PlanBatchNormGrad(KernelContext& c);

}  // namespace tfrun
