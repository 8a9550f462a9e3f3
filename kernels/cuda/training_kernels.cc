// The GPU kernels of training graphs: elementwise math and its gradients,
// comparisons, Select, reductions, the softmax family, Slice/Tile/Pack/
// GatherV2, max pooling (kernels/cuda/training.cu), convolutions (cuDNN)
// and the optimizers' updates. Shapes, checks and error texts come from
// core/runtime (kernel_shapes.h, nn_shapes.h, variable_updates.h), as the
// CPU kernels' do; each kernel here only lays out and launches, on its
// device's stream, in the order the executor calls them.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "core/runtime/kernel_shapes.h"
#include "core/runtime/nn_shapes.h"
#include "core/runtime/variable_updates.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/training.h"
#include "kernels/cuda/training_layouts.h"

namespace tfrun {
namespace {

// A node's element type (bool included), its context made current.
StatusOr<cuda::ElementType> Prepare(KernelContext& c, DType dtype) {
  const std::optional<cuda::ElementType> type = ElementTypeOf(dtype);
  if (!type) return RuntimeError(fmt::format("no GPU {} for {}", c.node.op, Name(dtype)));
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());
  return *type;
}

void* Stream(KernelContext& c) { return ContextOf(c).stream; }

int ElementBytes(DType d) { return static_cast<int>(Info(d).size); }

Status RankAtMost(KernelContext& c, size_t rank) {
  if (rank > static_cast<size_t>(cuda::kMaxRank)) {
    return RuntimeError(fmt::format("tfrun's GPU {} takes up to {} dimensions, not {}", c.node.op, cuda::kMaxRank,
                                    rank));
  }
  return Status::Ok();
}

Status MemsetZero(KernelContext& c, Tensor& t) {
  if (t.num_bytes() == 0) return Status::Ok();
  return LaunchResult(cudaMemsetAsync(t.raw(), 0, t.num_bytes(), ContextOf(c).stream), "cudaMemsetAsync");
}

Status DeviceCopy(KernelContext& c, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  return LaunchResult(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ContextOf(c).stream),
                      "cudaMemcpyAsync");
}

// ---- Elementwise ----

bool IsGradient(cuda::BinaryOp op) { return op >= cuda::BinaryOp::kReluGrad; }

template <cuda::BinaryOp Op>
Status BinaryKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& y = c.inputs[1];
  if (IsGradient(Op) && x.shape() != y.shape()) {  // the gradient ops take one shape
    return c.Fail(fmt::format("{}: inputs must be of the same shape: {} vs. {}", c.node.op,
                              ShapeDebugString(x.shape()), ShapeDebugString(y.shape())));
  }
  TFRUN_ASSIGN_OR_RETURN(const BinaryPlan plan, PlanBinary(c));
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan.output.size()));
  TFRUN_ASSIGN_OR_RETURN(const Elementwise e, PrepareElementwise(c, plan.output));
  return LaunchResult(cuda::Binary(e.type, Op, x.raw(), x.rank() == 0 && y.rank() != 0, y.raw(),
                                   y.rank() == 0 && x.rank() != 0, cuda::BroadcastOf(plan), c.output.num_elements(),
                                   c.output.raw(), e.ctx->stream),
                      "elementwise kernel launch");
}

template <cuda::CompareOp Op>
Status CompareKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& y = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, x.dtype()));
  TFRUN_ASSIGN_OR_RETURN(const BinaryPlan plan, PlanBinary(c));
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan.output.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  return LaunchResult(cuda::Compare(type, Op, x.raw(), x.rank() == 0 && y.rank() != 0, y.raw(),
                                    y.rank() == 0 && x.rank() != 0, cuda::BroadcastOf(plan), c.output.num_elements(),
                                    c.output.data<bool>(), Stream(c)),
                      "comparison kernel launch");
}

template <UnaryOp Op>
Status UnaryKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Elementwise e, PrepareElementwise(c, c.inputs[0].shape()));
  return LaunchResult(cuda::Unary(e.type, Op, c.inputs[0].raw(), c.output.num_elements(), c.output.raw(),
                                  e.ctx->stream, c.FloatAttr("alpha", 0.2f)),
                      "elementwise kernel launch");
}

// UnaryKernel for each op, indexed by UnaryOp.
template <size_t... I>
KernelFn UnaryKernelFor(UnaryOp op, std::index_sequence<I...>) {
  static constexpr KernelFn kKernels[] = {&UnaryKernel<static_cast<UnaryOp>(I)>...};
  return kKernels[static_cast<size_t>(op)];
}

template <int Value>
Status FillLikeKernel(KernelContext& c) {  // ZerosLike, OnesLike
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[0].shape()));
  return LaunchResult(cuda::Fill(type, Value, c.output.num_elements(), c.output.raw(), Stream(c)), "fill kernel launch");
}

// SelectV2(cond, t, e): the three broadcast together.
Status SelectV2Kernel(KernelContext& c) {
  const Tensor& cond = c.inputs[0];
  const Tensor& t = c.inputs[1];
  const Tensor& e = c.inputs[2];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  const std::optional<BroadcastPlan> plan = PlanBroadcast({&cond.shape(), &t.shape(), &e.shape()});
  if (!plan) {
    return c.Fail(fmt::format("condition {}, then {}, and else {} must be broadcastable",
                              ShapeDebugString(cond.shape()), ShapeDebugString(t.shape()),
                              ShapeDebugString(e.shape())));
  }
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan->output.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan->output));
  const cuda::Select3 layout = cuda::SelectV2Layout(*plan);
  return LaunchResult(cuda::Select(ElementBytes(c.node.dtype), cond.data<bool>(), t.raw(), e.raw(), layout,
                                   c.output.num_elements(), c.output.raw(), Stream(c)),
                      "select kernel launch");
}

// Select(cond, t, e): cond of t's shape, or a vector along its first
// dimension.
Status SelectKernel(KernelContext& c) {
  const Tensor& cond = c.inputs[0];
  const Tensor& t = c.inputs[1];
  const Tensor& e = c.inputs[2];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
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
  const int64_t n = t.num_elements();
  const cuda::Select3 layout = cuda::SelectLayout(rows, cond.num_elements(), n);
  if (n == 0) return Status::Ok();
  return LaunchResult(cuda::Select(ElementBytes(c.node.dtype), cond.data<bool>(), t.raw(), e.raw(), layout, n,
                                   c.output.raw(), Stream(c)),
                      "select kernel launch");
}

// ---- Reductions ----

