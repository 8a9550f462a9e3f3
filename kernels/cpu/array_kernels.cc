// Ops that move or describe elements without arithmetic (array_ops.cc's
// kernels): Pack, Unpack, Slice, Tile, GatherV2, and
// the shape arithmetic gradients use (ShapeN, Size, Rank, Range,
// BroadcastGradientArgs, ConcatOffset). They copy bytes, so one kernel
// serves every dtype; their checks and texts are TensorFlow's.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/runtime/kernel_shapes.h"
#include "kernels/cpu/cpu_eigen.h"

namespace tfrun {
namespace cpu {
namespace {

size_t ElementSize(const Tensor& t) { return Info(t.dtype()).size; }

// Pack (tf.stack): N inputs of one shape joined along a new axis.
Status PackKernel(KernelContext& c) {
  const Tensor& first = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const PackPlan plan, PlanPack(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  const int64_t outer = plan.outer;
  const size_t piece = outer == 0 ? 0 : first.num_bytes() / outer;  // one input's run per outer row
  char* out = static_cast<char*>(c.output.raw());
  for (int64_t r = 0; r < outer && piece > 0; ++r) {
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::memcpy(out, static_cast<const char*>(c.inputs[i].raw()) + r * piece, piece);
      out += piece;
    }
  }
  return Status::Ok();
}

// Unpack (tf.unstack): the inverse of Pack.
Status UnpackKernel(KernelContext& c) {
  const Tensor& value = c.inputs[0];
  const int rank = value.rank();
  int64_t axis = c.IntAttr("axis");
  if (axis < -rank || axis >= rank) {
    return c.Fail(fmt::format("axis = {} not in [{}, {})", axis, -rank, rank));
  }
  if (axis < 0) axis += rank;
  const int64_t num = value.shape()[axis];
  if (num != c.node.num_outputs) {
    return c.Fail(fmt::format("Input shape axis {} must equal {}, got shape {}", axis, c.node.num_outputs,
                              ShapeDebugString(value.shape())));
  }
  Shape shape = value.shape();
  shape.erase(shape.begin() + axis);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= value.shape()[d];
  const size_t piece = num == 0 || outer == 0 ? 0 : value.num_bytes() / outer / num;
  for (int64_t i = 0; i < num; ++i) {
    TFRUN_ASSIGN_OR_RETURN(Tensor out, c.Allocate(value.dtype(), shape));
    for (int64_t r = 0; r < outer && piece > 0; ++r) {
      std::memcpy(static_cast<char*>(out.raw()) + r * piece,
                  static_cast<const char*>(value.raw()) + (r * num + i) * piece, piece);
    }
    c.outputs.push_back(std::move(out));
  }
  return Status::Ok();
}

// Copies the box of `input` starting at `begin` with the output's shape:
// whole innermost runs at a time.
void CopyBox(const Tensor& input, const std::vector<int64_t>& begin, Tensor& output) {
  const size_t element = ElementSize(input);
  const Shape& in_shape = input.shape();
  const Shape& out_shape = output.shape();
  const int rank = input.rank();
  if (output.num_elements() == 0) return;
  if (rank == 0) {
    std::memcpy(output.raw(), input.raw(), element);
    return;
  }
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * in_shape[d];
  const int64_t run = out_shape[rank - 1];
  const int64_t rows = output.num_elements() / run;
  std::vector<int64_t> coord(rank, 0);
  const char* in = static_cast<const char*>(input.raw());
  char* out = static_cast<char*>(output.raw());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += (begin[d] + coord[d]) * in_strides[d];
    std::memcpy(out + r * run * element, in + offset * element, run * element);
    for (int d = rank - 2; d >= 0; --d) {
      if (++coord[d] < out_shape[d]) break;
      coord[d] = 0;
    }
  }
}

Status SliceKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const SlicePlan plan, PlanSlice(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  const std::vector<int64_t>& begin = plan.begin;
  CopyBox(input, begin, c.output);
  return Status::Ok();
}

// Visits every index of `plan.processing` in row-major order with the
// offset of the input element it takes (begin + k * stride per dimension).
template <typename Fn>
void ForEachStridedIndex(const StridedSlicePlan& plan, const Shape& input, Fn&& fn) {
  const int rank = static_cast<int>(input.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * input[d];
  int64_t n = 1;
  for (int64_t s : plan.processing) n *= s;
  if (n == 0) return;
  std::vector<int64_t> coord(rank, 0);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += plan.begin[d] * in_strides[d];
  for (int64_t i = 0; i < n; ++i) {
    fn(i, offset);
    for (int d = rank - 1; d >= 0; --d) {
      offset += plan.strides[d] * in_strides[d];
      if (++coord[d] < plan.processing[d]) break;
      offset -= plan.strides[d] * in_strides[d] * coord[d];
      coord[d] = 0;
    }
  }
}

Status StridedSliceKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const StridedSlicePlan plan,
                         PlanStridedSlice(c, input.shape(), c.inputs[1], c.inputs[2], c.inputs[3]));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  const size_t element = ElementSize(input);
  const char* in = static_cast<const char*>(input.raw());
  char* out = static_cast<char*>(c.output.raw());
  ForEachStridedIndex(plan, input.shape(), [&](int64_t i, int64_t from) {
    std::memcpy(out + i * element, in + from * element, element);
  });
  return Status::Ok();
}

// StridedSliceGrad(shape, begin, end, strides, dy): zeros of `shape` with
// dy where StridedSlice took its values.
Status StridedSliceGradKernel(KernelContext& c) {
  const Tensor& dy = c.inputs[4];
  TFRUN_ASSIGN_OR_RETURN(const StridedSliceGradPlan grad, PlanStridedSliceGrad(c));
  const Shape& shape = grad.shape;
  const StridedSlicePlan& plan = grad.slice;
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  const size_t element = ElementSize(dy);
  char* out = static_cast<char*>(c.output.raw());
  std::memset(out, 0, c.output.num_elements() * element);
  const char* in = static_cast<const char*>(dy.raw());
  ForEachStridedIndex(plan, shape, [&](int64_t i, int64_t to) { std::memcpy(out + to * element, in + i * element, element); });
  return Status::Ok();
}

// Transpose(x, perm) (transpose_op.cc): output dimension i is input
// dimension perm[i]; elements moved as bytes, any dtype but strings.
Status TransposeKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const TransposePlan plan, PlanTranspose(c));
  const Shape& shape = plan.output;
  const std::vector<int64_t>& stride = plan.in_strides;  // output index -> input offset
  const int dims = x.rank();
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  const int64_t n = x.num_elements();
  if (n == 0) return Status::Ok();
  const size_t element = Info(x.dtype()).size;
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(c.output.raw());
  std::vector<int64_t> at(dims, 0);
  int64_t from = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * element, src + from * element, element);
    for (int d = dims - 1; d >= 0; --d) {  // the next output index, odometer style
      from += stride[d];
      if (++at[d] < shape[d]) break;
      from -= stride[d] * shape[d];
      at[d] = 0;
    }
  }
  return Status::Ok();
}

