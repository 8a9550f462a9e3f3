#include "core/runtime/kernel_shapes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace tfrun {
namespace {

AxisLayout LayoutOf(const Shape& shape, int axis) {
  AxisLayout l;
  l.axis = axis;
  for (int i = 0; i < axis; ++i) l.outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) l.inner *= shape[i];
  return l;
}

int32_t ScalarInt32(const Tensor& t) { return t.data<int32_t>()[0]; }

int64_t IntAt(const Tensor& t, int64_t i) { return t.GetAsInt64(i); }

}  // namespace

// matmul_op.cc
StatusOr<Shape> MatMulShape(KernelContext& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  if (a.rank() != 2) return c.Fail(fmt::format("In[0] is not a matrix. Instead it has shape {}", ShapeDebugString(a.shape())));
  if (b.rank() != 2) return c.Fail(fmt::format("In[1] is not a matrix. Instead it has shape {}", ShapeDebugString(b.shape())));
  const int64_t k_a = a.shape()[c.node.transpose_a ? 0 : 1];
  const int64_t k_b = b.shape()[c.node.transpose_b ? 1 : 0];
  if (k_a != k_b) {
    return c.Fail(fmt::format("Matrix size-incompatible: In[0]: {}, In[1]: {}", ShapeDebugString(a.shape()),
                              ShapeDebugString(b.shape())));
  }
  return Shape{a.shape()[c.node.transpose_a ? 1 : 0], b.shape()[c.node.transpose_b ? 0 : 1]};
}

// aggregate_ops.cc
StatusOr<Shape> AddNShape(KernelContext& c) {
  const Shape& first = c.inputs[0].shape();
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    if (c.inputs[i].shape() != first) {
      return c.Fail(fmt::format("Inputs to operation {} of type {} must have the same size and shape.  Input 0: {} != "
                                "input {}: {}",
                                c.node.name, c.node.op, ShapeDebugString(first), i,
                                ShapeDebugString(c.inputs[i].shape())));
    }
  }
  return first;
}

// bcast.h (BCast), for any number of operands.
std::optional<BroadcastPlan> PlanBroadcast(const std::vector<const Shape*>& shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  BroadcastPlan plan;
  plan.output.assign(rank, 1);
  for (const Shape* s : shapes) {
    for (size_t k = 0; k < s->size(); ++k) {
      const int64_t d = (*s)[k];
      int64_t& out = plan.output[rank - s->size() + k];
      if (d == out || d == 1) continue;
      if (out != 1) return std::nullopt;
      out = d;
    }
  }
  for (const Shape* s : shapes) {
    std::vector<int64_t> strides(rank, 0);
    int64_t step = 1;
    for (size_t k = s->size(); k-- > 0;) {
      const size_t o = rank - s->size() + k;
      strides[o] = (*s)[k] == 1 && plan.output[o] != 1 ? 0 : step;
      step *= (*s)[k];
    }
    const int64_t elements = NumElements(*s).value_or(0);
    const bool simple = elements == 1 || *s == plan.output;
    plan.simple.push_back(simple);
    plan.single.push_back(elements == 1);
    plan.all_simple = plan.all_simple && simple;
    plan.strides.push_back(std::move(strides));
  }
  return plan;
}


// cwise_ops_common.cc (BinaryOpShared): the broadcasts graph files allow.
// cwise_ops_common.h (BCast): "Incompatible shapes: [2,3] vs. [3,2]".
StatusOr<BinaryPlan> PlanBinary(KernelContext& c) {
  const Shape& x = c.inputs[0].shape();
  const Shape& y = c.inputs[1].shape();
  BinaryPlan plan;
  if (x == y || y.empty()) {
    plan.output = x;
    return plan;
  }
  if (x.empty()) {
    plan.output = y;
    return plan;
  }
  std::optional<BroadcastPlan> broadcast = PlanBroadcast({&x, &y});
  if (!broadcast) {
    return c.Fail(fmt::format("Incompatible shapes: {} vs. {}", ShapeDebugString(x), ShapeDebugString(y)));
  }
  plan.output = std::move(broadcast->output);
  plan.x_strides = std::move(broadcast->strides[0]);
  plan.y_strides = std::move(broadcast->strides[1]);
  return plan;
}

