// The real GPUs, through the CUDA runtime (statically linked; the driver is
// loaded lazily, so a machine without one simply has no GPUs). CUDA applies
// CUDA_VISIBLE_DEVICES itself.
#pragma once

#include <memory>

#include "core/gpu_platform.h"

namespace tfrun {

std::unique_ptr<GpuPlatform> CudaPlatform();

}  // namespace tfrun
