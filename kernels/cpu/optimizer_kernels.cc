// The optimizers' update ops (training_ops.cc) and the variable updates
// AssignAdd/AssignSub, for reference variables (the variable and its slots
// are ref inputs, updated in place, as TensorFlow's refs alias) and
// resource variables (handles; TensorFlow's copy-on-write: a variable
// whose buffer a read still holds is copied before the update, so the read
// keeps the value it read). The update formulas are the CPU functors'
// Eigen expressions, term for term.
#include <cmath>

#include "kernels/cpu/cpu_eigen.h"

namespace tfrun {
namespace cpu {
namespace {

// Which inputs of an update op are updated tensors (the variable, then its
// slots), which are scalars, and which is the gradient.
struct UpdateInputs {
  std::vector<const char*> tensors;  // names, for the shape check's text
  std::vector<int> scalars;
  int grad = 0;
};

// The tensors an update writes: the ref inputs themselves, or the resource
// variables their handles name (copied first where a read holds them).
StatusOr<std::vector<Tensor>> WritableTensors(KernelContext& c, size_t count, bool resource, DType dtype) {
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < count; ++i) {
    if (!resource) {
      tensors.push_back(c.inputs[i]);
      continue;
    }
    TFRUN_ASSIGN_OR_RETURN(Tensor* variable, LookupResourceVariable(c, c.inputs[i]));
    if (variable->buffer_shared()) {
      TFRUN_ASSIGN_OR_RETURN(*variable, variable->CopyTo(variable->allocator(), c.device_name));
    }
    if (variable->dtype() != dtype) {
      return c.Fail(fmt::format("Trying to update variable with wrong dtype. Expected {} got {}",
                                Info(variable->dtype()).tf_name, Info(dtype).tf_name));
    }
    tensors.push_back(*variable);
  }
  return tensors;
}

Status CheckUpdateShapes(KernelContext& c, const UpdateInputs& spec, const std::vector<Tensor>& tensors) {
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
  const Tensor& grad = c.inputs[spec.grad];
  if (grad.shape() != tensors[0].shape()) {
    return c.Fail(fmt::format("var and {} do not have the same shape{} {}",
                              c.node.op.find("GradientDescent") != std::string::npos ? "delta" : "grad",
                              ShapeDebugString(tensors[0].shape()), ShapeDebugString(grad.shape())));
  }
  return Status::Ok();
}

enum class Optimizer { kGradientDescent, kMomentum, kAdam, kAdagrad, kRMSProp };

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

template <Optimizer Op, typename T>
void Update(KernelContext& c, std::vector<Tensor>& t) {
  const int64_t n = t[0].num_elements();
  auto scalar = [&](int i) { return c.inputs[i].data<T>()[0]; };
  auto var = FlatOf<T>(t[0]);
  if constexpr (Op == Optimizer::kGradientDescent) {
    auto delta = ConstFlatOf<T>(c.inputs[2]);
    Assign(var, var - delta * scalar(1), n);
  } else if constexpr (Op == Optimizer::kMomentum) {
    auto accum = FlatOf<T>(t[1]);
    auto grad = ConstFlatOf<T>(c.inputs[3]);
    const T lr = scalar(2), momentum = scalar(4);
    Assign(accum, accum * momentum + grad, n);
    if (c.BoolAttr("use_nesterov")) {
      Assign(var, var - (grad * lr + accum * momentum * lr), n);
    } else {
      Assign(var, var - accum * lr, n);
    }
  } else if constexpr (Op == Optimizer::kAdam) {
    auto m = FlatOf<T>(t[1]);
    auto v = FlatOf<T>(t[2]);
    auto grad = ConstFlatOf<T>(c.inputs[9]);
    const T beta1_power = scalar(3), beta2_power = scalar(4), lr = scalar(5), beta1 = scalar(6),
            beta2 = scalar(7), epsilon = scalar(8);
    // ApplyAdamNonCuda.
    const T alpha = lr * T(std::sqrt(static_cast<double>(T(1) - beta2_power))) / (T(1) - beta1_power);
    Assign(m, m + (grad - m) * (T(1) - beta1), n);
    Assign(v, v + (grad.square() - v) * (T(1) - beta2), n);
    if (c.BoolAttr("use_nesterov")) {
      Assign(var, var - ((grad * (T(1) - beta1) + m * beta1) * alpha) / (v.sqrt() + epsilon), n);
    } else {
      Assign(var, var - (m * alpha) / (v.sqrt() + epsilon), n);
    }
  } else if constexpr (Op == Optimizer::kAdagrad) {
    auto accum = FlatOf<T>(t[1]);
    auto grad = ConstFlatOf<T>(c.inputs[3]);
    if (c.BoolAttr("update_slots", true)) Assign(accum, accum + grad.square(), n);
    Assign(var, var - grad * scalar(2) * accum.unaryExpr(ExactRsqrt()), n);
  } else if constexpr (Op == Optimizer::kRMSProp) {
    auto ms = FlatOf<T>(t[1]);
    auto mom = FlatOf<T>(t[2]);
    auto grad = ConstFlatOf<T>(c.inputs[7]);
    const T lr = scalar(3), rho = scalar(4), momentum = scalar(5), epsilon = scalar(6);
    Assign(ms, ms + (grad.square() - ms) * (T(1) - rho), n);
    Assign(mom, mom * momentum + (grad * lr) / ((ms + epsilon).sqrt()), n);
    Assign(var, var - mom, n);
  }
}

template <Optimizer Op, bool Resource>
Status ApplyKernel(KernelContext& c) {
  const UpdateInputs spec = InputsOf(Op);
  const DType dtype = c.inputs[spec.grad].dtype();
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, WritableTensors(c, spec.tensors.size(), Resource, dtype));
  TFRUN_RETURN_IF_ERROR(CheckUpdateShapes(c, spec, tensors));
  TFRUN_RETURN_IF_ERROR(ForDType<IsFloat>(dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    Update<Op, T>(c, tensors);
    return Status::Ok();
  }));
  if constexpr (!Resource) c.output = tensors[0];  // the ref output: the variable
  return Status::Ok();
}

