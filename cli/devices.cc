#include "cli/devices.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>

#include "cli/report.h"
#include "core/base/device_types.h"
#include "core/devices/simulated_platform.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_platform.h"

namespace tfrun {
namespace {

// "1024,1024;2048": one list of MB per visible GPU.
StatusOr<std::vector<std::vector<double>>> ParseVirtualDevices(const std::string& text) {
  std::vector<std::vector<double>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t semi = text.find(';', start);
    std::string gpu = text.substr(start, semi == std::string::npos ? std::string::npos : semi - start);
    std::vector<double> limits;
    size_t p = 0;
    while (p <= gpu.size()) {
      size_t comma = gpu.find(',', p);
      std::string mb = gpu.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
      char* end = nullptr;
      double v = std::strtod(mb.c_str(), &end);
      if (mb.empty() || *end != '\0' || !(v > 0) || v > 1e9) {
        return BadInput(fmt::format("--virtual-devices {}: '{}' is not a memory limit in MB (e.g. 1024,1024;2048)",
                                    text, mb));
      }
      limits.push_back(v);
      if (comma == std::string::npos) break;
      p = comma + 1;
    }
    out.push_back(limits);
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return out;
}

std::string MegaBytes(int64_t bytes) { return fmt::format("{} MB", bytes >> 20); }

}  // namespace

StatusOr<GpuOptions> ResolveGpuOptions(const DeviceFlags& flags, const GraphConfig* config) {
  GpuOptions options;
  if (config != nullptr) {
    options.visible_device_list = config->visible_device_list;
    options.virtual_devices = config->virtual_devices;
    options.per_process_gpu_memory_fraction = config->per_process_gpu_memory_fraction;
    options.allow_growth = config->allow_growth;
    if (config->cpu_device_count >= 0) options.cpu_devices = config->cpu_device_count;
    if (config->gpu_device_count >= 0) options.max_gpus = config->gpu_device_count;
    options.tf32 = config->tensor_float_32;
  }
  if (!flags.tf32.empty()) options.tf32 = flags.tf32 == "on";
  if (flags.cpu_device_count) options.cpu_devices = *flags.cpu_device_count;
  if (flags.gpu_device_count) options.max_gpus = *flags.gpu_device_count;
  if (flags.visible_devices) options.visible_device_list = *flags.visible_devices;
  if (!flags.virtual_devices.empty()) {
    TFRUN_ASSIGN_OR_RETURN(options.virtual_devices, ParseVirtualDevices(flags.virtual_devices));
  }
  if (flags.memory_fraction) options.per_process_gpu_memory_fraction = *flags.memory_fraction;
  options.allow_growth = options.allow_growth || flags.allow_growth;
  if (const char* force = std::getenv("TF_FORCE_GPU_ALLOW_GROWTH")) {
    if (std::strcmp(force, "true") == 0) {
      options.allow_growth = true;
    } else if (std::strcmp(force, "false") == 0) {
      options.allow_growth = false;
    } else {
      spdlog::warn(
          "The TF_FORCE_GPU_ALLOW_GROWTH environment variable is set but could not be parsed: \"{}\". Valid "
          "values are \"true\" or \"false\". Using original config value of allow_growth: {}.",
          force, options.allow_growth ? 1 : 0);
    }
  }
  return options;
}

GpuInventory InventoryForRun(const Graph& graph, const DeviceFlags& flags, const GpuOptions& options,
                             bool lists_devices) {
  const bool gpu_options_set = !options.visible_device_list.empty() || !options.virtual_devices.empty() ||
                               options.per_process_gpu_memory_fraction > 0;
  if (lists_devices || gpu_options_set || !flags.topology_path.empty()) return GpuInventory::kDevices;
  const DeviceSpec cpu0 = DeviceSpec::Local(std::string(kCpu), 0);
  for (const Node& node : graph.nodes) {
    if (node.requested_device.type != kCpu || !node.requested_device.Matches(cpu0)) return GpuInventory::kDevices;
  }
  return GpuInventory::kNone;
}

StatusOr<Devices> BuildDevices(const DeviceFlags& flags, const GpuOptions& options, GpuInventory inventory,
                               const std::optional<std::pair<std::string, int>>& task) {
  if (inventory == GpuInventory::kNone) {
    Devices devices;
    devices.set = DeviceSet::CpuOnly(options.cpu_devices);
    if (XlaDevicesEnabled(options.xla_devices_by_default)) devices.set.AddXlaDevices();
    return devices;
  }
  std::unique_ptr<GpuPlatform> platform;
  if (!flags.topology_path.empty()) {
    const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
    TFRUN_ASSIGN_OR_RETURN(platform, LoadSimulatedPlatform(flags.topology_path,
                                                           env ? std::optional<std::string>(env) : std::nullopt, task));
  } else {
    platform = CudaPlatform();  // CUDA applies CUDA_VISIBLE_DEVICES itself
  }
  Devices devices;
  devices.simulated = platform->simulated();
  TFRUN_ASSIGN_OR_RETURN(devices.physical, platform->VisibleGpus(inventory == GpuInventory::kDevicesAndMemory));
  TFRUN_ASSIGN_OR_RETURN(devices.logical, MakeLogicalGpus(devices.physical, options));
  if (devices.simulated || devices.logical.empty()) {
    devices.set = DeviceSet::WithGpus(devices.logical, devices.simulated, options.cpu_devices);
  } else {
    devices.set = DeviceSet::WithGpus(devices.logical, &MakeCudaBackend, options.cpu_devices);
  }
  if (XlaDevicesEnabled(options.xla_devices_by_default)) devices.set.AddXlaDevices();
  return devices;
}

// The set's devices of XLA type `type`, as list_*_devices names them
// (`prefix` "/physical_device:" or "/device:"), each written by
// `write(name, type)`. TensorFlow 2.21 lists XLA_CPU:0 right after CPU:0,
// physical and logical alike; XLA_GPUs come after the GPUs here (not
// checked: no GPU here).
template <typename Write>
void ForXlaDevices(const Devices& devices, std::string_view prefix, std::string_view type, Write write) {
  for (const Device& d : devices.set.devices()) {
    if (d.type == type) write(fmt::format("{}{}:{}", prefix, type, d.spec.id.value_or(0)), type);
  }
}

std::string DevicesListing(const Devices& devices) {
  std::string out = "Physical devices:\n";
  auto physical = [&](const std::string& name, std::string_view type) {
    out += fmt::format("  PhysicalDevice(name='{}', device_type='{}')\n", name, type);
  };
  auto logical = [&](const std::string& name, std::string_view type) {
    out += fmt::format("  LogicalDevice(name='{}', device_type='{}')\n", name, type);
  };
  out += "  PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')\n";
  ForXlaDevices(devices, "/physical_device:", kXlaCpu, physical);
  for (size_t i = 0; i < devices.physical.size(); ++i) {
    const PhysicalGpu& g = devices.physical[i];
    out += fmt::format(
        "  PhysicalDevice(name='/physical_device:GPU:{}', device_type='GPU')  # {}, pci bus id: {}, "
        "compute capability: {}, {}{}\n",
        i, g.name, g.pci_bus_id, g.ComputeCapability(), MegaBytes(g.total_bytes), devices.simulated ? ", simulated" : "");
  }
  ForXlaDevices(devices, "/physical_device:", kXlaGpu, physical);
  out += "Logical devices:\n";
  for (const Device& d : devices.set.devices()) {  // CPU:0, and more under device_count
    if (d.type == kCpu) out += fmt::format("  LogicalDevice(name='/device:CPU:{}', device_type='CPU')\n", d.id);
  }
  ForXlaDevices(devices, "/device:", kXlaCpu, logical);
  for (const LogicalGpu& l : devices.logical) {
    out += fmt::format("  LogicalDevice(name='/device:GPU:{}', device_type='GPU')  # -> device: {}, memory limit: {}{}\n",
                       l.tf_id, l.cuda_ordinal, MegaBytes(l.memory_limit_bytes), l.allow_growth ? ", allow_growth" : "");
  }
  ForXlaDevices(devices, "/device:", kXlaGpu, logical);
  // The TF GPU guide's print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs").
  out += fmt::format("{} Physical GPUs, {} Logical GPUs\n", devices.physical.size(), devices.logical.size());
  return out;
}

std::string DevicesJson(const Devices& devices, const std::string& version) {
  std::vector<std::string> physical = {"{\"name\":\"/physical_device:CPU:0\",\"device_type\":\"CPU\"}"};
  // A bare entry: an XLA device has no more to say.
  auto entry_in = [](std::vector<std::string>* list) {
    return [list](const std::string& name, std::string_view type) {
      list->push_back(fmt::format("{{\"name\":\"{}\",\"device_type\":\"{}\"}}", name, type));
    };
  };
  ForXlaDevices(devices, "/physical_device:", kXlaCpu, entry_in(&physical));
  for (size_t i = 0; i < devices.physical.size(); ++i) {
    const PhysicalGpu& g = devices.physical[i];
    physical.push_back(fmt::format(
        "{{\"name\":\"/physical_device:GPU:{}\",\"device_type\":\"GPU\",\"gpu_name\":{},\"pci_bus_id\":{},"
        "\"compute_capability\":\"{}\",\"memory_bytes\":{},\"simulated\":{}}}",
        i, Quote(g.name), Quote(g.pci_bus_id), g.ComputeCapability(), g.total_bytes, devices.simulated ? "true" : "false"));
  }
  ForXlaDevices(devices, "/physical_device:", kXlaGpu, entry_in(&physical));
  std::vector<std::string> logical;
  for (const Device& d : devices.set.devices()) {
    if (d.type == kCpu) logical.push_back(fmt::format("{{\"name\":\"/device:CPU:{}\",\"device_type\":\"CPU\"}}", d.id));
  }
  ForXlaDevices(devices, "/device:", kXlaCpu, entry_in(&logical));
  for (const LogicalGpu& l : devices.logical) {
    logical.push_back(fmt::format("{{\"name\":\"/device:GPU:{}\",\"device_type\":\"GPU\",\"cuda_ordinal\":{},"
                                  "\"memory_limit_bytes\":{},\"allow_growth\":{}}}",
                                  l.tf_id, l.cuda_ordinal, l.memory_limit_bytes >= 0 ? std::to_string(l.memory_limit_bytes) : "null",
                                  l.allow_growth ? "true" : "false"));
  }
  ForXlaDevices(devices, "/device:", kXlaGpu, entry_in(&logical));
  return fmt::format("{{\"schema\":{},\"version\":{},\"physical_devices\":[{}],\"logical_devices\":[{}]}}\n",
                     kReportSchema, Quote(version), fmt::join(physical, ","), fmt::join(logical, ","));
}

}  // namespace tfrun
