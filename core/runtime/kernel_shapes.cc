#include "core/runtime/kernel_shapes.h"

#include <algorithm>

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
  const size_t rank = std::max(x.size(), y.size());
  plan.output.resize(rank);
  plan.x_strides.resize(rank);
  plan.y_strides.resize(rank);
  int64_t x_step = 1, y_step = 1;  // each operand's element step at this dimension
  for (size_t k = rank; k-- > 0;) {
    const size_t from_right = rank - 1 - k;
    const int64_t dx = from_right < x.size() ? x[x.size() - 1 - from_right] : 1;
    const int64_t dy = from_right < y.size() ? y[y.size() - 1 - from_right] : 1;
    if (dx != dy && dx != 1 && dy != 1) {
      return c.Fail(fmt::format("Incompatible shapes: {} vs. {}", ShapeDebugString(x), ShapeDebugString(y)));
    }
    plan.output[k] = dx == 1 ? dy : dx;
    plan.x_strides[k] = dx == 1 ? 0 : x_step;
    plan.y_strides[k] = dy == 1 ? 0 : y_step;
    x_step *= dx;
    y_step *= dy;
  }
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
StatusOr<SplitPlan> PlanSplit(KernelContext& c) {
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
  const int64_t size = value.shape()[axis];
  if (size % num_split != 0) {
    return c.Fail(fmt::format("Number of ways to split should evenly divide the split dimension, but got split_dim {} "
                              "(size = {}) and num_split {}",
                              axis, size, num_split));
  }
  SplitPlan plan;
  plan.layout = LayoutOf(value.shape(), axis);
  plan.output = value.shape();
  plan.output[axis] = size / num_split;
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

}  // namespace tfrun