// Pad(input, paddings) and PadV2(input, paddings, constant_values)
// (pad_op.cc): each dimension widened by paddings[d] = [before, after],
// the new elements 0 (or the constant); the input's rows copied as bytes.
Status PadKernel(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const SlicePlan plan, PlanPad(c));
  const Shape& shape = plan.output;
  const std::vector<int64_t>& before = plan.begin;
  const int dims = x.rank();
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  const size_t element = Info(x.dtype()).size;
  char* out = static_cast<char*>(c.output.raw());
  const int64_t total = c.output.num_elements();
  if (c.inputs.size() > 2) {
    for (int64_t i = 0; i < total; ++i) std::memcpy(out + i * element, c.inputs[2].raw(), element);
  } else {
    std::memset(out, 0, c.output.num_bytes());
  }
  if (x.num_elements() == 0) return Status::Ok();
  if (dims == 0) {
    std::memcpy(out, x.raw(), element);
    return Status::Ok();
  }
  // Each input row lands at the output offset of its index plus `before`,
  // walked odometer style over the dimensions before it. A row is the
  // last dimension and every unpadded one before it (an image's padded
  // rows and columns: whole rows of pixels), one copy each.
  int last = dims - 1;  // the row's first dimension
  int64_t inner = 1;    // elements of the unpadded dimensions after it
  while (last > 0 && shape[last] == x.shape()[last]) {
    inner *= x.shape()[last];
    --last;
  }
  std::vector<int64_t> out_stride(dims, 1);
  for (int d = dims - 2; d >= 0; --d) out_stride[d] = out_stride[d + 1] * shape[d + 1];
  const int64_t row = x.shape()[last] * inner;
  const int64_t rows = x.num_elements() / row;
  const char* in = static_cast<const char*>(x.raw());
  std::vector<int64_t> at(dims, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = before[last] * inner;
    for (int d = 0; d < last; ++d) offset += (at[d] + before[d]) * out_stride[d];
    std::memcpy(out + offset * element, in + r * row * element, row * element);
    for (int d = last - 1; d >= 0; --d) {
      if (++at[d] < x.shape()[d]) break;
      at[d] = 0;
    }
  }
  return Status::Ok();
}

