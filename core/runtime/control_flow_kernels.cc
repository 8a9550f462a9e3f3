#include "core/runtime/control_flow_kernels.h"

#include <fmt/format.h>

namespace tfrun {

Status SwitchKernel(KernelContext& c) {
  const Tensor& pred = c.inputs[1];
  // SwitchOp::Compute's check, in its words.
  if (pred.rank() != 0) {
    return c.Fail(fmt::format("The second input must be a scalar, but it has shape {}",
                              ShapeDebugString(pred.shape())));
  }
  c.outputs.assign(2, Tensor());
  c.outputs[pred.GetAsInt64(0) != 0 ? 1 : 0] = c.inputs[0];
  return Status::Ok();
}

// _SwitchN (a lowered Case's): the data to the output its index names, the
// last output for an index out of range (SwitchNOp); the others dead.
Status SwitchNKernel(KernelContext& c) {
  const Tensor& index = c.inputs[1];
  if (index.rank() != 0) {
    return c.Fail(fmt::format("The second input must be a scalar, but it has shape {}",
                              ShapeDebugString(index.shape())));
  }
  const int64_t outs = c.node.num_outputs;
  int64_t chosen = index.GetAsInt64(0);
  if (chosen < 0 || chosen >= outs) chosen = outs - 1;
  c.outputs.assign(outs, Tensor());
  c.outputs[chosen] = c.inputs[0];
  return Status::Ok();
}

Status MergeKernel(KernelContext& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].is_valid()) continue;
    c.outputs.clear();
    c.outputs.push_back(c.inputs[i]);
    TFRUN_ASSIGN_OR_RETURN(Tensor index, Tensor::AllocateHost(DType::kInt32, Shape{}));
    index.data<int32_t>()[0] = static_cast<int32_t>(i);
    c.outputs.push_back(std::move(index));
    return Status::Ok();
  }
  return RuntimeError("InternalError: Merge ran with no live input");
}

Status ForwardKernel(KernelContext& c) {
  c.output = c.inputs[0];
  return Status::Ok();
}

namespace {

StatusOr<Stack*> FindStack(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const std::string handle, ResourceKey(c, 0));
  auto it = c.stacks->stacks.find(handle);
  // GetStack's words for a handle no StackV2 of this run made.
  if (it == c.stacks->stacks.end()) {
    return RuntimeError(fmt::format("NotFoundError: Resource {} does not exist.", handle));
  }
  return &it->second;
}

}  // namespace

Status StackKernel(KernelContext& c) {
  const Tensor& max_size = c.inputs[0];
  if (max_size.rank() != 0) {
    return c.Fail(fmt::format("max_size must be a scalar, but it has shape {}", ShapeDebugString(max_size.shape())));
  }
  Stack stack;
  stack.name = c.StringAttr("stack_name");
  stack.max_size = max_size.GetAsInt64(0);
  const std::string handle = fmt::format("{}/_{}", stack.name, c.stacks->next_id++);
  c.stacks->stacks[handle] = std::move(stack);
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {handle}));
  return Status::Ok();
}

Status StackPushKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(Stack * stack, FindStack(c));
  if (stack->max_size >= 0 && static_cast<int64_t>(stack->elements.size()) >= stack->max_size) {
    return c.Fail(fmt::format("Stack[{}] overflowed its max_size ({})", stack->name, stack->max_size));
  }
  // The stack keeps the value as it is now; the loop may reuse the buffer.
  TFRUN_ASSIGN_OR_RETURN(Tensor kept, c.inputs[1].CopyTo(c.inputs[1].allocator(), c.device_name));
  stack->elements.push_back(std::move(kept));
  c.output = c.inputs[1];
  return Status::Ok();
}

Status StackPopKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(Stack * stack, FindStack(c));
  if (stack->elements.empty()) return c.Fail(fmt::format("Stack[{}] is empty.", stack->name));
  c.output = std::move(stack->elements.back());
  stack->elements.pop_back();
  return Status::Ok();
}

Status StackCloseKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const std::string handle, ResourceKey(c, 0));
  c.stacks->stacks.erase(handle);
  return Status::Ok();
}

void BindControlFlowKernels(KernelRegistry* registry, std::string_view device_type, DTypeSet dtypes) {
  for (const char* op : {"Switch", "RefSwitch"}) registry->Bind(op, device_type, dtypes, SwitchKernel);
  registry->Bind("_SwitchN", device_type, dtypes, SwitchNKernel);
  for (const char* op : {"Merge", "RefMerge"}) registry->Bind(op, device_type, dtypes, MergeKernel);
  for (const char* op : {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"}) {
    registry->Bind(op, device_type, dtypes, ForwardKernel);
  }
  registry->Bind("LoopCond", device_type, DTypeSet{DType::kBool}, ForwardKernel);
  registry->Bind("ControlTrigger", device_type, dtypes, NoOpKernel);
  // StackV2's node dtype is tfrun's default (its output is a resource).
  registry->Bind("StackV2", device_type, kEveryDType, StackKernel);
  registry->Bind("StackPushV2", device_type, dtypes, StackPushKernel);
  registry->Bind("StackPopV2", device_type, dtypes, StackPopKernel);
  registry->Bind("StackCloseV2", device_type, kEveryDType, StackCloseKernel);
}

}  // namespace tfrun