// bias_op.cc
StatusOr<Shape> BiasAddShape(KernelContext& c) {
  const Tensor& value = c.inputs[0];
  const Tensor& bias = c.inputs[1];
  if (value.rank() < 2) return c.Fail("Input tensor must be at least 2D: " + ShapeDebugString(value.shape()));
  if (bias.rank() != 1) return c.Fail("Biases must be 1D: " + ShapeDebugString(bias.shape()));
  if (bias.shape()[0] != value.shape().back()) {
    return c.Fail(fmt::format("Must provide as many biases as the last dimension of the input tensor: {} vs. {}",
                              ShapeDebugString(bias.shape()), ShapeDebugString(value.shape())));
  }
  return value.shape();
}

// split_op.cc (SplitOpBase::ComputeEasyCases)
StatusOr<SplitPlan> PlanSplitV(KernelContext& c);

StatusOr<SplitPlan> PlanSplit(KernelContext& c) {
  if (c.node.op == "SplitV") return PlanSplitV(c);
  const Tensor& split_dim = c.inputs[0];
  const Tensor& value = c.inputs[1];
  if (split_dim.rank() != 0) return c.Fail(fmt::format("split_dim must be a scalar but has rank {}", split_dim.rank()));
  const int32_t given = ScalarInt32(split_dim);
  const int rank = value.rank();
  const int axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) {
    return c.Fail(fmt::format("-input rank(-{}) <= split_dim < input rank ({}), but got {}", rank, rank, given));
  }
  const int num_split = c.node.num_outputs;
  if (num_split < 1) return c.Fail(fmt::format("num_split must be at least 1, not {}", num_split));  // the importer's too
  const int64_t size = value.shape()[axis];
  if (size % num_split != 0) {
    return c.Fail(fmt::format("Number of ways to split should evenly divide the split dimension, but got split_dim {} "
                              "(size = {}) and num_split {}",
                              axis, size, num_split));
  }
  SplitPlan plan;
  plan.layout = LayoutOf(value.shape(), axis);
  plan.input = value.shape();
  plan.sizes.assign(num_split, size / num_split);
  return plan;
}

// split_v_op.cc (SplitVOpBase::ComputeEasyCases)
StatusOr<SplitPlan> PlanSplitV(KernelContext& c) {
  const Tensor& value = c.inputs[0];
  const Tensor& sizes = c.inputs[1];
  const Tensor& split_dim = c.inputs[2];
  if (split_dim.num_elements() != 1) {
    return c.Fail(fmt::format("split_dim_tensor must have exactly one element."));
  }
  const int rank = value.rank();
  const int64_t given = IntAt(split_dim, 0);
  const int64_t axis = given < 0 ? given + rank : given;
  if (sizes.rank() != 1 || sizes.num_elements() != c.node.num_outputs) {
    return c.Fail(fmt::format("size_splits must be a 1-D tensor with {} elements, got shape {}", c.node.num_outputs,
                              ShapeDebugString(sizes.shape())));
  }
  if (axis < 0 || axis >= rank) {
    return c.Fail(fmt::format("-input rank(-{}) <= split_dim < input rank ({}), but got {}", rank, rank, given));
  }
  SplitPlan plan;
  plan.input = value.shape();
  plan.layout = LayoutOf(value.shape(), static_cast<int>(axis));
  const int64_t size = value.shape()[axis];
  int64_t known = 0;
  int unknown = -1;
  for (int64_t i = 0; i < sizes.num_elements(); ++i) {
    const int64_t s = IntAt(sizes, i);
    if (s == -1) {
      if (unknown != -1) return c.Fail("There can only be one -1 in the input.");
      unknown = static_cast<int>(i);
    } else if (s < 0) {
      return c.Fail(fmt::format("Split size at index {} must be >= 0. Got: {}", i, s));
    } else {
      known += s;
    }
    plan.sizes.push_back(s);
  }
  if ((unknown == -1 && known != size) || (unknown != -1 && known > size)) {
    return c.Fail(fmt::format("Determined shape must either match input shape along split_dim exactly if fully "
                              "specified, or be less than the size of the input along split_dim if not fully "
                              "specified.  Got: {}",
                              known));
  }
  if (unknown != -1) plan.sizes[unknown] = size - known;
  return plan;
}

