// GPUs described by a topology file (--devices; graph-format.md,
// "Simulated device topologies"). CUDA_VISIBLE_DEVICES is applied here as
// CUDA would apply it to real GPUs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/devices/gpu_platform.h"

namespace tfrun {

// Reads and validates the file (exit 2 on errors, with file:line:column).
// `task` (job, index): a cluster task, which gets its entry under `tasks:`
// when the file has one, else the top-level `gpus`.
StatusOr<std::unique_ptr<GpuPlatform>> LoadSimulatedPlatform(
    const std::string& path, const std::optional<std::string>& cuda_visible_devices,
    const std::optional<std::pair<std::string, int>>& task = std::nullopt);

}  // namespace tfrun
