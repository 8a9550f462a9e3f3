// What the optimizers' update ops (training_ops.cc) and AssignAdd/AssignSub
// read and write, for every backend: which inputs are the updated tensors
// (the variable, then its slots), which are scalars, which the gradient;
// the tensors to write (ref inputs in place, or the resource variables
// their handles name, copied first where a read still holds the buffer:
// TensorFlow's copy-on-write); and TensorFlow's shape checks and texts.
// The arithmetic is each backend's.
#pragma once

#include <vector>

#include "core/runtime/kernel_registry.h"

namespace tfrun {

enum class Optimizer { kGradientDescent, kMomentum, kAdam, kAdagrad, kRMSProp };

struct UpdateInputs {
  std::vector<const char*> tensors;  // names, for the shape check's text
  std::vector<int> scalars;          // input indices, in the op's order
  int grad = 0;
};
UpdateInputs InputsOf(Optimizer op);

// The tensors an update op of `spec` writes, checked (scalars, shapes, the
// variables' dtype against the gradient's). Each shares its buffer with the
// variable, so writing it updates the variable.
StatusOr<std::vector<Tensor>> PrepareUpdate(KernelContext& c, const UpdateInputs& spec, bool resource);
// The same for a gradient of `grad_dtype` and `grad_shape` that is not
// (yet) a tensor: a fused root's (elementwise_fusion.h).
StatusOr<std::vector<Tensor>> PrepareUpdate(KernelContext& c, const UpdateInputs& spec, bool resource,
                                            DType grad_dtype, const Shape& grad_shape);

// AssignAdd/AssignSub (and the VariableOp forms): the variable to write,
// checked against the value's shape and dtype.
StatusOr<Tensor> PrepareAssignUpdate(KernelContext& c, bool resource);
// The same for a value of `value_dtype` and `value_shape` that is not
// (yet) a tensor: a fused root's (elementwise_fusion.h).
StatusOr<Tensor> PrepareAssignUpdate(KernelContext& c, bool resource, DType value_dtype, const Shape& value_shape);

// ScatterAdd/Sub/Update and their Resource forms (scatter_op.cc): the
// variable to write (ref input 0, or the handle's variable), checked as
// DoValidationChecking checks it: params at least 1-D, updates a scalar or
// of shape indices.shape + params.shape[1:]. The indices are checked as
// they are applied (TensorFlow stops at the first bad one, after the
// updates before it): ScatterIndexError words it.
StatusOr<Tensor> PrepareScatter(KernelContext& c, bool resource);
// "indices[2] = 7 is not in [0, 5)": the bad index at flat position `i` of
// `indices`, for params of `rows` rows.
Status ScatterIndexError(KernelContext& c, const Tensor& indices, int64_t i, int64_t rows);

}  // namespace tfrun