// broadcast_to_op.cc (BroadcastToOp::Compute)
StatusOr<BroadcastToPlan> PlanBroadcastTo(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& shape = c.inputs[1];
  if (shape.rank() != 1) {
    return c.Fail(fmt::format("shape must be a vector, got shape {}", ShapeDebugString(shape.shape())));
  }
  BroadcastToPlan plan;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const int64_t d = IntAt(shape, i);
    if (d < 0) return c.Fail(fmt::format("Dimension {} must be >= 0", d));
    plan.output.push_back(d);
  }
  const size_t rank = plan.output.size();
  if (static_cast<size_t>(input.rank()) > rank) {
    return c.Fail(fmt::format("Rank of input ({}) must be no greater than rank of output shape ({}).", input.rank(),
                              rank));
  }
  plan.input.assign(rank - input.rank(), 1);
  plan.input.insert(plan.input.end(), input.shape().begin(), input.shape().end());
  for (size_t d = 0; d < rank; ++d) {
    if (plan.input[d] == plan.output[d] || plan.input[d] == 1) continue;
    if (plan.output[d] == 1) {  // BCast stretches the output's 1, which BroadcastTo refuses
      return c.Fail(fmt::format("Unable to broadcast tensor of shape {} to tensor of shape {}",
                                ShapeDebugString(input.shape()), ShapeDebugString(plan.output)));
    }
    return c.Fail(fmt::format("Incompatible shapes: {} vs. {}", ShapeDebugString(input.shape()),
                              ShapeDebugString(plan.output)));
  }
  return plan;
}

// concat_op.cc (ConcatBaseOp::Compute)
StatusOr<ConcatPlan> PlanConcat(KernelContext& c) {
  const size_t n = c.inputs.size() - 1;
  const Tensor& axis_tensor = c.inputs[n];
  if (axis_tensor.rank() != 0) {
    return c.Fail("Concat dim tensor should be a scalar integer, but got shape " +
                  ShapeDebugString(axis_tensor.shape()));
  }
  const int32_t given = ScalarInt32(axis_tensor);
  const Shape& first = c.inputs[0].shape();
  const int rank = static_cast<int>(first.size());
  const int axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) {
    return c.Fail(fmt::format("ConcatOp : Expected concatenating dimensions in the range [{}, {}), but got {}", -rank,
                              rank, given));
  }
  ConcatPlan plan;
  plan.output = first;
  plan.output[axis] = 0;
  for (size_t i = 0; i < n; ++i) {
    const Shape& in = c.inputs[i].shape();
    if (static_cast<int>(in.size()) != rank) {
      return c.Fail(fmt::format("ConcatOp : Ranks of all input tensors should match: shape[0] = {} vs. shape[{}] = {}",
                                ShapeDebugString(first), i, ShapeDebugString(in)));
    }
    for (int j = 0; j < rank; ++j) {
      if (j != axis && in[j] != first[j]) {
        return c.Fail(fmt::format("ConcatOp : Dimension {} in both shapes must be equal: shape[0] = {} vs. shape[{}] = "
                                  "{}",
                                  j, ShapeDebugString(first), i, ShapeDebugString(in)));
      }
    }
    plan.output[axis] += in[axis];
  }
  plan.layout = LayoutOf(plan.output, axis);
  return plan;
}

// reduction_ops_common.cc (ReductionHelper::Simplify)
StatusOr<ReductionLayout> PlanReduction(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& axes = c.inputs[1];
  const int rank = input.rank();
  std::vector<bool> reduced(rank, false);
  // TensorFlow 2.21 reduces every dimension when given as many axes as the
  // input has, whatever they say ([0, 0] or [0, 5] of a matrix: its Session
  // returned the sum of all); otherwise each axis must be in range and
  // named once (ReductionHelper::Simplify).
  if (axes.num_elements() == rank) {
    reduced.assign(rank, true);
  } else {
    for (int64_t i = 0; i < axes.num_elements(); ++i) {
      const int64_t a = IntAt(axes, i);
      if (a < -rank || a >= rank) {
        return c.Fail(fmt::format("Invalid reduction dimension ({} for input with {} dimension(s)", a, rank));
      }
      const int64_t d = a < 0 ? a + rank : a;
      if (reduced[d]) {
        return c.Fail(fmt::format("Invalid reduction arguments: Axes contains duplicate dimension: {}", d));
      }
      reduced[d] = true;
    }
  }
  ReductionLayout layout;
  const bool keep = c.BoolAttr("keep_dims");
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      layout.output.push_back(input.shape()[d]);
    } else if (keep) {
      layout.output.push_back(1);
    }
  }
  int last = -1;  // kind of the last merged dimension: 0 kept, 1 reduced
  for (int d = 0; d < rank; ++d) {
    const int64_t size = input.shape()[d];
    if (size == 1) continue;
    const int kind = reduced[d] ? 1 : 0;
    if (kind == last) {
      layout.dims.back() *= size;
    } else {
      if (layout.dims.empty()) layout.first_reduced = kind == 1;
      layout.dims.push_back(size);
      last = kind;
    }
  }
  return layout;
}