// AssignAdd / AssignSub and their resource forms: var += value (or -=).
template <bool Add, bool Resource>
Status AssignUpdateKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, WritableTensors(c, 1, Resource, c.inputs[1].dtype()));
  Tensor& var = tensors[0];
  const Tensor& value = c.inputs[1];
  if (var.shape() != value.shape()) {
    return c.Fail(fmt::format(
        Resource ? "Cannot update variable with shape {} using a Tensor with shape {}, shapes must be equal."
                 : "Must have the same shape: {} vs. {}",  // AssignUpdateHelper's text
        ShapeDebugString(var.shape()), ShapeDebugString(value.shape())));
  }
  TFRUN_RETURN_IF_ERROR(ForDType<IsNumber>(value.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using A = Arith<T>;
    const int64_t n = var.num_elements();
    Flat<A> v(reinterpret_cast<A*>(var.data<T>()), n);
    ConstFlat<A> d(reinterpret_cast<const A*>(value.data<T>()), n);
    if constexpr (Add) {
      Assign(v, v + d, n);
    } else {
      Assign(v, v - d, n);
    }
    return Status::Ok();
  }));
  if constexpr (!Resource) c.output = var;
  return Status::Ok();
}

}  // namespace

void RegisterOptimizerKernels(KernelRegistry* registry) {
  const DTypeSet floats = kFloatTypes;
  // The resource forms have no output: the registry takes any dtype.
  registry->Bind("ApplyGradientDescent", kCpu, floats, ApplyKernel<Optimizer::kGradientDescent, false>);
  registry->Bind("ResourceApplyGradientDescent", kCpu, floats, ApplyKernel<Optimizer::kGradientDescent, true>);
  registry->Bind("ApplyMomentum", kCpu, floats, ApplyKernel<Optimizer::kMomentum, false>);
  registry->Bind("ResourceApplyMomentum", kCpu, floats, ApplyKernel<Optimizer::kMomentum, true>);
  registry->Bind("ApplyAdam", kCpu, floats, ApplyKernel<Optimizer::kAdam, false>);
  registry->Bind("ResourceApplyAdam", kCpu, floats, ApplyKernel<Optimizer::kAdam, true>);
  registry->Bind("ApplyAdagrad", kCpu, floats, ApplyKernel<Optimizer::kAdagrad, false>);
  registry->Bind("ResourceApplyAdagrad", kCpu, floats, ApplyKernel<Optimizer::kAdagrad, true>);
  registry->Bind("ApplyRMSProp", kCpu, floats, ApplyKernel<Optimizer::kRMSProp, false>);
  registry->Bind("ResourceApplyRMSProp", kCpu, floats, ApplyKernel<Optimizer::kRMSProp, true>);
  registry->Bind("AssignAdd", kCpu, kNumericTypes, AssignUpdateKernel<true, false>);
  registry->Bind("AssignSub", kCpu, kNumericTypes, AssignUpdateKernel<false, false>);
  registry->Bind("AssignAddVariableOp", kCpu, kNumericTypes, AssignUpdateKernel<true, true>);
  registry->Bind("AssignSubVariableOp", kCpu, kNumericTypes, AssignUpdateKernel<false, true>);
}

}  // namespace cpu
}  // namespace tfrun
