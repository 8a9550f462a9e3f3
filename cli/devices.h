// Builds the run's devices from the command line, the graph's config and
// the environment: the GPU source (real CUDA or --devices topology),
// CUDA_VISIBLE_DEVICES, visible_device_list, virtual devices and memory
// options, as TensorFlow resolves them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/device_set.h"
#include "core/gpu_platform.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/visibility.h"

namespace tfrun {

struct DeviceFlags {
  std::string topology_path;                   // --devices
  std::optional<std::string> visible_devices;  // --visible-devices
  std::string virtual_devices;                 // --virtual-devices "1024,1024;2048"
  std::optional<double> memory_fraction;       // --per-process-gpu-memory-fraction
  bool allow_growth = false;                   // --allow-growth
};

struct Devices {
  std::vector<PhysicalGpu> physical;  // CUDA-visible GPUs
  std::vector<LogicalGpu> logical;
  bool simulated = false;
  DeviceSet set;
};

// Flags override the graph's config (nullptr: `tfrun devices`);
// TF_FORCE_GPU_ALLOW_GROWTH overrides allow_growth as TensorFlow does.
StatusOr<GpuOptions> ResolveGpuOptions(const DeviceFlags& flags, const GraphConfig* config);

StatusOr<Devices> BuildDevices(const DeviceFlags& flags, const GpuOptions& options);

// `tfrun devices`: physical and logical devices, like tf.config.list_*.
std::string DevicesListing(const Devices& devices);

}  // namespace tfrun
