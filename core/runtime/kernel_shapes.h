// Output shapes from the tensors a kernel is given, checked as
// TensorFlow's kernels check them and failing with their texts: a graph
// may leave dimensions unknown until values are fed, so no kernel trusts
// the node's static shape. Shared by every backend.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/runtime/kernel_registry.h"

namespace tfrun {

// MatMul(a, b) with the node's transposes.
StatusOr<Shape> MatMulShape(KernelContext& c);
// AddN: every input the same shape.
StatusOr<Shape> AddNShape(KernelContext& c);
// Any number of operands broadcast NumPy-style together (TensorFlow's
// BCast; SelectV2's three): nullopt when they do not.
struct BroadcastPlan {
  Shape output;
  std::vector<std::vector<int64_t>> strides;
  // Per operand: it has the output's shape (index i) or one element (0),
  // so the loop needs no coordinates.
  std::vector<bool> simple;
  std::vector<bool> single;  // one element
  bool all_simple = true;
};

std::optional<BroadcastPlan> PlanBroadcast(const std::vector<const Shape*>& shapes);

// Add, Sub, Mul broadcast NumPy-style (TensorFlow's BCast): dimensions
// aligned from the right, a 1 (or a missing one) stretches. `strides` give
// each operand's element step along each output dimension, 0 where it
// stretches; empty when neither operand needs them (both have the
// output's shape, or one is a scalar), the case kernels run fastest.
struct BinaryPlan {
  Shape output;
  std::vector<int64_t> x_strides;
  std::vector<int64_t> y_strides;
  bool broadcasts() const { return !x_strides.empty(); }
};
StatusOr<BinaryPlan> PlanBinary(KernelContext& c);
// BiasAdd(value, bias): bias as long as value's last dimension.
StatusOr<Shape> BiasAddShape(KernelContext& c);

// A tensor seen as [outer, axis, inner] around one axis: Split and
// ConcatV2 move contiguous runs of axis * inner elements.
struct AxisLayout {
  int axis = 0;
  int64_t outer = 1;
  int64_t inner = 1;
};

// Split(split_dim, value) and SplitV(value, size_splits, split_dim): the
// layout of value, its shape and each output's size along the axis
// (SplitV's -1 takes the rest); PlanSplit reads either op.
struct SplitPlan {
  AxisLayout layout;
  Shape input;
  std::vector<int64_t> sizes;
  Shape OutputShape(size_t i) const {
    Shape shape = input;
    shape[layout.axis] = sizes[i];
    return shape;
  }
};
StatusOr<SplitPlan> PlanSplit(KernelContext& c);

// BroadcastTo(input, shape): the output's shape, and the input's shape
// left-padded with 1s to its rank (what Tile's copy then repeats).
struct BroadcastToPlan {
  Shape input;
  Shape output;
};
StatusOr<BroadcastToPlan> PlanBroadcastTo(KernelContext& c);

// ConcatV2(values..., axis): the layout of the output and its shape.
struct ConcatPlan {
  AxisLayout layout;
  Shape output;
};
StatusOr<ConcatPlan> PlanConcat(KernelContext& c);

// Sum, Mean, Prod, Max, Min, All, Any (input, axes): TensorFlow's
// ReductionHelper: the input seen with adjacent dimensions of
// the same kind (reduced or kept) merged and dimensions of size 1 dropped.
struct ReductionLayout {
  Shape output;                 // with keep_dims applied
  std::vector<int64_t> dims;    // merged dimensions
  bool first_reduced = false;   // whether dims[0] is reduced
};

StatusOr<ReductionLayout> PlanReduction(KernelContext& c);

// Softmax and LogSoftmax: logits of rank >= 1, rows of the last dimension.
struct RowsPlan {
  int64_t rows = 0;
  int64_t classes = 0;
};
StatusOr<RowsPlan> PlanSoftmax(KernelContext& c);
// SoftmaxCrossEntropyWithLogits(features, labels): the two broadcast to
// one [rows, classes] shape.
StatusOr<BroadcastPlan> PlanSoftmaxXent(KernelContext& c);

// BiasAddGrad(out_backprop): [outer, channels, inner] around the channel
// dimension (the last for NHWC, the second for NCHW).
struct BiasGradPlan {
  int64_t outer = 1, channels = 0, inner = 1;
};
StatusOr<BiasGradPlan> PlanBiasAddGrad(KernelContext& c);

// Slice(input, begin, size): the box's corner and shape.
struct SlicePlan {
  std::vector<int64_t> begin;
  Shape output;
};
StatusOr<SlicePlan> PlanSlice(KernelContext& c);
// Pad(input, paddings) and PadV2(..., constant_values) (pad_op.cc): the
// input lands at `begin` (each dimension's padding before) in an output of
// shape `output`; TensorFlow's checks and texts.
StatusOr<SlicePlan> PlanPad(KernelContext& c);
// StridedSlice(input, begin, end, strides) and StridedSliceGrad's
// indexing (util/strided_slice_op.cc ValidateStridedSliceOp, every mask):
// per input dimension its first index, step and count (`processing`, one
// entry a dimension), and the final shape (shrunk dimensions dropped, new
// axes of 1 added).
struct StridedSlicePlan {
  std::vector<int64_t> begin, strides;
  Shape processing;
  Shape output;
};
StatusOr<StridedSlicePlan> PlanStridedSlice(KernelContext& c, const Shape& input, const Tensor& begin,
                                            const Tensor& end, const Tensor& strides);
// StridedSliceGrad(shape, begin, end, strides, dy): the output's shape and
// the slice of it dy fills, dy's shape checked against the slice.
struct StridedSliceGradPlan {
  Shape shape;
  StridedSlicePlan slice;
};
StatusOr<StridedSliceGradPlan> PlanStridedSliceGrad(KernelContext& c);
// Tile(input, multiples).
StatusOr<Shape> TileShape(KernelContext& c);

// Transpose(x, perm) (transpose_op.cc): the output's shape (dimension i is
// the input's perm[i]) and, per output dimension, the input's stride
// along it; TensorFlow's texts for a bad perm.
struct TransposePlan {
  Shape output;
  std::vector<int64_t> in_strides;
};
StatusOr<TransposePlan> PlanTranspose(KernelContext& c);
// Pack(values...): joined along a new axis, `outer` rows before it.
struct PackPlan {
  Shape output;
  int64_t outer = 1;
};
StatusOr<PackPlan> PlanPack(KernelContext& c);
// GatherV2(params, indices, axis), batch_dims 0: params as [outer, limit,
// inner], `count` indices. The indices' values are not checked here (they
// may be in device memory).
struct GatherPlan {
  Shape output;
  int64_t outer = 1, limit = 0, inner = 1, count = 0;
};
StatusOr<GatherPlan> PlanGather(KernelContext& c);

// ArgMax/ArgMin(input, dimension): the input as [outer, size, inner]
// around the dimension, checked as argmax_op.cc checks it.
struct ArgPlan {
  Shape output;
  int64_t outer = 1, size = 0, inner = 1;
};
StatusOr<ArgPlan> PlanArg(KernelContext& c);
// SparseSoftmaxCrossEntropyWithLogits(logits, labels): [rows, classes]
// logits and `rows` labels, their shapes checked (sparse_xent_op.cc). The
// labels' values are each backend's to check: they may be in device memory.
struct XentPlan {
  int64_t rows = 0, classes = 0;
};
StatusOr<XentPlan> PlanSparseXent(KernelContext& c);
// InTopKV2(predictions, targets, k): shapes checked, k read (host memory).
struct InTopKPlan {
  int64_t batch = 0, classes = 0, k = 0;
};
StatusOr<InTopKPlan> PlanInTopK(KernelContext& c);

// Range(start, limit, delta) (sequence_ops.cc): the inputs checked
// (scalars of the node's dtype, delta not 0, limit on delta's side) and
// TensorFlow 2.21's size (an integer one from the span in unsigned
// arithmetic, so a span wider than the type is counted right).
StatusOr<int64_t> PlanRange(KernelContext& c);

// A gradient op's two inputs (ReluGrad, LeakyReluGrad, ...), which never
// broadcast: the same shape, or the op's error.
Status RequireSameShape(KernelContext& c);

}  // namespace tfrun
