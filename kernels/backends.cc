#include "kernels/backends.h"

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cuda/cuda_backend.h"

namespace tfrun {

void BindAllBackendKernels(KernelRegistry* registry) {
  RegisterCpuKernels(registry);
  RegisterCudaKernels(registry);
}

}  // namespace tfrun