// A reduction's identity over nothing, as the CPU kernel writes it.
double EmptyReduction(cuda::ReduceOp op, bool is_float) {
  switch (op) {
    case cuda::ReduceOp::kProd:
    case cuda::ReduceOp::kAll: return 1;
    case cuda::ReduceOp::kMax: return -std::numeric_limits<double>::infinity();
    case cuda::ReduceOp::kMin: return std::numeric_limits<double>::infinity();
    case cuda::ReduceOp::kMean: return is_float ? std::numeric_limits<double>::quiet_NaN() : 0;
    default: return 0;
  }
}

// Runs `op` over `layout`, or writes its identity when `reduced_count` is
// 0; `in` of `n_in` elements, the node's output already allocated.
Status LaunchReduction(KernelContext& c, cuda::ElementType type, cuda::ReduceOp op, const Tensor& in,
                       const cuda::ReduceLayout& layout) {
  const int64_t n_out = c.output.num_elements();
  if (in.num_elements() == 0 || layout.reduced_count == 0) {
    const bool is_float = type != cuda::ElementType::kInt32 && type != cuda::ElementType::kInt64 &&
                          type != cuda::ElementType::kBool;
    return LaunchResult(cuda::Fill(type, EmptyReduction(op, is_float), n_out, c.output.raw(), Stream(c)),
                        "fill kernel launch");
  }
  return LaunchResult(cuda::Reduce(type, op, in.raw(), layout, n_out, c.output.raw(), Stream(c)),
                      "reduction kernel launch");
}

template <cuda::ReduceOp Op>
Status ReduceKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const ReductionLayout merged, PlanReduction(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(merged.output));
  const std::vector<int64_t>& dims = merged.dims;
  if (input.num_elements() > 0 && (dims.empty() || (dims.size() == 1 && !merged.first_reduced))) {
    return DeviceCopy(c, c.output.raw(), input.raw(), input.num_bytes());  // nothing reduced
  }
  const std::optional<cuda::ReduceLayout> layout = cuda::ReductionLayoutOf(dims, merged.first_reduced);
  if (!layout) return RankAtMost(c, cuda::kMaxRank + 1);
  return LaunchReduction(c, type, Op, input, *layout);
}

// L2Loss: sum(t ** 2) / 2.
Status L2LossKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({}));
  return LaunchReduction(c, type, cuda::ReduceOp::kHalfSumOfSquares, input, cuda::WholeLayout(input.num_elements()));
}

// BiasAddGrad: [outer, channels, inner] summed over outer and inner.
Status BiasAddGradKernel(KernelContext& c) {
  const Tensor& grad = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const BiasGradPlan plan, PlanBiasAddGrad(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({plan.channels}));
  return LaunchReduction(c, type, cuda::ReduceOp::kSum, grad, cuda::BiasGradLayout(plan));
}

// ---- Strided copies ----

// `in` (of `in_shape`) read through `map`'s dims and moduli into `out`.
Status StridedCopy(KernelContext& c, const Tensor& in, cuda::IndexMap map, Tensor& out) {
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, static_cast<size_t>(map.rank)));
  return LaunchResult(cuda::StridedCopy(ElementBytes(in.dtype()), in.raw(), map, out.num_elements(), out.raw(),
                                        Stream(c)),
                      "copy kernel launch");
}

Status SliceKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const SlicePlan plan, PlanSlice(c));
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan.output.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  if (c.output.num_elements() == 0) return Status::Ok();
  return StridedCopy(c, input, cuda::SliceMap(plan, input.shape()), c.output);
}

Status StridedSliceKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const StridedSlicePlan plan,
                         PlanStridedSlice(c, input.shape(), c.inputs[1], c.inputs[2], c.inputs[3]));
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan.processing.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  if (c.output.num_elements() == 0) return Status::Ok();
  return StridedCopy(c, input, cuda::StridedSliceMap(plan, input.shape()), c.output);
}

// StridedSliceGrad(shape, begin, end, strides, dy): zeros of `shape` with
// dy where StridedSlice took its values.
Status StridedSliceGradKernel(KernelContext& c) {
  const Tensor& dy = c.inputs[4];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());
  TFRUN_ASSIGN_OR_RETURN(const StridedSliceGradPlan grad, PlanStridedSliceGrad(c));
  const Shape& shape = grad.shape;
  const StridedSlicePlan& plan = grad.slice;
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan.processing.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  if (c.output.num_elements() == 0) return Status::Ok();
  TFRUN_RETURN_IF_ERROR(
      LaunchResult(cudaMemsetAsync(c.output.raw(), 0, c.output.num_bytes(), ContextOf(c).stream),
                   "cudaMemsetAsync"));
  if (dy.num_elements() == 0) return Status::Ok();
  return LaunchResult(cuda::StridedScatter(ElementBytes(dy.dtype()), dy.raw(), cuda::StridedSliceMap(plan, shape),
                                           dy.num_elements(), c.output.raw(), Stream(c)),
                      "scatter kernel launch");
}

// Pad(input, paddings) on a GPU: a zeroed output with the input scattered
// into the slice the paddings leave (paddings in host memory, as
// TensorFlow's GPU kernel keeps them). PadV2's constant is not 0 in
// general: it has no GPU kernel here (coverage lists it).
Status PadKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const SlicePlan plan, PlanPad(c));
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan.output.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  if (c.output.num_elements() == 0) return Status::Ok();
  TFRUN_RETURN_IF_ERROR(
      LaunchResult(cudaMemsetAsync(c.output.raw(), 0, c.output.num_bytes(), ContextOf(c).stream), "cudaMemsetAsync"));
  if (input.num_elements() == 0) return Status::Ok();
  const SlicePlan slice{plan.begin, input.shape()};  // where the input lands in the output
  return LaunchResult(cuda::StridedScatter(ElementBytes(input.dtype()), input.raw(), cuda::SliceMap(slice, plan.output),
                                           input.num_elements(), c.output.raw(), Stream(c)),
                      "scatter kernel launch");
}

// Range on a GPU: start, limit and delta in host memory, the values
// start + i * delta computed on the device (TensorFlow's GPU RangeFunctor).
Status RangeKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const int64_t size, PlanRange(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({size}));
  return LaunchResult(cuda::Range(type, c.inputs[0].GetAsDouble(0), c.inputs[2].GetAsDouble(0), size,
                                  c.output.raw(), Stream(c)),
                      "range kernel launch");
}