// softmax_op.cc
StatusOr<RowsPlan> PlanSoftmax(KernelContext& c) {
  const Tensor& logits = c.inputs[0];
  if (logits.rank() < 1) {
    return c.Fail("logits must have >= 1 dimension, got " + ShapeDebugString(logits.shape()));
  }
  RowsPlan plan;
  plan.classes = logits.shape().back();
  plan.rows = plan.classes == 0 ? 0 : logits.num_elements() / plan.classes;
  return plan;
}

// xent_op.cc
StatusOr<BroadcastPlan> PlanSoftmaxXent(KernelContext& c) {
  const Shape& logits = c.inputs[0].shape();
  const Shape& labels = c.inputs[1].shape();
  std::optional<BroadcastPlan> plan = PlanBroadcast({&logits, &labels});
  if (!plan) {
    return c.Fail(fmt::format("logits and labels must be broadcastable: logits_size={} labels_size={}",
                              ShapeDebugString(logits), ShapeDebugString(labels)));
  }
  if (plan->output.size() != 2) {
    return c.Fail("logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional");
  }
  return std::move(*plan);
}

// bias_op.cc (BiasGradOp)
StatusOr<BiasGradPlan> PlanBiasAddGrad(KernelContext& c) {
  const Tensor& grad = c.inputs[0];
  if (grad.rank() < 2) {
    return c.Fail("Input tensor must be at least 2D: " + ShapeDebugString(grad.shape()));
  }
  const bool nchw = c.StringAttr("data_format", "NHWC") == "NCHW";
  const int channel_dim = nchw ? 1 : grad.rank() - 1;
  BiasGradPlan plan;
  plan.channels = grad.shape()[channel_dim];
  for (int d = 0; d < channel_dim; ++d) plan.outer *= grad.shape()[d];
  for (int d = channel_dim + 1; d < grad.rank(); ++d) plan.inner *= grad.shape()[d];
  return plan;
}

// slice_op.cc (SharedSliceValidation)
StatusOr<SlicePlan> PlanPad(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& paddings = c.inputs[1];
  if (paddings.rank() != 2 || paddings.shape()[1] != 2) {
    return c.Fail("paddings must be a matrix with 2 columns: " + ShapeDebugString(paddings.shape()));
  }
  const int dims = x.rank();
  if (paddings.shape()[0] != dims) {
    return c.Fail(fmt::format("The first dimension of paddings must be the rank of inputs{} {}",
                              ShapeDebugString(paddings.shape()), ShapeDebugString(x.shape())));
  }
  if (c.inputs.size() > 2 && c.inputs[2].num_elements() != 1) {
    return c.Fail("constant_values must be a scalar. Shape of constant_values is: " +
                  ShapeDebugString(c.inputs[2].shape()));
  }
  SlicePlan plan;
  plan.begin.resize(dims);
  plan.output.resize(dims);
  for (int d = 0; d < dims; ++d) {
    const int64_t before = paddings.GetAsInt64(2 * d), after = paddings.GetAsInt64(2 * d + 1);
    if (before < 0 || after < 0) return c.Fail(fmt::format("Paddings must be non-negative: {} {}", before, after));
    plan.begin[d] = before;
    plan.output[d] = x.shape()[d] + before + after;
  }
  return plan;
}

StatusOr<SlicePlan> PlanSlice(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& begin_t = c.inputs[1];
  const Tensor& size_t_ = c.inputs[2];
  const int rank = input.rank();
  if (begin_t.rank() != 1 || size_t_.rank() != 1 || begin_t.num_elements() != rank ||
      size_t_.num_elements() != rank) {
    return c.Fail(fmt::format("Expected begin and size arguments to be 1-D tensors of size {}, but got shapes {} "
                              "and {} instead.",
                              rank, ShapeDebugString(begin_t.shape()), ShapeDebugString(size_t_.shape())));
  }
  SlicePlan plan;
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = input.shape()[d];
    const int64_t begin = IntAt(begin_t, d);
    int64_t size = IntAt(size_t_, d);
    if (size == -1) size = dim - begin;
    if (begin < 0 || begin > dim || size < 0 || size > dim - begin) {
      if (!(0 <= begin && begin <= dim)) {
        return c.Fail(fmt::format("Expected begin[{}] in [0, {}], but got {}", d, dim, begin));
      }
      return c.Fail(fmt::format("Expected size[{}] in [0, {}], but got {}", d, dim - begin, size));
    }
    plan.begin.push_back(begin);
    plan.output.push_back(size);
  }
  return plan;
}

