// The CPU backend: binds an Eigen implementation for every (op, CPU) entry
// of the kernel table.
#pragma once

#include "core/runtime/kernel_registry.h"

namespace tfrun {

void RegisterCpuKernels(KernelRegistry* registry);

// Threads for intra-op parallelism (0: one per core). Call before running.
void SetCpuThreads(int threads);
// SetCpuThreads, then starts the pool, first checking that as many threads
// can exist at once: a thread the system refuses (a memory or process
// limit) is an error naming the count (exit 4), where Eigen's pool would
// throw while half built and hang joining the threads it had started.
Status StartCpuThreads(int threads);

// `t` (host memory) converted to `dtype` as the Cast kernel converts, as
// NumPy's asarray(t, dtype) does for a fed array. Not for strings.
StatusOr<Tensor> CastOnHost(const Tensor& t, DType dtype);

}  // namespace tfrun