// LogicalNot(x) is x ? false : true: the select kernel on two one-element
// bools set on the device.
Status LogicalNotKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  CudaContext& ctx = ContextOf(c);
  TFRUN_RETURN_IF_ERROR(ctx.Activate());
  TFRUN_ASSIGN_OR_RETURN(Tensor falses, c.Allocate(DType::kBool, {}));
  TFRUN_ASSIGN_OR_RETURN(Tensor trues, c.Allocate(DType::kBool, {}));
  TFRUN_RETURN_IF_ERROR(LaunchResult(cudaMemsetAsync(falses.raw(), 0, 1, ctx.stream), "cudaMemsetAsync"));
  TFRUN_RETURN_IF_ERROR(LaunchResult(cudaMemsetAsync(trues.raw(), 1, 1, ctx.stream), "cudaMemsetAsync"));
  const std::optional<BroadcastPlan> plan = PlanBroadcast({&x.shape(), &falses.shape(), &trues.shape()});
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan->output.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan->output));
  if (c.output.num_elements() == 0) return Status::Ok();
  const cuda::Select3 layout = cuda::SelectV2Layout(*plan);
  return LaunchResult(cuda::Select(1, x.data<bool>(), falses.raw(), trues.raw(), layout, c.output.num_elements(),
                                   c.output.raw(), Stream(c)),
                      "select kernel launch");
}

// Transpose: the output read through the input's strides in its order.
Status TransposeKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const TransposePlan plan, PlanTranspose(c));
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan.output.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  if (c.output.num_elements() == 0) return Status::Ok();
  return StridedCopy(c, input, cuda::BroadcastMap(plan.output, plan.in_strides), c.output);
}

// LogicalAnd(x, y) is x ? y : x, LogicalOr(x, y) x ? x : y: the select
// kernel on bools, broadcast as SelectV2 broadcasts.
template <bool kAnd>
Status LogicalBinaryKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& y = c.inputs[1];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());
  const Tensor& then_values = kAnd ? y : x;
  const Tensor& else_values = kAnd ? x : y;
  const std::optional<BroadcastPlan> plan = PlanBroadcast({&x.shape(), &then_values.shape(), &else_values.shape()});
  if (!plan) {
    return c.Fail(fmt::format("Incompatible shapes: {} vs. {}", ShapeDebugString(x.shape()),
                              ShapeDebugString(y.shape())));
  }
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, plan->output.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan->output));
  const cuda::Select3 layout = cuda::SelectV2Layout(*plan);
  return LaunchResult(cuda::Select(1, x.data<bool>(), then_values.raw(), else_values.raw(), layout,
                                   c.output.num_elements(), c.output.raw(), Stream(c)),
                      "select kernel launch");
}

// The output, of `shape`, as `input` (of `shape`'s rank) repeated along
// every dimension: Tile, and BroadcastTo of an input whose stretched
// dimensions are 1.
Status RepeatInto(KernelContext& c, const Tensor& input, const Shape& shape) {
  TFRUN_RETURN_IF_ERROR(RankAtMost(c, shape.size()));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  if (c.output.num_elements() == 0) return Status::Ok();
  return StridedCopy(c, input, cuda::TileMap(shape, input.shape()), c.output);
}

Status TileKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, TileShape(c));
  return RepeatInto(c, c.inputs[0], shape);
}

Status BroadcastToKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const BroadcastToPlan plan, PlanBroadcastTo(c));
  return RepeatInto(c, c.inputs[0].Reshaped(plan.input), plan.output);
}

// Pack: input i's run of each outer row goes to slot i of that row.
Status PackKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const PackPlan plan, PlanPack(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  if (plan.outer == 0 || c.output.num_elements() == 0) return Status::Ok();
  const size_t piece = c.inputs[0].num_bytes() / plan.outer;
  const size_t row = piece * c.inputs.size();
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    TFRUN_RETURN_IF_ERROR(LaunchResult(
        cudaMemcpy2DAsync(static_cast<char*>(c.output.raw()) + i * piece, row, c.inputs[i].raw(), piece, piece,
                          plan.outer, cudaMemcpyDeviceToDevice, ContextOf(c).stream),
        "cudaMemcpy2DAsync"));
  }
  return Status::Ok();
}

Status GatherKernel(KernelContext& c) {
  const Tensor& params = c.inputs[0];
  const Tensor& indices = c.inputs[1];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(const GatherPlan plan, PlanGather(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  if (c.output.num_elements() == 0) return Status::Ok();
  return LaunchResult(cuda::Gather(ElementBytes(params.dtype()), params.raw(), indices.raw(),
                                   indices.dtype() == DType::kInt64, plan.outer, plan.limit, plan.inner, plan.count,
                                   c.output.raw(), Stream(c)),
                      "gather kernel launch");
}

// ---- Softmax family ----

template <bool Log>
Status SoftmaxKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const RowsPlan plan, PlanSoftmax(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[0].shape()));
  return LaunchResult(cuda::Softmax(type, Log, c.inputs[0].raw(), plan.rows, plan.classes, c.output.raw(), Stream(c)),
                      "softmax kernel launch");
}

Status SoftmaxXentKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const BroadcastPlan plan, PlanSoftmaxXent(c));
  const int64_t rows = plan.output[0], classes = plan.output[1];
  TFRUN_ASSIGN_OR_RETURN(Tensor loss, c.Allocate(c.node.dtype, {rows}));
  TFRUN_ASSIGN_OR_RETURN(Tensor backprop, c.Allocate(c.node.dtype, plan.output));
  if (rows * classes == 0) {
    const double fill = classes == 0 ? std::numeric_limits<double>::quiet_NaN() : 0;
    TFRUN_RETURN_IF_ERROR(LaunchResult(cuda::Fill(type, fill, rows, loss.raw(), Stream(c)), "fill kernel launch"));
  } else {
    // An operand that broadcasts is made whole first (TensorFlow does too).
    Tensor whole[2];
    for (int k = 0; k < 2; ++k) {
      const Tensor& t = c.inputs[k];
      if (t.shape() == plan.output) {
        whole[k] = t;
        continue;
      }
      TFRUN_ASSIGN_OR_RETURN(whole[k], c.Allocate(c.node.dtype, plan.output));
      TFRUN_RETURN_IF_ERROR(StridedCopy(c, t, cuda::BroadcastMap(plan.output, plan.strides[k]), whole[k]));
    }
    TFRUN_RETURN_IF_ERROR(LaunchResult(cuda::SoftmaxXent(type, whole[0].raw(), whole[1].raw(), rows, classes,
                                                         loss.raw(), backprop.raw(), Stream(c)),
                                       "softmax cross entropy kernel launch"));
  }
  c.outputs = {std::move(loss), std::move(backprop)};
  return Status::Ok();
}

Status SparseSoftmaxXentKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const XentPlan plan, PlanSparseXent(c));
  TFRUN_ASSIGN_OR_RETURN(Tensor loss, c.Allocate(c.node.dtype, {plan.rows}));
  TFRUN_ASSIGN_OR_RETURN(Tensor backprop, c.Allocate(c.node.dtype, {plan.rows, plan.classes}));
  TFRUN_RETURN_IF_ERROR(LaunchResult(
      cuda::SparseXent(type, c.inputs[0].raw(), c.inputs[1].raw(), c.inputs[1].dtype() == DType::kInt64, plan.rows,
                       plan.classes, loss.raw(), backprop.raw(), Stream(c)),
      "sparse softmax cross entropy kernel launch"));
  c.outputs = {std::move(loss), std::move(backprop)};
  return Status::Ok();
}