StatusOr<StridedSlicePlan> PlanStridedSlice(KernelContext& c, const Shape& input, const Tensor& begin_t,
                                            const Tensor& end_t, const Tensor& strides_t) {
  if (begin_t.rank() != 1 || end_t.rank() != 1 || strides_t.rank() != 1 ||
      begin_t.num_elements() != end_t.num_elements() || strides_t.num_elements() != begin_t.num_elements()) {
    return c.Fail(fmt::format("Expected begin, end, and strides to be 1D equal size tensors, but got shapes {}, {}, "
                              "and {} instead.",
                              ShapeDebugString(begin_t.shape()), ShapeDebugString(end_t.shape()),
                              ShapeDebugString(strides_t.shape())));
  }
  const int64_t begin_mask = c.IntAttr("begin_mask"), end_mask = c.IntAttr("end_mask");
  int64_t ellipsis_mask = c.IntAttr("ellipsis_mask");
  const int64_t new_axis_mask = c.IntAttr("new_axis_mask"), shrink_axis_mask = c.IntAttr("shrink_axis_mask");
  if (ellipsis_mask != 0 && (ellipsis_mask & (ellipsis_mask - 1)) != 0) {
    return c.Fail("Multiple ellipses in slice spec not allowed");
  }
  const auto bit = [](int64_t mask, int64_t i) { return i < 63 && ((mask >> i) & 1) != 0; };
  // The sparse spec: what the Python slice wrote; an ellipsis at its end
  // when it has none.
  int64_t sparse_dims = begin_t.num_elements();
  int64_t new_axes_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int64_t i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && bit(new_axis_mask, i)) ++new_axes_after_ellipsis;
    if (bit(ellipsis_mask, i)) ellipsis_seen = true;
  }
  if (!ellipsis_seen) {
    if (sparse_dims < 63) ellipsis_mask |= int64_t{1} << sparse_dims;
    ++sparse_dims;
  }
  // BuildDenseSpec: one entry per input dimension.
  const int64_t dims = static_cast<int64_t>(input.size());
  std::vector<int64_t> begin(dims, 0), end(dims, 0), strides(dims, 1);
  std::vector<bool> dense_begin_mask(dims, false), dense_end_mask(dims, false), dense_shrink(dims, false);
  constexpr int64_t kNewAxis = -1, kShrinkAxis = -2;
  std::vector<int64_t> gather;  // final shape: a processing dimension, or kNewAxis / kShrinkAxis
  int64_t full = 0;
  for (int64_t i = 0; i < sparse_dims; ++i) {
    if (bit(ellipsis_mask, i)) {
      const int64_t next = std::min(dims - (sparse_dims - i) + 1 + new_axes_after_ellipsis, dims);
      for (; full < next; ++full) {
        dense_begin_mask[full] = dense_end_mask[full] = true;
        gather.push_back(full);
      }
    } else if (bit(new_axis_mask, i)) {
      gather.push_back(kNewAxis);
    } else {
      if (full == dims) {
        return c.Fail(fmt::format("Index out of range using input dim {}; input has only {} dims", full, dims));
      }
      begin[full] = IntAt(begin_t, i);
      end[full] = IntAt(end_t, i);
      strides[full] = IntAt(strides_t, i);
      dense_begin_mask[full] = bit(begin_mask, i);
      dense_end_mask[full] = bit(end_mask, i);
      if (bit(shrink_axis_mask, i)) {
        dense_shrink[full] = true;
        gather.push_back(kShrinkAxis);
      } else {
        gather.push_back(full);
      }
      ++full;
    }
  }
  StridedSlicePlan plan;
  for (int64_t i = 0; i < dims; ++i) {
    int64_t& b = begin[i];
    int64_t& e = end[i];
    const int64_t stride = strides[i];
    const int64_t dim = input[i];
    if (stride == 0) return c.Fail(fmt::format("strides[{}] must be non-zero", i));
    const bool shrink = dense_shrink[i];
    const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
    const auto canonical = [&](int64_t x, bool masked, bool is_end) {
      if (masked) return stride > 0 ? (is_end ? hi : lo) : (is_end ? lo : hi);
      const int64_t fwd = x < 0 ? dim + x : x;
      return fwd < lo ? lo : fwd > hi ? hi : fwd;
    };
    if (shrink && stride <= 0) return c.Fail("only stride 1 allowed on non-range indexing.");
    if (shrink) {
      // foo[-1]: begin -1, end 0; the end is begin + 1 once begin is forward.
      const int64_t fwd = b < 0 ? dim + b : b;
      b = fwd;
      e = b + 1;
      if (fwd < 0 || fwd >= dim) {
        return c.Fail(fmt::format("slice index {} of dimension {} out of bounds.", b, i));
      }
    } else {
      b = canonical(b, dense_begin_mask[i], false);
      e = canonical(e, dense_end_mask[i], true);
    }
    const int64_t interval = e - b;
    int64_t size = 0;
    if (interval != 0 && (interval < 0) == (stride < 0)) size = interval / stride + (interval % stride != 0 ? 1 : 0);
    plan.begin.push_back(b);
    plan.strides.push_back(stride);
    plan.processing.push_back(size);
  }
  for (int64_t g : gather) {
    if (g >= 0) plan.output.push_back(plan.processing[g]);
    if (g == kNewAxis) plan.output.push_back(1);
  }
  return plan;
}

