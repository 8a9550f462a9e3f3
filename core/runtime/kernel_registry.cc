#include "core/runtime/kernel_registry.h"

#include <fmt/format.h>

namespace tfrun {

Status ConstKernel(KernelContext& c) {
  if (c.node.value.allocator() == c.allocator) {
    c.output = c.node.value;
    return Status::Ok();
  }
  Tensor& uploaded = (*c.device_constants)[c.node.id];
  if (!uploaded.is_valid()) {
    TFRUN_ASSIGN_OR_RETURN(uploaded, c.node.value.CopyTo(c.allocator, c.device_name));
  }
  c.output = uploaded;
  return Status::Ok();
}

Status PlaceholderKernel(KernelContext& c) {
  const bool shaped = !c.node.unknown_rank && !c.node.shape.empty();  // expected_shape_.dims() > 0
  return c.Fail(fmt::format("You must feed a value for placeholder tensor '{}' with dtype {}{}", c.node.name,
                            Info(c.node.dtype).tf_name,
                            shaped ? " and shape " + ShapeDebugString(c.node.shape) : ""));
}

Status IdentityKernel(KernelContext& c) {
  c.output = c.inputs[0];
  return Status::Ok();
}

Status NoOpKernel(KernelContext&) { return Status::Ok(); }

Status VariableKernel(KernelContext& c) {
  auto it = c.variables->find(c.node.name);
  if (it != c.variables->end()) c.output = it->second;
  return Status::Ok();
}

Status AssignKernel(KernelContext& c) {
  (*c.variables)[c.node.variable] = c.inputs[1];
  c.output = c.inputs[1];
  return Status::Ok();
}

void BindHandleKernels(KernelRegistry* registry, std::string_view device_type, DTypeSet dtypes) {
  registry->Bind("Const", device_type, dtypes, ConstKernel);
  registry->Bind("Identity", device_type, dtypes, IdentityKernel);
  registry->Bind("NoOp", device_type, dtypes, NoOpKernel);
  registry->Bind("VariableV2", device_type, dtypes, VariableKernel);
  registry->Bind("Assign", device_type, dtypes, AssignKernel);
  registry->Bind("Placeholder", device_type, dtypes, PlaceholderKernel);
}

bool QueuesDeviceWork(const Node& node) {
  return node.op != "Identity" && node.op != "NoOp" && node.op != "VariableV2" && node.op != "Placeholder";
}

}  // namespace tfrun