template <bool Max>
Status ArgKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.inputs[0].dtype()));
  TFRUN_ASSIGN_OR_RETURN(const ArgPlan plan, PlanArg(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  return LaunchResult(cuda::ArgReduce(type, Max, c.inputs[0].raw(), plan.outer, plan.size, plan.inner,
                                      c.node.dtype == DType::kInt64, c.output.raw(), Stream(c)),
                      "arg reduction kernel launch");
}

Status InTopKKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());
  TFRUN_ASSIGN_OR_RETURN(const InTopKPlan plan, PlanInTopK(c));
  if (c.inputs[0].dtype() != DType::kFloat32) return RuntimeError("no GPU InTopKV2 for predictions of this type");
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({plan.batch}));
  return LaunchResult(cuda::InTopK(c.inputs[0].data<float>(), c.inputs[1].raw(), c.inputs[1].dtype() == DType::kInt64,
                                   plan.batch, plan.classes, plan.k, c.output.data<bool>(), Stream(c)),
                      "in-top-k kernel launch");
}

Status LeakyReluGradKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_RETURN_IF_ERROR(RequireSameShape(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[0].shape()));
  return LaunchResult(cuda::LeakyReluGrad(type, c.inputs[0].raw(), c.inputs[1].raw(), c.inputs[0].num_elements(),
                                          c.FloatAttr("alpha", 0.2f), c.output.raw(), Stream(c)),
                      "leaky relu gradient kernel launch");
}

// ---- Pooling ----

Status MaxPoolKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const PoolGeometry g, PlanPool(c, c.inputs[0].shape(), kGpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  return LaunchResult(cuda::MaxPool(type, c.inputs[0].raw(), cuda::PoolParamsOf(g), c.output.raw(), Stream(c)),
                      "max pooling kernel launch");
}

Status MaxPoolGradKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const PoolGeometry g, PlanMaxPoolGrad(c, kGpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[0].shape()));
  return LaunchResult(cuda::MaxPoolGrad(type, c.inputs[0].raw(), c.inputs[2].raw(), cuda::PoolParamsOf(g), c.output.raw(),
                                        Stream(c)),
                      "max pooling gradient kernel launch");
}

Status DepthwiseConvKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  int64_t multiplier = 1;
  TFRUN_ASSIGN_OR_RETURN(const ConvGeometry g,
                         PlanDepthwiseConv(c, c.inputs[0].shape(), c.inputs[1].shape(), &multiplier));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  return LaunchResult(cuda::DepthwiseConv(type, c.inputs[0].raw(), c.inputs[1].raw(), cuda::DepthwiseParamsOf(g, multiplier),
                                          c.output.raw(), Stream(c)),
                      "depthwise convolution kernel launch");
}

Status AvgPoolKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const PoolGeometry g, PlanPool(c, c.inputs[0].shape(), kGpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  return LaunchResult(cuda::AvgPool(type, c.inputs[0].raw(), cuda::PoolParamsOf(g), c.output.raw(), Stream(c)),
                      "average pooling kernel launch");
}

Status AvgPoolGradKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.node.dtype));
  TFRUN_ASSIGN_OR_RETURN(const AvgPoolGradPlan plan, PlanAvgPoolGrad(c, kGpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output_shape));
  return LaunchResult(cuda::AvgPoolGrad(type, c.inputs[1].raw(), cuda::PoolParamsOf(plan.geometry), c.output.raw(),
                                        Stream(c)),
                      "average pooling gradient kernel launch");
}

// ---- Local response normalization ----

cuda::LrnParams LrnParamsOf(const LrnPlan& plan) {
  cuda::LrnParams p;
  p.rows = plan.rows;
  p.depth = plan.depth;
  p.radius = plan.radius;
  p.bias = plan.bias;
  p.alpha = plan.alpha;
  p.beta = plan.beta;
  return p;
}

Status LrnKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(Prepare(c, c.node.dtype).status());
  TFRUN_ASSIGN_OR_RETURN(const LrnPlan plan, PlanLrn(c, {&c.inputs[0]}, kGpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[0].shape()));
  return LaunchResult(cuda::Lrn(c.inputs[0].data<float>(), LrnParamsOf(plan), c.output.data<float>(), Stream(c)),
                      "local response normalization kernel launch");
}

Status LrnGradKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(Prepare(c, c.node.dtype).status());
  TFRUN_ASSIGN_OR_RETURN(const LrnPlan plan, PlanLrn(c, {&c.inputs[0], &c.inputs[1], &c.inputs[2]}, kGpu));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(c.inputs[1].shape()));
  return LaunchResult(cuda::LrnGrad(c.inputs[0].data<float>(), c.inputs[1].data<float>(), c.inputs[2].data<float>(),
                                    LrnParamsOf(plan), c.output.data<float>(), Stream(c)),
                      "local response normalization gradient kernel launch");
}

// ---- Batch normalization ----

cuda::BatchNormParams BatchNormParamsOf(const BatchNormPlan& plan, const Shape& x) {
  cuda::BatchNormParams p;
  p.channels = plan.channels;
  p.count = plan.channels == 0 ? 0 : x[0] * x[1] * x[2] * x[3] / plan.channels;
  p.inner = plan.nchw ? x[2] * x[3] : 1;
  p.nchw = plan.nchw;
  p.training = plan.training;
  p.epsilon = plan.epsilon;
  p.exponential_avg_factor = plan.exponential_avg_factor;
  return p;
}

// FusedBatchNorm, V2, V3: y and the four statistics (V3: and an empty
// reserve_space_3), as the CPU kernel (kernels/cpu/nn_kernels.cc).
Status FusedBatchNormKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(Prepare(c, c.node.dtype).status());
  TFRUN_ASSIGN_OR_RETURN(const BatchNormPlan plan, PlanBatchNorm(c));
  const Tensor& x = c.inputs[0];
  std::vector<Tensor> outs;
  TFRUN_ASSIGN_OR_RETURN(Tensor y, c.Allocate(DType::kFloat32, x.shape()));
  outs.push_back(std::move(y));
  for (int i = 0; i < 4; ++i) {
    TFRUN_ASSIGN_OR_RETURN(Tensor t, c.Allocate(DType::kFloat32, {plan.channels}));
    outs.push_back(std::move(t));
  }
  if (c.node.op == "FusedBatchNormV3") {
    TFRUN_ASSIGN_OR_RETURN(Tensor reserve, c.Allocate(DType::kFloat32, {0}));
    outs.push_back(std::move(reserve));
  }
  // The running statistics are read only when they are folded in (or used,
  // for inference); a training step may pass empty ones.
  const bool reads_old = !plan.training || plan.exponential_avg_factor != 1.0f;
  TFRUN_RETURN_IF_ERROR(LaunchResult(
      cuda::BatchNorm(BatchNormParamsOf(plan, x.shape()), x.data<float>(), c.inputs[1].data<float>(),
                      c.inputs[2].data<float>(), reads_old ? c.inputs[3].data<float>() : nullptr,
                      reads_old ? c.inputs[4].data<float>() : nullptr, outs[0].data<float>(), outs[1].data<float>(),
                      outs[2].data<float>(), outs[3].data<float>(), outs[4].data<float>(), Stream(c)),
      "batch normalization kernel launch"));
  c.outputs = std::move(outs);
  return Status::Ok();
}

