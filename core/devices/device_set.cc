#include "core/devices/device_set.h"

#include "core/base/device_types.h"

#include <algorithm>

namespace tfrun {

Device Device::Local(const std::string& type, int id, Allocator* allocator) {
  Device d;
  d.spec = DeviceSpec::Local(type, id);
  d.name = d.spec.ToString();
  d.type = type;
  d.id = id;
  d.allocator = allocator;
  return d;
}

int Device::priority() const {
  const DeviceTypeInfo* info = FindDeviceType(type);
  return info == nullptr ? 0 : info->priority;
}

void DeviceSet::AddXlaDevices() {
  const std::vector<Device> existing = devices_;
  Device cpu = Device::Local(std::string(kXlaCpu), 0, CpuAllocator());
  Add(cpu);
  // One XLA_GPU per physical GPU in use, named by its CUDA ordinal, in
  // ordinal order, on its first logical device's memory
  // (xla_gpu_device.cc: XLA_GPU:i for each i of visible_device_list, or
  // of all the GPUs CUDA shows; not one per virtual device).
  std::vector<const Device*> gpus;
  for (const Device& gpu : existing) {
    if (gpu.type != kGpu) continue;
    const bool seen = std::any_of(gpus.begin(), gpus.end(),
                                  [&](const Device* g) { return g->cuda_ordinal == gpu.cuda_ordinal; });
    if (!seen) gpus.push_back(&gpu);
  }
  std::stable_sort(gpus.begin(), gpus.end(),
                   [](const Device* a, const Device* b) { return a->cuda_ordinal < b->cuda_ordinal; });
  for (const Device* gpu : gpus) {
    Device xla = *gpu;
    xla.type = kXlaGpu;
    xla.spec.type = std::string(kXlaGpu);
    xla.spec.id = gpu->cuda_ordinal;
    xla.name = xla.spec.ToString();
    Add(xla);
  }
}

void Device::MoveToTask(const std::string& job, int index, int rank) {
  spec.job = job;
  spec.task = index;
  name = spec.ToString();
  task = rank;
}

DeviceSet DeviceSet::CpuOnly(int cpus) {
  DeviceSet set;
  for (int i = 0; i < std::max(cpus, 1); ++i) set.Add(Device::Local(std::string(kCpu), i, CpuAllocator()));
  return set;
}

namespace {

Device GpuDevice(const LogicalGpu& gpu, bool simulated) {
  Device d = Device::Local(std::string(kGpu), gpu.tf_id, nullptr);
  d.cuda_ordinal = gpu.cuda_ordinal;
  d.gpu_name = gpu.physical.name;
  d.pci_bus_id = gpu.physical.pci_bus_id;
  d.compute_capability = gpu.physical.ComputeCapability();
  d.memory_limit_bytes = gpu.memory_limit_bytes;
  d.allow_growth = gpu.allow_growth;
  d.simulated = simulated;
  return d;
}

}  // namespace

DeviceSet DeviceSet::WithGpus(const std::vector<LogicalGpu>& gpus, GpuBackendFactory factory, int cpus) {
  DeviceSet set = CpuOnly(cpus);
  for (const LogicalGpu& gpu : gpus) {
    GpuBackendParts parts = factory(gpu);
    Device d = GpuDevice(gpu, false);
    d.context = std::move(parts.context);
    d.queue = std::move(parts.queue);
    set.Add(std::move(d), std::move(parts.allocator));
  }
  return set;
}

DeviceSet DeviceSet::WithGpus(const std::vector<LogicalGpu>& gpus, bool simulated, int cpus) {
  DeviceSet set = CpuOnly(cpus);
  for (const LogicalGpu& gpu : gpus) {
    Device d = GpuDevice(gpu, simulated);
    auto allocator = std::make_unique<HostAllocator>("GPU_" + std::to_string(gpu.tf_id) + "_bfc",
                                                     static_cast<size_t>(gpu.memory_limit_bytes));
    set.Add(std::move(d), std::move(allocator));
  }
  return set;
}

void DeviceSet::Add(Device device, std::unique_ptr<Allocator> allocator) {
  if (allocator) {
    device.allocator = allocator.get();
    owned_.push_back(std::move(allocator));
  }
  devices_.push_back(std::move(device));
}

void DeviceSet::MoveToTask(const std::string& job, int index, int rank) {
  for (Device& d : devices_) d.MoveToTask(job, index, rank);
}

void DeviceSet::SortByTask() {
  std::stable_sort(devices_.begin(), devices_.end(), [](const Device& a, const Device& b) { return a.task < b.task; });
}

std::vector<int> DeviceSet::InPlacementOrder() const {
  std::vector<int> order;
  for (int i = 0; i < size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (devices_[a].priority() != devices_[b].priority()) return devices_[a].priority() > devices_[b].priority();
    const bool a_local = devices_[a].task == master_task_, b_local = devices_[b].task == master_task_;
    if (a_local != b_local) return a_local;
    return devices_[a].name < devices_[b].name;
  });
  return order;
}

bool DeviceSet::HasXlaDevices() const {
  return std::any_of(devices_.begin(), devices_.end(), [](const Device& d) {
    const DeviceTypeInfo* info = FindDeviceType(d.type);
    return info != nullptr && info->is_xla;
  });
}

bool DeviceSet::HasGpu() const {
  for (const Device& d : devices_) {
    if (d.type == kGpu) return true;
  }
  return false;
}

}  // namespace tfrun