// tile_ops.cc
StatusOr<TransposePlan> PlanTranspose(KernelContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& perm = c.inputs[1];
  if (perm.rank() != 1) return c.Fail("perm must be rank 1, got shape " + ShapeDebugString(perm.shape()));
  const int dims = x.rank();
  if (perm.num_elements() != dims) {
    return c.Fail(fmt::format("transpose expects a vector of size {}. But input(1) is a vector of size {}", dims,
                              perm.num_elements()));
  }
  std::vector<int64_t> order(dims);
  std::vector<bool> seen(dims, false);
  for (int i = 0; i < dims; ++i) {
    const int64_t d = perm.GetAsInt64(i);
    if (d < 0 || d >= dims) return c.Fail(fmt::format("{} is out of range [0 .. {})", d, dims));
    order[i] = d;
    seen[d] = true;
  }
  for (int i = 0; i < dims; ++i) {
    if (!seen[i]) return c.Fail(fmt::format("{} is missing from {{{}}}.", i, fmt::join(order, ",")));
  }
  std::vector<int64_t> in_stride(dims, 1);
  for (int d = dims - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * x.shape()[d + 1];
  TransposePlan plan;
  plan.output.resize(dims);
  plan.in_strides.resize(dims);
  for (int i = 0; i < dims; ++i) {
    plan.output[i] = x.shape()[order[i]];
    plan.in_strides[i] = in_stride[order[i]];
  }
  return plan;
}

StatusOr<Shape> TileShape(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& multiples = c.inputs[1];
  const int rank = input.rank();
  if (multiples.rank() != 1 || multiples.num_elements() != rank) {
    return c.Fail(fmt::format("Expected multiples argument to be a vector of length {} but got length {}", rank,
                              multiples.shape().empty() ? 0 : multiples.shape()[0]));
  }
  Shape shape;
  for (int d = 0; d < rank; ++d) {
    const int64_t m = IntAt(multiples, d);
    if (m < 0) return c.Fail(fmt::format("Expected multiples[{}] >= 0, but got {}", d, m));
    if (m > 0 && input.shape()[d] > (int64_t{1} << 62) / m) {
      return c.Fail(fmt::format("Tile: multiples[{}] = {} makes a dimension too large", d, m));
    }
    shape.push_back(input.shape()[d] * m);
  }
  return shape;
}

// pack_op.cc
StatusOr<PackPlan> PlanPack(KernelContext& c) {
  const Tensor& first = c.inputs[0];
  const int rank = first.rank() + 1;
  int64_t axis = c.IntAttr("axis");
  if (axis < -rank || axis >= rank) {
    return c.Fail(fmt::format("axis = {} not in [{}, {})", axis, -rank, rank));
  }
  if (axis < 0) axis += rank;
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    if (c.inputs[i].shape() != first.shape()) {
      return c.Fail(fmt::format("Shapes of all inputs must match: values[0].shape = {} != values[{}].shape = {}",
                                ShapeDebugString(first.shape()), i, ShapeDebugString(c.inputs[i].shape())));
    }
  }
  PackPlan plan;
  plan.output = first.shape();
  plan.output.insert(plan.output.begin() + axis, static_cast<int64_t>(c.inputs.size()));
  for (int64_t d = 0; d < axis; ++d) plan.outer *= first.shape()[d];
  return plan;
}