Status FusedBatchNormGradKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(Prepare(c, c.node.dtype).status());
  TFRUN_ASSIGN_OR_RETURN(const BatchNormPlan plan, PlanBatchNormGrad(c));
  const Tensor& x = c.inputs[1];
  std::vector<Tensor> outs;
  TFRUN_ASSIGN_OR_RETURN(Tensor dx, c.Allocate(DType::kFloat32, x.shape()));
  outs.push_back(std::move(dx));
  for (int i = 0; i < 2; ++i) {
    TFRUN_ASSIGN_OR_RETURN(Tensor t, c.Allocate(DType::kFloat32, {plan.channels}));
    outs.push_back(std::move(t));
  }
  for (int i = 0; i < 2; ++i) {
    TFRUN_ASSIGN_OR_RETURN(Tensor empty, c.Allocate(DType::kFloat32, {0}));
    outs.push_back(std::move(empty));
  }
  TFRUN_RETURN_IF_ERROR(LaunchResult(
      cuda::BatchNormGrad(BatchNormParamsOf(plan, x.shape()), c.inputs[0].data<float>(), x.data<float>(),
                          c.inputs[2].data<float>(), c.inputs[3].data<float>(), c.inputs[4].data<float>(),
                          outs[0].data<float>(), outs[1].data<float>(), outs[2].data<float>(), Stream(c)),
      "batch normalization gradient kernel launch"));
  c.outputs = std::move(outs);
  return Status::Ok();
}

// ---- Convolutions (cuDNN) ----

// cuDNN's 32-bit sizes; a geometry past them is refused.
StatusOr<cuda::ConvProblem> ProblemOf(KernelContext& c, const ConvGeometry& g, bool padded) {
  for (int64_t v : {g.batch, g.in_rows + g.pad_top + g.pad_bottom, g.in_cols + g.pad_left + g.pad_right, g.in_depth,
                    g.out_depth, g.filter_rows, g.filter_cols, g.out_rows, g.out_cols}) {
    if (v > std::numeric_limits<int>::max()) {
      return RuntimeError(fmt::format("{}: a dimension of {} exceeds cuDNN's 32-bit limit", c.node.op, v));
    }
  }
  cuda::ConvProblem p;
  p.batch = static_cast<int>(g.batch);
  p.in_rows = static_cast<int>(padded ? g.in_rows + g.pad_top + g.pad_bottom : g.in_rows);
  p.in_cols = static_cast<int>(padded ? g.in_cols + g.pad_left + g.pad_right : g.in_cols);
  p.in_depth = static_cast<int>(g.in_depth);
  p.out_depth = static_cast<int>(g.out_depth);
  p.filter_rows = static_cast<int>(g.filter_rows);
  p.filter_cols = static_cast<int>(g.filter_cols);
  p.pad_rows = padded ? 0 : static_cast<int>(g.pad_top);
  p.pad_cols = padded ? 0 : static_cast<int>(g.pad_left);
  p.stride_rows = static_cast<int>(g.stride_rows);
  p.stride_cols = static_cast<int>(g.stride_cols);
  p.dilation_rows = static_cast<int>(g.dilation_rows);
  p.dilation_cols = static_cast<int>(g.dilation_cols);
  p.out_rows = static_cast<int>(g.out_rows);
  p.out_cols = static_cast<int>(g.out_cols);
  return p;
}

// cuDNN pads both sides alike; SAME with an odd total pads one more after
// (TensorFlow's conv_ops_gpu pads the input explicitly then, as here).
bool NeedsExplicitPadding(const ConvGeometry& g) {
  return g.pad_top != g.pad_bottom || g.pad_left != g.pad_right;
}

// What one convolution pass needs besides its operands: cuDNN on this
// stream, a workspace from the device's memory (held until the kernel
// returns: later work on this stream is queued after it).
struct CudnnCall {
  const cuda::CudnnApi* api = nullptr;
  CudaContext* ctx = nullptr;
  std::unique_lock<std::mutex> lock;  // the handle is the context's (as MatMul's cuBLAS)
  std::vector<Tensor> scratch;

  Status Run(KernelContext& c, cuda::ConvPass pass, const cuda::ConvProblem& p, const void* a, const void* b,
             void* out) {
    return cuda::RunConvolution(*api, ctx->cudnn, pass, p, ctx->tf32, a, b, out,
                                [&](size_t bytes) -> StatusOr<void*> {
                                  // bool: one byte per element
                                  TFRUN_ASSIGN_OR_RETURN(Tensor t,
                                                         c.Allocate(DType::kBool, {static_cast<int64_t>(bytes)}));
                                  scratch.push_back(t);
                                  return t.raw();
                                });
  }
};

StatusOr<CudnnCall> StartCudnn(KernelContext& c) {
  CudnnCall call;
  call.ctx = &ContextOf(c);
  call.lock = std::unique_lock<std::mutex>(call.ctx->mu);
  TFRUN_RETURN_IF_ERROR(call.ctx->Activate());
  TFRUN_RETURN_IF_ERROR(call.ctx->Cudnn(&call.api));
  return call;
}

// HWIO (TensorFlow's filter) to KRSC (cuDNN's NHWC filter), or back, into
// `out` (of the target layout's shape).
Status TransposeFilter(KernelContext& c, const Tensor& filter, const ConvGeometry& g, bool to_krsc, Tensor& out) {
  const int64_t k = g.out_depth, rsc = g.filter_rows * g.filter_cols * g.in_depth;
  return StridedCopy(c, filter, to_krsc ? cuda::TransposeMap(rsc, k) : cuda::TransposeMap(k, rsc), out);
}

StatusOr<Tensor> KrscFilter(KernelContext& c, const Tensor& filter, const ConvGeometry& g) {
  TFRUN_ASSIGN_OR_RETURN(Tensor krsc, c.Allocate(DType::kFloat32, {g.out_depth, g.filter_rows, g.filter_cols,
                                                                   g.in_depth}));
  TFRUN_RETURN_IF_ERROR(TransposeFilter(c, filter, g, true, krsc));
  return krsc;
}

