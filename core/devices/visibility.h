// From the GPUs CUDA shows to TensorFlow's logical GPUs: CUDA's
// CUDA_VISIBLE_DEVICES rule (emulated for simulated GPUs), then
// gpu_options.visible_device_list, virtual devices and memory limits, with
// TensorFlow's error texts (tensorflow/core/common_runtime/gpu/
// gpu_device.cc, tsl/framework/device_id_utils.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/devices/gpu_platform.h"

namespace tfrun {

// Indices into `all` that CUDA_VISIBLE_DEVICES=`value` leaves visible, in
// its order: indices or GPU-<uuid> prefixes; an invalid entry ends the list
// (so a leading -1 hides everything); a repeated device empties it. Unset
// (nullopt) shows all.
std::vector<int> CudaVisibleDevices(const std::optional<std::string>& value,
                                    const std::vector<PhysicalGpu>& all);

struct GpuOptions {
  std::string visible_device_list;                   // "" = all, in order
  std::vector<std::vector<double>> virtual_devices;  // MB per logical GPU
  double per_process_gpu_memory_fraction = 0;
  bool allow_growth = false;
  // ConfigProto.device_count: CPU devices, and at most this many GPUs
  // (-1: every visible one).
  int cpu_devices = 1;
  int max_gpus = -1;
  // The --compat era's default for the XLA devices (device_types.h).
  bool xla_devices_by_default = false;
  // TensorFloat-32 for float32 MatMuls and convolutions (config
  // tensor_float_32, --tf32): TensorFlow's default is on.
  bool tf32 = true;
};

struct LogicalGpu {
  int tf_id = 0;            // GPU:<tf_id>
  int cuda_ordinal = 0;     // index among the CUDA-visible GPUs
  PhysicalGpu physical;
  // kLimitOnFirstUse when the limit is TensorFlow's default and the free
  // memory it comes from was not measured: the allocator applies
  // DefaultMemoryLimit when it first allocates.
  int64_t memory_limit_bytes = 0;
  bool allow_growth = false;
  // GpuOptions.tf32 where the GPU has tensor cores for it (compute
  // capability 8 and later); its backend reads it when it is made.
  bool tf32 = false;
  static constexpr int64_t kLimitOnFirstUse = -1;
};

// TensorFlow's default reserve for the system (MinSystemMemory).
int64_t MinSystemMemory(int64_t available_bytes, int cc_major);

// The limit without a memory fraction or virtual devices: free memory less
// MinSystemMemory (SingleVirtualDeviceMemoryLimit).
int64_t DefaultMemoryLimit(int64_t free_bytes, int cc_major);

// Fails with InvalidArgumentError / UnknownError texts (exit 3).
StatusOr<std::vector<LogicalGpu>> MakeLogicalGpus(const std::vector<PhysicalGpu>& visible,
                                                  const GpuOptions& options);

}  // namespace tfrun