// The output (of `shape`, its rank the input's) as the input repeated
// along every dimension: Tile, and BroadcastTo of an input whose stretched
// dimensions are 1.
void RepeatInto(const Tensor& input, const Shape& shape, Tensor* output);

Status TileKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, TileShape(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  RepeatInto(c.inputs[0], shape, &c.output);
  return Status::Ok();
}

Status BroadcastToKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const BroadcastToPlan plan, PlanBroadcastTo(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  RepeatInto(c.inputs[0].Reshaped(plan.input), plan.output, &c.output);
  return Status::Ok();
}

void RepeatInto(const Tensor& input, const Shape& shape, Tensor* output) {
  const int rank = input.rank();
  const int64_t n = output->num_elements();
  if (n == 0) return;
  const size_t element = ElementSize(input);
  if (rank == 0) {
    std::memcpy(output->raw(), input.raw(), element);
    return;
  }
  // Each output row of the last dimension is the input's row repeated.
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * input.shape()[d];
  const int64_t in_run = input.shape()[rank - 1];
  const int64_t out_run = shape[rank - 1];
  const int64_t rows = n / out_run;
  std::vector<int64_t> coord(rank, 0);
  const char* in = static_cast<const char*>(input.raw());
  char* out = static_cast<char*>(output->raw());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int d = 0; d < rank - 1; ++d) offset += (coord[d] % input.shape()[d]) * in_strides[d];
    char* dst = out + r * out_run * element;
    for (int64_t k = 0; k < out_run; k += in_run) std::memcpy(dst + k * element, in + offset * element, in_run * element);
    for (int d = rank - 2; d >= 0; --d) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
}

// The output of gathering `indices` from `params` as `plan` says, each
// index checked first (nothing is written when one is out of range).
Status Gather(KernelContext& c, const Tensor& params, const Tensor& indices, const GatherPlan& plan) {
  const int64_t limit = plan.limit, outer = plan.outer, inner = plan.inner;
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    const int64_t v = IntAt(indices, i);
    if (v < 0 || v >= limit) {
      return c.Fail(fmt::format("indices[{}] = {} is not in [0, {})", i, v, limit));
    }
  }
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  const size_t run = inner * ElementSize(params);
  const char* in = static_cast<const char*>(params.raw());
  char* out = static_cast<char*>(c.output.raw());
  const int64_t count = indices.num_elements();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(out + (o * count + i) * run, in + (o * limit + IntAt(indices, i)) * run, run);
    }
  }
  return Status::Ok();
}

// GatherV2(params, indices, axis) with batch_dims 0.
Status GatherKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const GatherPlan plan, PlanGather(c));
  return Gather(c, c.inputs[0], c.inputs[1], plan);
}

