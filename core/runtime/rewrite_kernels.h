// Kernels of the ops TensorFlow's passes before placement write in place
// of others (core/passes): the accumulator of AccumulateNV2RemovePass
// (TemporaryVariable, then Assign and AssignAdd through its reference,
// then DestroyTemporaryVariable, which hands the sum on and drops the
// variable) and ParallelConcatRemovePass's buffer (_ParallelConcatStart,
// one _ParallelConcatUpdate per input writing its rows in place).
#pragma once

#include <string_view>

#include "core/runtime/kernel_registry.h"

namespace tfrun {

Status TemporaryVariableKernel(KernelContext& context);
Status DestroyTemporaryVariableKernel(KernelContext& context);
Status ParallelConcatStartKernel(KernelContext& context);
Status ParallelConcatUpdateKernel(KernelContext& context);

// Binds them for `device_type`: the two variable kernels everywhere (they
// allocate and pass references), the concat pair where memory is the
// host's (CPU; simulated GPUs run CPU kernels).
void BindRewriteKernels(KernelRegistry* registry, std::string_view device_type, DTypeSet dtypes);

}  // namespace tfrun
