// Output shapes from the tensors a kernel is given, checked as
// TensorFlow's kernels check them and failing with their texts: a graph
// may leave dimensions unknown until values are fed, so no kernel trusts
// the node's static shape. Shared by every backend.
#pragma once

#include <cstdint>
#include <vector>

#include "core/runtime/kernel_registry.h"

namespace tfrun {

// MatMul(a, b) with the node's transposes.
StatusOr<Shape> MatMulShape(KernelContext& c);
// AddN: every input the same shape.
StatusOr<Shape> AddNShape(KernelContext& c);
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

// Split(split_dim, value): the layout of value and each output's shape.
struct SplitPlan {
  AxisLayout layout;
  Shape output;
};
StatusOr<SplitPlan> PlanSplit(KernelContext& c);

// ConcatV2(values..., axis): the layout of the output and its shape.
struct ConcatPlan {
  AxisLayout layout;
  Shape output;
};
StatusOr<ConcatPlan> PlanConcat(KernelContext& c);

}  // namespace tfrun
