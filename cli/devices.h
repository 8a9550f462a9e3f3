// Builds the run's devices from the command line, the graph's config and
// the environment: the GPU source (real CUDA or --devices topology),
// CUDA_VISIBLE_DEVICES, visible_device_list, virtual devices and memory
// options, as TensorFlow resolves them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/devices/gpu_platform.h"
#include "core/devices/visibility.h"
#include "core/graph/graph.h"

namespace tfrun {

struct DeviceFlags {
  std::string topology_path;                   // --devices
  std::optional<std::string> visible_devices;  // --visible-devices
  std::string virtual_devices;                 // --virtual-devices "1024,1024;2048"
  std::optional<double> memory_fraction;       // --per-process-gpu-memory-fraction
  bool allow_growth = false;                   // --allow-growth
  std::optional<int> cpu_device_count;         // --device-count CPU=N
  std::optional<int> gpu_device_count;         // --device-count GPU=N
  std::string tf32;                            // --tf32 on|off; "": the graph's tensor_float_32
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

// How much of the GPUs a command needs to know. kNone gives CPU:0 alone
// without touching CUDA; kDevices enumerates GPUs (CUDA's driver init) but
// leaves free memory to each GPU's first allocation; kDevicesAndMemory also
// measures free memory, which makes a CUDA context per GPU.
enum class GpuInventory { kNone, kDevices, kDevicesAndMemory };

// `task`: the cluster task this process runs, for a topology's `tasks:`.
StatusOr<Devices> BuildDevices(const DeviceFlags& flags, const GpuOptions& options, GpuInventory inventory,
                               const std::optional<std::pair<std::string, int>>& task = std::nullopt);

// kNone when nothing about the GPUs can change a run of `graph`: no
// topology file, no option whose check depends on the GPUs present, nothing
// that lists devices (`lists_devices`: the mapping, --json, --dot), and
// every node asks for CPU:0, which no placement rule moves.
GpuInventory InventoryForRun(const Graph& graph, const DeviceFlags& flags, const GpuOptions& options,
                             bool lists_devices);

// `tfrun devices`: physical and logical devices, like tf.config.list_*.
std::string DevicesListing(const Devices& devices);
// The same as JSON (`tfrun devices --json`, docs/json-report.md): schema,
// version and both lists, each GPU with what the listing's comment says.
std::string DevicesJson(const Devices& devices, const std::string& version);

}  // namespace tfrun
