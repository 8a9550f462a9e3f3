// Every backend's kernels, bound in one place: the run and `tfrun ops`
// must agree on what tfrun can execute. A new backend adds its line here.
#pragma once

#include "core/runtime/kernel_registry.h"

namespace tfrun {

// Binds the CPU kernels and the CUDA ones (binding only: CUDA and cuBLAS
// load on first GPU use, so this costs nothing on a machine without GPUs).
void BindAllBackendKernels(KernelRegistry* registry);

}  // namespace tfrun