// ResourceGather(resource, indices): the variable's rows (axis 0), batch_dims
// 0, as an embedding lookup on a resource variable reads them.
Status ResourceGatherKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(Tensor* variable, LookupResourceVariable(c, 0));
  if (variable->dtype() != c.node.dtype) {
    return c.Fail(fmt::format("Trying to read variable with wrong dtype. Expected {} got {}",
                              Info(c.node.dtype).tf_name, Info(variable->dtype()).tf_name));
  }
  if (c.IntAttr("batch_dims") != 0) return c.Fail("tfrun's ResourceGather supports batch_dims = 0 only");
  const Tensor params = *variable;  // shares the buffer for the copy below
  if (params.rank() < 1) return c.Fail("params must be at least 1 dimensional");
  const Tensor& indices = c.inputs[1];
  GatherPlan plan;
  plan.output = indices.shape();
  plan.output.insert(plan.output.end(), params.shape().begin() + 1, params.shape().end());
  plan.limit = params.shape()[0];
  plan.count = indices.num_elements();
  for (int d = 1; d < params.rank(); ++d) plan.inner *= params.shape()[d];
  return Gather(c, params, indices, plan);
}

// An integer vector output (int32 or int64 by `dtype`) of `values`.
StatusOr<Tensor> IntVector(KernelContext& c, DType dtype, const std::vector<int64_t>& values) {
  TFRUN_ASSIGN_OR_RETURN(Tensor t, c.Allocate(dtype, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt64) {
      t.data<int64_t>()[i] = values[i];
    } else {
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    }
  }
  return t;
}

Status ShapeNKernel(KernelContext& c) {
  for (const Tensor& in : c.inputs) {
    TFRUN_ASSIGN_OR_RETURN(Tensor shape, IntVector(c, c.node.dtype, in.shape()));
    c.outputs.push_back(std::move(shape));
  }
  return Status::Ok();
}

Status SizeKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({}));
  if (c.node.dtype == DType::kInt64) {
    c.output.data<int64_t>()[0] = c.inputs[0].num_elements();
  } else {
    c.output.data<int32_t>()[0] = static_cast<int32_t>(c.inputs[0].num_elements());
  }
  return Status::Ok();
}

Status RankKernel(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({}));
  c.output.data<int32_t>()[0] = c.inputs[0].rank();
  return Status::Ok();
}

// Range(start, limit, delta) of int32, int64, float or double, as
// sequence_ops.cc: its size and checks are PlanRange's; the values
// integers start + i * delta wrapping as TensorFlow's running sum does,
// floats that running sum itself.
template <typename T>
void RangeValues(KernelContext& c, int64_t size) {
  const T start = c.inputs[0].data<T>()[0], delta = c.inputs[2].data<T>()[0];
  T* out = c.output.data<T>();
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (int64_t i = 0; i < size; ++i) {
      out[i] = static_cast<T>(static_cast<U>(static_cast<U>(start) + static_cast<U>(i) * static_cast<U>(delta)));
    }
  } else {
    T value = start;
    for (int64_t i = 0; i < size; ++i) {
      out[i] = value;
      value += delta;
    }
  }
}

Status RangeKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const int64_t size, PlanRange(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({size}));
  return ForDType<IsNumber>(c.node.dtype, [&](auto tag) -> Status {
    RangeValues<typename decltype(tag)::type>(c, size);
    return Status::Ok();
  });
}

// BroadcastGradientArgs(s0, s1) -> (r0, r1): the output dimensions each
// operand was stretched along, for the gradient's reduce_sum (bcast.h:
// none when the shapes are equal; else every dimension where the operand
// is 1 or missing, also where the other one is 1 too, as TensorFlow 2.21
// gives [0] and [0] for [1, 3] and [3]).
Status BroadcastGradientArgsKernel(KernelContext& c) {
  const std::vector<int64_t> x = IntsOf(c.inputs[0]), y = IntsOf(c.inputs[1]);
  const size_t rank = std::max(x.size(), y.size());
  std::vector<int64_t> r0, r1;
  for (size_t k = 0; k < rank && x != y; ++k) {
    const int64_t dx = k + x.size() >= rank ? x[k + x.size() - rank] : 1;
    const int64_t dy = k + y.size() >= rank ? y[k + y.size() - rank] : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      return c.Fail(fmt::format("Incompatible shapes: [{}] vs. [{}]", fmt::join(x, ","), fmt::join(y, ",")));
    }
    if (dx == 1) r0.push_back(static_cast<int64_t>(k));
    if (dy == 1) r1.push_back(static_cast<int64_t>(k));
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor t0, IntVector(c, c.node.dtype, r0));
  TFRUN_ASSIGN_OR_RETURN(Tensor t1, IntVector(c, c.node.dtype, r1));
  c.outputs = {std::move(t0), std::move(t1)};
  return Status::Ok();
}

