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

// AssignAdd/AssignSub (and the VariableOp forms): the variable to write,
// checked against the value's shape and dtype.
StatusOr<Tensor> PrepareAssignUpdate(KernelContext& c, bool resource);

}  // namespace tfrun