StatusOr<Tensor> PadInput(KernelContext& c, const Tensor& input, const ConvGeometry& g) {
  TFRUN_ASSIGN_OR_RETURN(Tensor padded, c.Allocate(input.dtype(), {g.batch, g.in_rows + g.pad_top + g.pad_bottom,
                                                                  g.in_cols + g.pad_left + g.pad_right, g.in_depth}));
  TFRUN_RETURN_IF_ERROR(LaunchResult(cuda::PadImages(ElementBytes(input.dtype()), input.raw(), g.batch, g.in_rows,
                                                     g.in_cols, g.in_depth, g.pad_top, g.pad_bottom, g.pad_left,
                                                     g.pad_right, padded.raw(), Stream(c)),
                                     "padding kernel launch"));
  return padded;
}

Status Conv2DKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& filter = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(const ConvGeometry g, PlanConv(c, input.shape(), filter.shape(), kGpu));
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(g.output_shape()));
  if (c.output.num_elements() == 0) return Status::Ok();
  if (input.num_elements() == 0 || filter.num_elements() == 0) return MemsetZero(c, c.output);
  const bool pad = NeedsExplicitPadding(g);
  TFRUN_ASSIGN_OR_RETURN(const cuda::ConvProblem p, ProblemOf(c, g, pad));
  TFRUN_ASSIGN_OR_RETURN(CudnnCall call, StartCudnn(c));
  TFRUN_ASSIGN_OR_RETURN(const Tensor krsc, KrscFilter(c, filter, g));
  Tensor x = input;
  if (pad) {
    TFRUN_ASSIGN_OR_RETURN(x, PadInput(c, input, g));
  }
  return call.Run(c, cuda::ConvPass::kForward, p, x.raw(), krsc.raw(), c.output.raw());
}

Status Conv2DBackpropInputKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape input_shape, ConvSizesInput(c, c.inputs[0], "input"));
  const Tensor& filter = c.inputs[1];
  const Tensor& out_backprop = c.inputs[2];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());
  TFRUN_ASSIGN_OR_RETURN(const ConvGradientPlan plan, PlanConvGradient(c, input_shape, filter.shape(), input_shape,
                                                                       filter, out_backprop, kGpu));
  if (c.output.num_elements() == 0) return Status::Ok();
  if (plan.zeros) return MemsetZero(c, c.output);
  const ConvGeometry& g = plan.geometry;
  const bool pad = NeedsExplicitPadding(g);
  TFRUN_ASSIGN_OR_RETURN(const cuda::ConvProblem p, ProblemOf(c, g, pad));
  TFRUN_ASSIGN_OR_RETURN(CudnnCall call, StartCudnn(c));
  TFRUN_ASSIGN_OR_RETURN(const Tensor krsc, KrscFilter(c, filter, g));
  if (!pad) return call.Run(c, cuda::ConvPass::kBackwardData, p, krsc.raw(), out_backprop.raw(), c.output.raw());
  // The gradient of the padded input, cropped to the input's.
  const Shape padded_shape{g.batch, p.in_rows, p.in_cols, g.in_depth};
  TFRUN_ASSIGN_OR_RETURN(Tensor padded, c.Allocate(DType::kFloat32, padded_shape));
  TFRUN_RETURN_IF_ERROR(call.Run(c, cuda::ConvPass::kBackwardData, p, krsc.raw(), out_backprop.raw(), padded.raw()));
  return StridedCopy(c, padded, cuda::CropMap(c.output.shape(), padded_shape, g.pad_top, g.pad_left), c.output);
}

Status Conv2DBackpropFilterKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const Shape filter_shape, ConvSizesInput(c, c.inputs[1], "filter"));
  const Tensor& out_backprop = c.inputs[2];
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());
  TFRUN_ASSIGN_OR_RETURN(const ConvGradientPlan plan, PlanConvGradient(c, input.shape(), filter_shape, filter_shape,
                                                                       input, out_backprop, kGpu));
  if (c.output.num_elements() == 0) return Status::Ok();
  if (plan.zeros) return MemsetZero(c, c.output);
  const ConvGeometry& g = plan.geometry;
  const bool pad = NeedsExplicitPadding(g);
  TFRUN_ASSIGN_OR_RETURN(const cuda::ConvProblem p, ProblemOf(c, g, pad));
  TFRUN_ASSIGN_OR_RETURN(CudnnCall call, StartCudnn(c));
  Tensor x = input;
  if (pad) {
    TFRUN_ASSIGN_OR_RETURN(x, PadInput(c, input, g));
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor krsc, c.Allocate(DType::kFloat32, {g.out_depth, g.filter_rows, g.filter_cols,
                                                                   g.in_depth}));
  TFRUN_RETURN_IF_ERROR(call.Run(c, cuda::ConvPass::kBackwardFilter, p, x.raw(), out_backprop.raw(), krsc.raw()));
  return TransposeFilter(c, krsc, g, false, c.output);
}

// ---- Optimizers and variable updates ----

cuda::UpdateOp UpdateOpOf(Optimizer op) {
  switch (op) {
    case Optimizer::kGradientDescent: return cuda::UpdateOp::kGradientDescent;
    case Optimizer::kMomentum: return cuda::UpdateOp::kMomentum;
    case Optimizer::kAdam: return cuda::UpdateOp::kAdam;
    case Optimizer::kAdagrad: return cuda::UpdateOp::kAdagrad;
    case Optimizer::kRMSProp: return cuda::UpdateOp::kRMSProp;
  }
  return cuda::UpdateOp::kGradientDescent;
}

template <Optimizer Op, bool Resource>
Status ApplyKernel(KernelContext& c) {
  const UpdateInputs spec = InputsOf(Op);
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.inputs[spec.grad].dtype()));
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, PrepareUpdate(c, spec, Resource));
  std::vector<void*> targets;
  for (Tensor& t : tensors) targets.push_back(t.raw());
  std::vector<const void*> scalars;
  for (int s : spec.scalars) scalars.push_back(c.inputs[s].raw());
  const bool flag = Op == Optimizer::kAdagrad ? c.BoolAttr("update_slots", true) : c.BoolAttr("use_nesterov");
  TFRUN_RETURN_IF_ERROR(LaunchResult(cuda::ApplyUpdate(type, UpdateOpOf(Op), targets.data(), scalars.data(),
                                                       c.inputs[spec.grad].raw(), flag, tensors[0].num_elements(),
                                                       Stream(c)),
                                     "optimizer kernel launch"));
  if constexpr (!Resource) c.output = tensors[0];  // the ref output: the variable
  return Status::Ok();
}

