// Kernels of TensorFlow's v1 control flow (control_flow_ops.cc), the same
// on every device: they only forward tensor handles. What makes them
// control flow is the executor's propagator (frame_propagator.cc): it
// tags values with frames and iterations and propagates dead outputs.
//   Switch: its data to output 1 when `pred` is true, else to output 0;
//     the other output is dead (left unset here).
//   Merge: the first live input, and its index (int32) as output 1; the
//     propagator runs it once any input is live (dead inputs arrive unset).
//   Enter, Exit, NextIteration, LoopCond: their input; the propagator
//     moves the value into the child frame, the parent frame or the next
//     iteration.
//   ControlTrigger: nothing; never dead.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/kernel_registry.h"

namespace tfrun {

Status SwitchKernel(KernelContext& context);
Status MergeKernel(KernelContext& context);
Status ForwardKernel(KernelContext& context);

// The stacks a while loop's gradient keeps its forward values in
// (stack_ops.cc): StackV2 makes one per run under a new handle
// ("_stack_N" after its stack_name, as the step container names them),
// StackPushV2 pushes a copy of its input and forwards it, StackPopV2 pops,
// StackCloseV2 drops. They live for one run (TensorFlow's step container).
struct Stack {
  std::string name;  // the stack_name attr, for messages
  DType elem_type = DType::kFloat32;
  int64_t max_size = -1;  // < 0: unbounded
  std::vector<Tensor> elements;
};
struct StackStore {
  std::map<std::string, Stack> stacks;  // by handle
  int64_t next_id = 0;
};
Status StackKernel(KernelContext& context);
Status StackPushKernel(KernelContext& context);
Status StackPopKernel(KernelContext& context);
Status StackCloseKernel(KernelContext& context);

// Binds the control-flow kernels (and their Ref forms) for `device_type`.
void BindControlFlowKernels(KernelRegistry* registry, std::string_view device_type, DTypeSet dtypes);

}  // namespace tfrun
