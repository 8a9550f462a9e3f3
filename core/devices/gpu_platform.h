// Where physical GPUs come from: the real CUDA platform (kernels/cuda/
// cuda_platform.h) or a simulated topology file (simulated_platform.h).
// Both report the GPUs CUDA would show this process, after
// CUDA_VISIBLE_DEVICES, in CUDA ordinal order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tfrun {

struct PhysicalGpu {
  std::string name;                // "Tesla K20m"
  std::string pci_bus_id;          // "0000:02:00.0"
  int cc_major = 0;                // compute capability
  int cc_minor = 0;
  int64_t total_bytes = 0;
  // What TensorFlow sizes its pool from; kUnmeasured until someone asks
  // (measuring creates a CUDA context, which a CPU-only run never needs).
  int64_t free_bytes = 0;
  static constexpr int64_t kUnmeasured = -1;
  std::string uuid;                // "GPU-..." (CUDA_VISIBLE_DEVICES may name it)

  std::string ComputeCapability() const {
    return std::to_string(cc_major) + "." + std::to_string(cc_minor);
  }
};

class GpuPlatform {
 public:
  virtual ~GpuPlatform() = default;
  // The GPUs visible to this process, CUDA ordinal order. A machine without
  // a driver has none; that is not an error. Free memory is measured only
  // when `measure_free_memory` is set; otherwise it may be kUnmeasured.
  virtual StatusOr<std::vector<PhysicalGpu>> VisibleGpus(bool measure_free_memory) = 0;
  // Simulated GPUs run their kernels on the host.
  virtual bool simulated() const = 0;
};

}  // namespace tfrun