// ConcatOffset(concat_dim, shapes...): where each input starts in the
// concatenation (ConcatV2's gradient slices it back).
Status ConcatOffsetKernel(KernelContext& c) {
  const Tensor& first = c.inputs[1];
  const int64_t rank = first.num_elements();
  if (c.inputs[0].num_elements() != 1) return c.Fail("Concat dim tensor should be a scalar integer");
  int64_t axis = IntAt(c.inputs[0], 0);
  if (axis < -rank || axis >= rank) {
    return c.Fail(fmt::format("Concat dim is out of range: {} vs. {}", axis, rank));
  }
  if (axis < 0) axis += rank;
  const std::vector<int64_t> base = IntsOf(first);
  int64_t offset = 0;
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    const std::vector<int64_t> dims = IntsOf(c.inputs[i]);
    if (static_cast<int64_t>(dims.size()) != rank) {
      return c.Fail(fmt::format("input {} should contain {} elements, but got {}", i - 1, rank, dims.size()));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && dims[d] != base[d]) {
        return c.Fail(fmt::format("All dimensions except {} must match. Input {} has shape [{}] and doesn't match "
                                  "input 0 with shape [{}].",
                                  axis, i - 1, fmt::join(dims, " "), fmt::join(base, " ")));
      }
    }
    std::vector<int64_t> out(rank, 0);
    out[axis] = offset;
    offset += dims[axis];
    TFRUN_ASSIGN_OR_RETURN(Tensor t, IntVector(c, c.inputs[i].dtype(), out));
    c.outputs.push_back(std::move(t));
  }
  return Status::Ok();
}

}  // namespace

void RegisterArrayKernels(KernelRegistry* registry) {
  const DTypeSet ints{DType::kInt32, DType::kInt64};
  registry->Bind("Pack", kCpu, kMovedTypes, PackKernel);
  registry->Bind("Unpack", kCpu, kMovedTypes, UnpackKernel);
  registry->Bind("Slice", kCpu, kMovedTypes, SliceKernel);
  registry->Bind("Tile", kCpu, kMovedTypes, TileKernel);
  registry->Bind("BroadcastTo", kCpu, kMovedTypes, BroadcastToKernel);
  registry->Bind("Transpose", kCpu, kMovedTypes, TransposeKernel);
  registry->Bind("Pad", kCpu, kMovedTypes, PadKernel);
  registry->Bind("PadV2", kCpu, kMovedTypes, PadKernel);
  registry->Bind("StridedSlice", kCpu, kMovedTypes, StridedSliceKernel);
  registry->Bind("StridedSliceGrad", kCpu, kAllTypes, StridedSliceGradKernel);
  registry->Bind("GatherV2", kCpu, kMovedTypes, GatherKernel);
  registry->Bind("ResourceGather", kCpu, kAllTypes, ResourceGatherKernel);
  registry->Bind("ShapeN", kCpu, ints, ShapeNKernel);
  registry->Bind("Size", kCpu, ints, SizeKernel);
  registry->Bind("Rank", kCpu, DTypeSet{DType::kInt32}, RankKernel);
  registry->Bind("Range", kCpu, kFloatTypes | ints, RangeKernel);
  registry->Bind("BroadcastGradientArgs", kCpu, ints, BroadcastGradientArgsKernel);
  registry->Bind("ConcatOffset", kCpu, DTypeSet{DType::kInt32}, ConcatOffsetKernel);
}

}  // namespace cpu
}  // namespace tfrun
