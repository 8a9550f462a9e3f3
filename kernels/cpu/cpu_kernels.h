// The CPU backend: binds an Eigen implementation for every (op, CPU) entry
// of the kernel table.
#pragma once

#include "core/runtime/kernel_registry.h"

namespace tfrun {

void RegisterCpuKernels(KernelRegistry* registry);

// Threads for intra-op parallelism (0: one per core). Call before running.
void SetCpuThreads(int threads);

// `t` (host memory) converted to `dtype` as the Cast kernel converts, as
// NumPy's asarray(t, dtype) does for a fed array. Not for strings.
StatusOr<Tensor> CastOnHost(const Tensor& t, DType dtype);

}  // namespace tfrun
