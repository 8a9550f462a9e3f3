#include "core/runtime/variable_updates.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>

namespace tfrun {
namespace {

// The tensors an update writes: the ref inputs themselves, or the resource
// variables their handles name (copied first where a read holds them; a
// variable named twice, as var and as a slot, is one tensor, as in
// TensorFlow). `assign_update`: AssignAdd/SubVariableOp, whose dtype text
// is their own.
StatusOr<std::vector<Tensor>> WritableTensors(KernelContext& c, size_t count, bool resource, DType dtype,
                                              bool assign_update = false) {
  std::vector<Tensor> tensors;
  std::vector<std::string> keys;
  for (size_t i = 0; i < count; ++i) {
    if (!resource) {
      tensors.push_back(c.inputs[i]);
      continue;
    }
    TFRUN_ASSIGN_OR_RETURN(std::string key, ResourceKey(c, static_cast<int>(i)));
    if (auto same = std::find(keys.begin(), keys.end(), key); same != keys.end()) {
      tensors.push_back(tensors[same - keys.begin()]);
      keys.push_back(std::move(key));
      continue;
    }
    TFRUN_ASSIGN_OR_RETURN(Tensor* variable, LookupResourceVariable(c, static_cast<int>(i)));
    if (variable->dtype() != dtype) {
      if (assign_update) return c.Fail("DType of variable handle and value does not match.");
      return c.Fail(fmt::format("Trying to update variable with wrong dtype. Expected {} got {}",
                                Info(variable->dtype()).tf_name, Info(dtype).tf_name));
    }
    if (variable->buffer_shared()) {
      TFRUN_ASSIGN_OR_RETURN(*variable, variable->CopyTo(variable->allocator(), c.device_name));
    }
    tensors.push_back(*variable);
    keys.push_back(std::move(key));
  }
  return tensors;
}

Status CheckUpdateShapes(KernelContext& c, const UpdateInputs& spec, const std::vector<Tensor>& tensors,
                         const Shape& grad_shape) {
  for (int s : spec.scalars) {
    if (c.inputs[s].rank() != 0) {
      return c.Fail(fmt::format("{} is not a scalar: {}", c.node.op.find("GradientDescent") != std::string::npos
                                                              ? "alpha"
                                                              : "lr",
                                ShapeDebugString(c.inputs[s].shape())));
    }
  }
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i].shape() != tensors[0].shape()) {
      return c.Fail(fmt::format("var and {} do not have the same shape{} {}", spec.tensors[i],
                                ShapeDebugString(tensors[0].shape()), ShapeDebugString(tensors[i].shape())));
    }
  }
  if (grad_shape != tensors[0].shape()) {
    return c.Fail(fmt::format("var and {} do not have the same shape{} {}",
                              c.node.op.find("GradientDescent") != std::string::npos ? "delta" : "grad",
                              ShapeDebugString(tensors[0].shape()), ShapeDebugString(grad_shape)));
  }
  return Status::Ok();
}

}  // namespace

UpdateInputs InputsOf(Optimizer op) {
  switch (op) {
    case Optimizer::kGradientDescent: return {{"var"}, {1}, 2};
    case Optimizer::kMomentum: return {{"var", "accum"}, {2, 4}, 3};
    case Optimizer::kAdam: return {{"var", "m", "v"}, {3, 4, 5, 6, 7, 8}, 9};
    case Optimizer::kAdagrad: return {{"var", "accum"}, {2}, 3};
    case Optimizer::kRMSProp: return {{"var", "ms", "mom"}, {3, 4, 5, 6}, 7};
  }
  return {};
}

StatusOr<std::vector<Tensor>> PrepareUpdate(KernelContext& c, const UpdateInputs& spec, bool resource) {
  return PrepareUpdate(c, spec, resource, c.inputs[spec.grad].dtype(), c.inputs[spec.grad].shape());
}

StatusOr<std::vector<Tensor>> PrepareUpdate(KernelContext& c, const UpdateInputs& spec, bool resource,
                                            DType grad_dtype, const Shape& grad_shape) {
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors,
                         WritableTensors(c, spec.tensors.size(), resource, grad_dtype));
  TFRUN_RETURN_IF_ERROR(CheckUpdateShapes(c, spec, tensors, grad_shape));
  return tensors;
}

StatusOr<Tensor> PrepareAssignUpdate(KernelContext& c, bool resource) {
  return PrepareAssignUpdate(c, resource, c.inputs[1].dtype(), c.inputs[1].shape());
}

StatusOr<Tensor> PrepareAssignUpdate(KernelContext& c, bool resource, DType value_dtype, const Shape& value_shape) {
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, WritableTensors(c, 1, resource, value_dtype, true));
  const Tensor& var = tensors[0];
  if (var.shape() != value_shape) {
    return c.Fail(fmt::format(
        resource ? "Cannot update variable with shape {} using a Tensor with shape {}, shapes must be equal."
                 : "Must have the same shape: {} vs. {}",  // AssignUpdateHelper's text
        ShapeDebugString(var.shape()), ShapeDebugString(value_shape)));
  }
  return var;
}

StatusOr<Tensor> PrepareScatter(KernelContext& c, bool resource) {
  const Tensor& indices = c.inputs[1];
  const Tensor& updates = c.inputs[2];
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, WritableTensors(c, 1, resource, updates.dtype()));
  const Tensor& params = tensors[0];
  if (params.rank() < 1) {
    return c.Fail(fmt::format("params must be at least 1-D, got shape {}", ShapeDebugString(params.shape())));
  }
  bool valid = updates.rank() == 0;
  if (!valid && updates.rank() == indices.rank() + params.rank() - 1) {
    valid = true;
    for (int d = 0; d < indices.rank(); ++d) valid = valid && updates.shape()[d] == indices.shape()[d];
    for (int d = 1; d < params.rank(); ++d) {
      valid = valid && params.shape()[d] == updates.shape()[d + indices.rank() - 1];
    }
  }
  if (!valid) {
    return c.Fail(fmt::format(
        "Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], got updates.shape {}, "
        "indices.shape {}, params.shape {}",
        ShapeDebugString(updates.shape()), ShapeDebugString(indices.shape()), ShapeDebugString(params.shape())));
  }
  return params;
}

Status ScatterIndexError(KernelContext& c, const Tensor& indices, int64_t i, int64_t rows) {
  // SliceDebugString: the flat position as a multi-index.
  std::vector<int64_t> position(indices.rank());
  int64_t rest = i;
  for (int d = indices.rank(); d-- > 0;) {
    const int64_t size = indices.shape()[d];
    position[d] = size == 0 ? 0 : rest % size;
    rest = size == 0 ? 0 : rest / size;
  }
  const int64_t value = indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
  return c.Fail(fmt::format("indices[{}] = {} is not in [0, {})", fmt::join(position, ","), value, rows));
}

}  // namespace tfrun