// gather_op.cc
StatusOr<GatherPlan> PlanGather(KernelContext& c) {
  const Tensor& params = c.inputs[0];
  const Tensor& indices = c.inputs[1];
  const Tensor& axis_t = c.inputs[2];
  if (c.IntAttr("batch_dims") != 0) return c.Fail("tfrun's GatherV2 supports batch_dims = 0 only");
  const int rank = params.rank();
  if (axis_t.num_elements() != 1) return c.Fail("axis must be scalar");
  int64_t axis = IntAt(axis_t, 0);
  if (axis < -rank || axis >= rank) {
    return c.Fail(fmt::format("Expected axis in the range [{}, {}), but got {}", -rank, rank, axis));
  }
  if (axis < 0) axis += rank;
  GatherPlan plan;
  plan.output.assign(params.shape().begin(), params.shape().begin() + axis);
  plan.output.insert(plan.output.end(), indices.shape().begin(), indices.shape().end());
  plan.output.insert(plan.output.end(), params.shape().begin() + axis + 1, params.shape().end());
  plan.limit = params.shape()[axis];
  plan.count = indices.num_elements();
  for (int64_t d = 0; d < axis; ++d) plan.outer *= params.shape()[d];
  for (int d = static_cast<int>(axis) + 1; d < rank; ++d) plan.inner *= params.shape()[d];
  return plan;
}

namespace {

// A value as TensorFlow's StrCat writes it: integers whole, floating
// point numbers with six significant digits (%g).
template <typename T>
std::string RangeValueText(T v) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    return fmt::format("{:g}", static_cast<double>(v));
  }
}

template <typename T>
StatusOr<int64_t> RangeSizeOf(KernelContext& c) {
  const T start = c.inputs[0].data<T>()[0], limit = c.inputs[1].data<T>()[0], delta = c.inputs[2].data<T>()[0];
  const T zero(0);
  if (delta == zero) return c.Fail(fmt::format("Requires delta != 0: {}", RangeValueText(delta)));
  if (delta > zero ? start > limit : start < limit) {
    return c.Fail(fmt::format(delta > zero ? "Requires start <= limit when delta > 0: {}/{}"
                                           : "Requires start >= limit when delta < 0: {}/{}",
                              RangeValueText(start), RangeValueText(limit)));
  }
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    const uint64_t span = delta > 0 ? static_cast<U>(static_cast<U>(limit) - static_cast<U>(start))
                                    : static_cast<U>(static_cast<U>(start) - static_cast<U>(limit));
    const uint64_t step = delta > 0 ? static_cast<U>(delta) : static_cast<U>(U{0} - static_cast<U>(delta));
    const uint64_t count = span / step + (span % step != 0 ? 1 : 0);
    if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return c.Fail(fmt::format("Requires ((limit - start) / delta) <= {}", std::numeric_limits<int64_t>::max()));
    }
    return static_cast<int64_t>(count);
  } else {
    const double count = std::ceil(std::abs(static_cast<double>(T((limit - start) / delta))));
    if (!(count < 9.2233720368547758e18)) {
      return c.Fail(fmt::format("Requires ((limit - start) / delta) <= {}", std::numeric_limits<int64_t>::max()));
    }
    return static_cast<int64_t>(count);
  }
}

}  // namespace

Status RequireSameShape(KernelContext& c) {
  const Shape& x = c.inputs[0].shape();
  const Shape& y = c.inputs[1].shape();
  if (x == y) return Status::Ok();
  return c.Fail(fmt::format("{}: inputs must be of the same shape: {} vs. {}", c.node.op, ShapeDebugString(x),
                            ShapeDebugString(y)));
}