template <bool Add, bool Resource>
Status AssignUpdateKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.inputs[1].dtype()));
  TFRUN_ASSIGN_OR_RETURN(Tensor var, PrepareAssignUpdate(c, Resource));
  const Tensor& value = c.inputs[1];
  TFRUN_RETURN_IF_ERROR(LaunchResult(cuda::Binary(type, Add ? cuda::BinaryOp::kAdd : cuda::BinaryOp::kSub, var.raw(),
                                                  false, value.raw(), false, cuda::Broadcast(), var.num_elements(),
                                                  var.raw(), Stream(c)),
                                     "variable update kernel launch"));
  if constexpr (!Resource) c.output = var;
  return Status::Ok();
}

// ScatterAdd/Sub/Update and their Resource forms on a GPU (the checks are
// PrepareScatter's; an index out of range is skipped on the device).
template <cuda::ScatterOp Op, bool Resource>
Status ScatterKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const cuda::ElementType type, Prepare(c, c.inputs[2].dtype()));
  TFRUN_ASSIGN_OR_RETURN(Tensor var, PrepareScatter(c, Resource));
  const Tensor& indices = c.inputs[1];
  const Tensor& updates = c.inputs[2];
  const int64_t rows = var.shape()[0];
  const int64_t row_size = rows == 0 ? 0 : var.num_elements() / rows;
  TFRUN_RETURN_IF_ERROR(LaunchResult(cuda::Scatter(type, Op, var.raw(), rows, row_size, indices.raw(),
                                                   indices.dtype() == DType::kInt64, indices.num_elements(),
                                                   updates.raw(), updates.rank() == 0, Stream(c)),
                                     "scatter kernel launch"));
  if constexpr (!Resource) c.output = var;
  return Status::Ok();
}

// ResourceGather on a GPU: GatherV2 of the variable's rows (an index out of
// range gives zeros, as TensorFlow's GPU kernel does).
Status ResourceGatherKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(ContextOf(c).Activate());  // bytes only: any dtype
  TFRUN_ASSIGN_OR_RETURN(Tensor* variable, LookupResourceVariable(c, 0));
  if (variable->dtype() != c.node.dtype) {
    return c.Fail(fmt::format("Trying to read variable with wrong dtype. Expected {} got {}",
                              Info(c.node.dtype).tf_name, Info(variable->dtype()).tf_name));
  }
  if (c.IntAttr("batch_dims") != 0) return c.Fail("tfrun's ResourceGather supports batch_dims = 0 only");
  const Tensor params = *variable;
  if (params.rank() < 1) return c.Fail("params must be at least 1 dimensional");
  const Tensor& indices = c.inputs[1];
  Shape output = indices.shape();
  output.insert(output.end(), params.shape().begin() + 1, params.shape().end());
  int64_t inner = 1;
  for (int d = 1; d < params.rank(); ++d) inner *= params.shape()[d];
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(output));
  return LaunchResult(cuda::Gather(ElementBytes(params.dtype()), params.raw(), indices.raw(),
                                   indices.dtype() == DType::kInt64, 1, params.shape()[0], inner,
                                   indices.num_elements(), c.output.raw(), Stream(c)),
                      "gather kernel launch");
}

// Each family function's CUDA kernel (a switch: the compiler says when a
// function of the table has none).
KernelFn BinaryKernelFor(BinaryFn fn) {
  using B = cuda::BinaryOp;
  switch (fn) {
    case B::kAdd: return BinaryKernel<B::kAdd>;
    case B::kSub: return BinaryKernel<B::kSub>;
    case B::kMul: return BinaryKernel<B::kMul>;
    case B::kRealDiv: return BinaryKernel<B::kRealDiv>;
    case B::kFloorDiv: return BinaryKernel<B::kFloorDiv>;
    case B::kFloorMod: return BinaryKernel<B::kFloorMod>;
    case B::kMaximum: return BinaryKernel<B::kMaximum>;
    case B::kMinimum: return BinaryKernel<B::kMinimum>;
    case B::kSquaredDifference: return BinaryKernel<B::kSquaredDifference>;
    case B::kPow: return BinaryKernel<B::kPow>;
    case B::kDivNoNan: return BinaryKernel<B::kDivNoNan>;
    case B::kReluGrad: return BinaryKernel<B::kReluGrad>;
    case B::kSigmoidGrad: return BinaryKernel<B::kSigmoidGrad>;
    case B::kTanhGrad: return BinaryKernel<B::kTanhGrad>;
    case B::kRsqrtGrad: return BinaryKernel<B::kRsqrtGrad>;
    case B::kSqrtGrad: return BinaryKernel<B::kSqrtGrad>;
    case B::kReciprocalGrad: return BinaryKernel<B::kReciprocalGrad>;
    case B::kRelu6Grad: return BinaryKernel<B::kRelu6Grad>;
    case B::kEluGrad: return BinaryKernel<B::kEluGrad>;
  }
  return nullptr;
}

KernelFn CompareKernelFor(CompareFn fn) {
  using C = cuda::CompareOp;
  switch (fn) {
    case C::kLess: return CompareKernel<C::kLess>;
    case C::kLessEqual: return CompareKernel<C::kLessEqual>;
    case C::kGreater: return CompareKernel<C::kGreater>;
    case C::kGreaterEqual: return CompareKernel<C::kGreaterEqual>;
    case C::kEqual: return CompareKernel<C::kEqual>;
    case C::kNotEqual: return CompareKernel<C::kNotEqual>;
  }
  return nullptr;
}

KernelFn ReduceKernelFor(ReduceFn fn) {
  using R = cuda::ReduceOp;
  switch (fn) {
    case ReduceFn::kSum: return ReduceKernel<R::kSum>;
    case ReduceFn::kMean: return ReduceKernel<R::kMean>;
    case ReduceFn::kProd: return ReduceKernel<R::kProd>;
    case ReduceFn::kMax: return ReduceKernel<R::kMax>;
    case ReduceFn::kMin: return ReduceKernel<R::kMin>;
    case ReduceFn::kAll: return ReduceKernel<R::kAll>;
    case ReduceFn::kAny: return ReduceKernel<R::kAny>;
  }
  return nullptr;
}

}  // namespace

