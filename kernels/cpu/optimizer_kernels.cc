// The optimizers' update ops (training_ops.cc) and the variable updates
// AssignAdd/AssignSub and Scatter{Add,Sub,Update}, for reference variables (the variable and its slots
// are ref inputs, updated in place, as TensorFlow's refs alias) and
// resource variables (handles; TensorFlow's copy-on-write: a variable
// whose buffer a read still holds is copied before the update, so the read
// keeps the value it read). The update formulas are the CPU functors'
// Eigen expressions, term for term.
#include <cmath>
#include <vector>

#include "core/runtime/variable_updates.h"
#include "kernels/cpu/cpu_eigen.h"
#include "kernels/cpu/tf_float_math.h"

namespace tfrun {
namespace cpu {
namespace {

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
    if constexpr (std::is_same_v<T, float>) {
      // accum.rsqrt() as TensorFlow's Eigen computes it (tf_float_math.h).
      std::vector<float> rsqrt(n);
      ApplyTfFloatFunction(TfFloatFunction::kRsqrt, accum.data(), rsqrt.data(), n);
      Assign(var, var - grad * scalar(2) * ConstFlat<float>(rsqrt.data(), n), n);
    } else {
      Assign(var, var - grad * scalar(2) * accum.unaryExpr(ExactRsqrt()), n);
    }
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
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, PrepareUpdate(c, spec, Resource));
  TFRUN_RETURN_IF_ERROR(ForDType<IsFloat>(c.inputs[spec.grad].dtype(), [&](auto tag) -> Status {
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
  TFRUN_ASSIGN_OR_RETURN(Tensor var, PrepareAssignUpdate(c, Resource));
  const Tensor& value = c.inputs[1];
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

// CountUpTo(ref, limit) and ResourceCountUpTo(resource, limit)
// (count_up_to_op.cc): the variable's value before adding 1, or OutOfRange
// once it has reached `limit` (what ends string_input_producer's
// num_epochs). The resource form writes a new buffer, as TensorFlow's does,
// so a read that holds the old value keeps it.
template <bool Resource>
Status CountUpToKernel(KernelContext& c) {
  Tensor var;
  Tensor* stored = nullptr;
  if constexpr (Resource) {
    TFRUN_ASSIGN_OR_RETURN(stored, LookupResourceVariable(c, 0));
    if (stored->dtype() != c.node.dtype) {
      return c.Fail(fmt::format("Trying to read variable with wrong dtype. Expected {} got {}",
                                Info(c.node.dtype).tf_name, Info(stored->dtype()).tf_name));
    }
    if (stored->rank() != 0) return c.Fail("input is not a scalar: " + ShapeDebugString(stored->shape()));
    TFRUN_ASSIGN_OR_RETURN(var, stored->CopyTo(stored->allocator(), c.device_name));
  } else {
    var = c.inputs[0];
  }
  if (var.rank() != 0) return c.Fail("input is not a scalar: " + ShapeDebugString(var.shape()));
  const int64_t limit = c.IntAttr("limit");
  const int64_t before = var.GetAsInt64(0);
  if (before >= limit) {
    c.op_error = true;
    return RuntimeError(fmt::format("OutOfRangeError: Reached limit of {}", limit));
  }
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({}));
  if (var.dtype() == DType::kInt32) {
    c.output.data<int32_t>()[0] = static_cast<int32_t>(before);
    var.data<int32_t>()[0] = static_cast<int32_t>(before + 1);
  } else {
    c.output.data<int64_t>()[0] = before;
    var.data<int64_t>()[0] = before + 1;
  }
  if constexpr (Resource) *stored = std::move(var);
  return Status::Ok();
}

enum class Scatter { kAdd, kSub, kUpdate };

// ScatterAdd/Sub/Update (ref) and their Resource forms: each index's row of
// updates (or the scalar update) applied to that row of the variable, in
// the indices' order, stopping at the first index out of range with
// TensorFlow's error (the rows before it updated, as in TensorFlow).
template <Scatter Op, bool Resource>
Status ScatterKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(Tensor var, PrepareScatter(c, Resource));
  const Tensor& indices = c.inputs[1];
  const Tensor& updates = c.inputs[2];
  const int64_t n = indices.num_elements();
  const int64_t rows = var.shape()[0];
  const int64_t row_size = rows == 0 ? 0 : var.num_elements() / rows;
  TFRUN_RETURN_IF_ERROR(ForDType<IsNumber>(updates.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using A = Arith<T>;
    A* v = reinterpret_cast<A*>(var.data<T>());
    const A* u = reinterpret_cast<const A*>(updates.data<T>());
    const bool scalar = updates.rank() == 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t index =
          indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
      if (index < 0 || index >= rows) return ScatterIndexError(c, indices, i, rows);
      A* row = v + index * row_size;
      for (int64_t k = 0; k < row_size; ++k) {
        const A x = scalar ? u[0] : u[i * row_size + k];
        if constexpr (Op == Scatter::kAdd) row[k] = row[k] + x;
        if constexpr (Op == Scatter::kSub) row[k] = row[k] - x;
        if constexpr (Op == Scatter::kUpdate) row[k] = x;
      }
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
  registry->Bind("CountUpTo", kCpu, kIntTypes, CountUpToKernel<false>);
  registry->Bind("ResourceCountUpTo", kCpu, kIntTypes, CountUpToKernel<true>);
  registry->Bind("AssignSub", kCpu, kNumericTypes, AssignUpdateKernel<false, false>);
  registry->Bind("AssignAddVariableOp", kCpu, kNumericTypes, AssignUpdateKernel<true, true>);
  registry->Bind("AssignSubVariableOp", kCpu, kNumericTypes, AssignUpdateKernel<false, true>);
  registry->Bind("ScatterAdd", kCpu, kNumericTypes, ScatterKernel<Scatter::kAdd, false>);
  registry->Bind("ScatterSub", kCpu, kNumericTypes, ScatterKernel<Scatter::kSub, false>);
  registry->Bind("ScatterUpdate", kCpu, kNumericTypes, ScatterKernel<Scatter::kUpdate, false>);
  registry->Bind("ResourceScatterAdd", kCpu, kNumericTypes, ScatterKernel<Scatter::kAdd, true>);
  registry->Bind("ResourceScatterSub", kCpu, kNumericTypes, ScatterKernel<Scatter::kSub, true>);
  registry->Bind("ResourceScatterUpdate", kCpu, kNumericTypes, ScatterKernel<Scatter::kUpdate, true>);
}

}  // namespace cpu
}  // namespace tfrun