StatusOr<StridedSliceGradPlan> PlanStridedSliceGrad(KernelContext& c) {
  const Tensor& shape_t = c.inputs[0];
  const Tensor& dy = c.inputs[4];
  if (shape_t.rank() != 1) {
    return c.Fail(fmt::format("shape must be 1-D, got shape.shape = {}", ShapeDebugString(shape_t.shape())));
  }
  StridedSliceGradPlan plan;
  TFRUN_ASSIGN_OR_RETURN(plan.shape, ShapeFromVector(c, shape_t));
  TFRUN_ASSIGN_OR_RETURN(plan.slice, PlanStridedSlice(c, plan.shape, c.inputs[1], c.inputs[2], c.inputs[3]));
  if (plan.slice.output != dy.shape()) {
    return c.Fail(fmt::format("shape of dy was {} instead of {}", ShapeDebugString(dy.shape()),
                              ShapeDebugString(plan.slice.output)));
  }
  return plan;
}

StatusOr<int64_t> PlanRange(KernelContext& c) {
  for (int i = 0; i < 3; ++i) {
    const Tensor& in = c.inputs[i];
    if (!(in.rank() == 0 || (in.rank() == 1 && in.shape()[0] == 1))) {
      return c.Fail(fmt::format("{} must be a scalar, not shape {}", i == 0 ? "start" : i == 1 ? "limit" : "delta",
                                ShapeDebugString(in.shape())));
    }
    if (in.dtype() != c.node.dtype) return c.Fail(fmt::format("Range's inputs are {}", Name(c.node.dtype)));
  }
  return DispatchDType(c.node.dtype, [&](auto tag) -> StatusOr<int64_t> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, StringByte> || std::is_unsigned_v<T>) {
      return RuntimeError(fmt::format("no Range kernel for {}", Name(c.node.dtype)));
    } else {
      return RangeSizeOf<T>(c);
    }
  });
}

StatusOr<ArgPlan> PlanArg(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& dimension = c.inputs[1];
  if (dimension.rank() != 0) {
    return c.Fail(fmt::format("dim must be a scalar, but received tensor of shape: {}",
                              ShapeDebugString(dimension.shape())));
  }
  const int64_t dim = IntAt(dimension, 0);
  const int rank = input.rank();
  const int64_t axis = dim < 0 ? dim + rank : dim;
  if (axis < 0 || axis >= rank) {
    return c.Fail(fmt::format("Expected dimension in the range [{}, {}), but got {}", -rank, rank, dim));
  }
  if (input.shape()[axis] == 0) {
    return c.Fail(fmt::format("Reduction axis {} is empty in shape {}", dim, ShapeDebugString(input.shape())));
  }
  ArgPlan plan;
  for (int d = 0; d < rank; ++d) {
    if (d == axis) continue;
    plan.output.push_back(input.shape()[d]);
    (d < axis ? plan.outer : plan.inner) *= input.shape()[d];
  }
  plan.size = input.shape()[axis];
  return plan;
}

StatusOr<XentPlan> PlanSparseXent(KernelContext& c) {
  const Tensor& logits = c.inputs[0];
  const Tensor& labels = c.inputs[1];
  if (logits.rank() != 2) {
    return c.Fail(fmt::format("logits must be 2-D, but got shape {}", ShapeDebugString(logits.shape())));
  }
  if (labels.rank() != 1) {
    return c.Fail(fmt::format("labels must be 1-D, but got shape {}", ShapeDebugString(labels.shape())));
  }
  XentPlan plan{logits.shape()[0], logits.shape()[1]};
  if (labels.shape()[0] != plan.rows) {
    return c.Fail(fmt::format("logits and labels must have the same first dimension, got logits shape {} and "
                              "labels shape {}",
                              ShapeDebugString(logits.shape()), ShapeDebugString(labels.shape())));
  }
  if (plan.classes <= 0) {
    return c.Fail(fmt::format("Must have at least one class, but got logits shape {}",
                              ShapeDebugString(logits.shape())));
  }
  return plan;
}

StatusOr<InTopKPlan> PlanInTopK(KernelContext& c) {
  const Tensor& predictions = c.inputs[0];
  const Tensor& targets = c.inputs[1];
  const Tensor& k = c.inputs[2];
  if (predictions.rank() != 2) return c.Fail("predictions must be 2-dimensional");
  if (targets.rank() != 1) return c.Fail("targets must be 1-dimensional");
  if (predictions.shape()[0] != targets.shape()[0]) {
    return c.Fail(fmt::format("First dimension of predictions {} must match length of targets {}",
                              predictions.shape()[0], targets.shape()[0]));
  }
  if (k.rank() != 0) return c.Fail(fmt::format("k must be 0-D, got shape {}", ShapeDebugString(k.shape())));
  return InTopKPlan{predictions.shape()[0], predictions.shape()[1], IntAt(k, 0)};
}

}  // namespace tfrun