void RegisterCudaTrainingKernels(KernelRegistry* registry) {
  struct Binding {
    const char* op;
    DTypeSet dtypes;
    KernelFn fn;
  };
  // What the launchers take (training.h): half and bfloat16 compute in
  // float in the elementwise kernels; pooling, softmax, the updates and
  // cuDNN here run float32 (and float64 where cuDNN is not involved).
  const DTypeSet floats = kFloatTypes;
  const DTypeSet numbers = kNumericTypes;
  const DTypeSet f32_64{DType::kFloat32, DType::kFloat64};
  // The scatters: what the device atomics add (the resource forms have no output: any dtype).
  const DTypeSet scatter{DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
  const DTypeSet f32{DType::kFloat32};
  const DTypeSet boolean{DType::kBool};
  const DTypeSet any = kAllTypes;
  const Binding bindings[] = {
      {"SelectV2", any, SelectV2Kernel},
      {"Select", any, SelectKernel},
      {"ZerosLike", any, FillLikeKernel<0>},
      {"OnesLike", any, FillLikeKernel<1>},
      {"L2Loss", floats, L2LossKernel},
      {"BiasAddGrad", numbers, BiasAddGradKernel},
      {"Softmax", f32_64, SoftmaxKernel<false>},
      {"LogSoftmax", f32_64, SoftmaxKernel<true>},
      {"SoftmaxCrossEntropyWithLogits", f32_64, SoftmaxXentKernel},
      {"Slice", any, SliceKernel},
      {"Tile", any, TileKernel},
      {"BroadcastTo", any, BroadcastToKernel},
      {"Transpose", any, TransposeKernel},
      {"LogicalAnd", DTypeSet{DType::kBool}, LogicalBinaryKernel<true>},
      {"LogicalOr", DTypeSet{DType::kBool}, LogicalBinaryKernel<false>},
      {"LogicalNot", DTypeSet{DType::kBool}, LogicalNotKernel},
      {"Pad", any, PadKernel},
      {"Pack", any, PackKernel},
      {"GatherV2", any, GatherKernel},
      {"StridedSlice", any, StridedSliceKernel},
      {"StridedSliceGrad", any, StridedSliceGradKernel},
      {"Range", DTypeSet{DType::kFloat32, DType::kFloat64, DType::kInt64}, RangeKernel},
      {"SparseSoftmaxCrossEntropyWithLogits", f32_64, SparseSoftmaxXentKernel},
      {"ArgMax", DTypeSet{DType::kInt32, DType::kInt64}, ArgKernel<true>},
      {"ArgMin", DTypeSet{DType::kInt32, DType::kInt64}, ArgKernel<false>},
      {"InTopKV2", DTypeSet{DType::kBool}, InTopKKernel},
      {"LeakyReluGrad", f32_64, LeakyReluGradKernel},
      {"MaxPool", f32_64, MaxPoolKernel},
      {"MaxPoolGrad", f32_64, MaxPoolGradKernel},
      {"AvgPool", f32_64, AvgPoolKernel},
      {"AvgPoolGrad", f32_64, AvgPoolGradKernel},
      {"LRN", f32, LrnKernel},
      {"LRNGrad", f32, LrnGradKernel},
      {"FusedBatchNorm", f32, FusedBatchNormKernel},
      {"FusedBatchNormV2", f32, FusedBatchNormKernel},
      {"FusedBatchNormV3", f32, FusedBatchNormKernel},
      {"FusedBatchNormGrad", f32, FusedBatchNormGradKernel},
      {"FusedBatchNormGradV2", f32, FusedBatchNormGradKernel},
      {"FusedBatchNormGradV3", f32, FusedBatchNormGradKernel},
      {"Conv2D", f32, Conv2DKernel},
      {"DepthwiseConv2dNative", f32_64, DepthwiseConvKernel},
      {"Conv2DBackpropInput", f32, Conv2DBackpropInputKernel},
      {"Conv2DBackpropFilter", f32, Conv2DBackpropFilterKernel},
      {"ApplyGradientDescent", f32_64, ApplyKernel<Optimizer::kGradientDescent, false>},
      {"ResourceApplyGradientDescent", f32_64, ApplyKernel<Optimizer::kGradientDescent, true>},
      {"ApplyMomentum", f32_64, ApplyKernel<Optimizer::kMomentum, false>},
      {"ResourceApplyMomentum", f32_64, ApplyKernel<Optimizer::kMomentum, true>},
      {"ApplyAdam", f32_64, ApplyKernel<Optimizer::kAdam, false>},
      {"ResourceApplyAdam", f32_64, ApplyKernel<Optimizer::kAdam, true>},
      {"ApplyAdagrad", f32_64, ApplyKernel<Optimizer::kAdagrad, false>},
      {"ResourceApplyAdagrad", f32_64, ApplyKernel<Optimizer::kAdagrad, true>},
      {"ApplyRMSProp", f32_64, ApplyKernel<Optimizer::kRMSProp, false>},
      {"ResourceApplyRMSProp", f32_64, ApplyKernel<Optimizer::kRMSProp, true>},
      {"ScatterAdd", scatter, ScatterKernel<cuda::ScatterOp::kAdd, false>},
      {"ScatterSub", scatter, ScatterKernel<cuda::ScatterOp::kSub, false>},
      {"ScatterUpdate", scatter, ScatterKernel<cuda::ScatterOp::kUpdate, false>},
      {"ResourceScatterAdd", scatter, ScatterKernel<cuda::ScatterOp::kAdd, true>},
      {"ResourceScatterSub", scatter, ScatterKernel<cuda::ScatterOp::kSub, true>},
      {"ResourceScatterUpdate", scatter, ScatterKernel<cuda::ScatterOp::kUpdate, true>},
      {"ResourceGather", any, ResourceGatherKernel},
      {"AssignAdd", numbers, AssignUpdateKernel<true, false>},
      {"AssignSub", numbers, AssignUpdateKernel<false, false>},
      {"AssignAddVariableOp", numbers, AssignUpdateKernel<true, true>},
      {"AssignSubVariableOp", numbers, AssignUpdateKernel<false, true>},
  };
  for (const Binding& b : bindings) registry->Bind(b.op, kGpu, b.dtypes, b.fn);
  constexpr auto kUnaryOps = std::make_index_sequence<static_cast<size_t>(UnaryOp::kCount)>();
  for (const UnaryFamilyRow& row : kUnaryFamily) {
    registry->Bind(row.op, kGpu, row.types == UnaryTypes::kFloats ? floats : numbers,
                   UnaryKernelFor(row.fn, kUnaryOps));
  }
  for (const BinaryFamilyRow& row : kBinaryFamily) {
    registry->Bind(row.op, kGpu, row.types == UnaryTypes::kFloats ? floats : numbers, BinaryKernelFor(row.fn));
  }
  for (const CompareFamilyRow& row : kCompareFamily) registry->Bind(row.op, kGpu, boolean, CompareKernelFor(row.fn));
  for (const ReduceFamilyRow& row : kReduceFamily) {
    registry->Bind(row.op, kGpu, row.logical ? boolean : numbers, ReduceKernelFor(row.fn));
  }
}

}  // namespace tfrun
