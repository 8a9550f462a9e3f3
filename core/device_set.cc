#include "core/device_set.h"

namespace tfrun {

DeviceSet DeviceSet::CpuOnly() {
  DeviceSet set;
  Device cpu;
  cpu.spec = DeviceSpec::Local("CPU", 0);
  cpu.name = cpu.spec.ToString();
  cpu.type = "CPU";
  cpu.id = 0;
  cpu.allocator = CpuAllocator();
  set.Add(std::move(cpu));
  return set;
}

void DeviceSet::Add(Device device, std::unique_ptr<Allocator> allocator) {
  if (allocator) {
    device.allocator = allocator.get();
    owned_.push_back(std::move(allocator));
  }
  devices_.push_back(std::move(device));
}

bool DeviceSet::HasGpu() const {
  for (const Device& d : devices_) {
    if (d.type == "GPU") return true;
  }
  return false;
}

}  // namespace tfrun
