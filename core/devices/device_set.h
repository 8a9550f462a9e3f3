// The devices a run can place nodes on (TensorFlow's DeviceSet): CPU:0 and
// the logical GPUs, each with its allocator.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/allocator.h"
#include "core/devices/device_queue.h"
#include "core/devices/visibility.h"
#include "core/graph/device_name.h"

namespace tfrun {

struct Device {
  std::string name;  // "/job:localhost/replica:0/task:0/device:GPU:0"
  DeviceSpec spec;
  std::string type;  // a registered type (device_types.h): kCpu, kGpu, kXlaCpu, kXlaGpu
  int id = 0;
  Allocator* allocator = nullptr;

  // A cluster's task (rank) the device belongs to; remote devices are
  // another process's: placed on, never run here (no allocator).
  int task = 0;
  bool remote = false;

  // GPUs: what the "Device mapping:" line says about the physical device.
  int cuda_ordinal = -1;  // after CUDA_VISIBLE_DEVICES
  std::string gpu_name;
  std::string pci_bus_id;
  std::string compute_capability;  // "8.0"
  int64_t memory_limit_bytes = 0;
  bool allow_growth = false;
  bool simulated = false;          // kernels run on the host
  // Backend state the device's kernels use (a CUDA stream and cuBLAS
  // handle); opaque to core, null for CPU:0 and simulated GPUs.
  std::shared_ptr<void> context;
  // Set when the device's kernels run asynchronously (a real GPU's stream).
  std::shared_ptr<DeviceQueue> queue;

  // "/job:localhost/replica:0/task:0/device:TYPE:ID" using `allocator`.
  static Device Local(const std::string& type, int id, Allocator* allocator);

  // Names it as task `index` of `job` (cluster rank `rank`).
  void MoveToTask(const std::string& job, int index, int rank);

  // TensorFlow's device type priority (device_types.h).
  int priority() const;
};

class DeviceSet;

// The one candidate filter, for the graph placer and eager's SelectDevice
// alike: of the devices in `order` (InPlacementOrder), those that match
// `spec` and whose type `supports(type)` (a kernel for the node, or for
// every member of its colocation group), in that order.
template <typename Supports>
std::vector<int> CandidateDevices(const DeviceSet& devices, const std::vector<int>& order, const DeviceSpec& spec,
                                  Supports supports);

class DeviceSet {
 public:
  // CPU:0 ... CPU:cpus-1 (ConfigProto.device_count), sharing host memory.
  static DeviceSet CpuOnly(int cpus = 1);

  // CPU:0 and one GPU device per logical GPU. Simulated GPUs get a host
  // allocator capped at their memory limit and named as TensorFlow names
  // the GPU's (GPU_0_bfc), so OOM behaves as on a real GPU.
  static DeviceSet WithGpus(const std::vector<LogicalGpu>& gpus, bool simulated, int cpus = 1);

  // A real GPU's allocator and kernel context, from its backend.
  struct GpuBackendParts {
    std::unique_ptr<Allocator> allocator;
    std::shared_ptr<void> context;
    std::shared_ptr<DeviceQueue> queue;
  };
  using GpuBackendFactory = GpuBackendParts (*)(const LogicalGpu& gpu);
  // As above, with each GPU's parts made by `factory`.
  static DeviceSet WithGpus(const std::vector<LogicalGpu>& gpus, GpuBackendFactory factory, int cpus = 1);

  void Add(Device device, std::unique_ptr<Allocator> allocator = nullptr);
  // TF_XLA_FLAGS=--tf_xla_enable_xla_devices: XLA_CPU:0 on the host's
  // memory and XLA_GPU:P for each CUDA ordinal P in use, on its GPU's
  // (allocator, context and queue). (TensorFlow also makes XLA_GPUs for
  // GPUs that ConfigProto.device_count leaves out; tfrun does not.)
  void AddXlaDevices();
  // Names every device as task `index` of `job` (rank `rank`) instead of
  // /job:localhost/replica:0/task:0.
  void MoveToTask(const std::string& job, int index, int rank);
  // Orders the devices by task, keeping each task's own order.
  void SortByTask();
  const std::vector<Device>& devices() const { return devices_; }
  int size() const { return static_cast<int>(devices_.size()); }
  const Device& operator[](int i) const { return devices_[i]; }
  bool HasGpu() const;
  // Whether XLA_CPU or XLA_GPU devices are in the set (device_types.h).
  bool HasXlaDevices() const;
  // Device indices in TensorFlow's candidate order: type priority, then
  // the master task's devices before other tasks' (DeviceSet's sort puts
  // local devices first), then the name as a string (so "GPU:10" before
  // "GPU:2"). The placer and eager's SelectDevice both pick the first
  // that fits.
  std::vector<int> InPlacementOrder() const;
  // A cluster run: the task whose process places the graph (the master).
  void set_master_task(int task) { master_task_ = task; }

 private:
  std::vector<Device> devices_;
  std::vector<std::unique_ptr<Allocator>> owned_;
  int master_task_ = 0;
};

template <typename Supports>
std::vector<int> CandidateDevices(const DeviceSet& devices, const std::vector<int>& order, const DeviceSpec& spec,
                                  Supports supports) {
  std::vector<int> out;
  for (int d : order) {
    if (spec.Matches(devices[d].spec) && supports(devices[d].type)) out.push_back(d);
  }
  return out;
}

}  // namespace tfrun
