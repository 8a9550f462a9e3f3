// The real GPUs, through the CUDA runtime (statically linked; the driver is
// loaded lazily, so a machine without one simply has no GPUs). CUDA applies
// CUDA_VISIBLE_DEVICES itself.
#pragma once

#include <memory>

#include "core/devices/gpu_platform.h"

namespace tfrun {

// Free memory lists kUnmeasured unless asked for: measuring makes a CUDA
// context (hundreds of milliseconds and of megabytes), so a run leaves it
// to the GPU's allocator, on its first allocation.
std::unique_ptr<GpuPlatform> CudaPlatform();

// cudaMemGetInfo's free bytes on CUDA device `ordinal` (makes its context).
StatusOr<int64_t> CudaFreeBytes(int ordinal);

}  // namespace tfrun
