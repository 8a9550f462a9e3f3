#include "core/devices/visibility.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace tfrun {
namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

std::string TrimSpaces(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// absl::SimpleAtoi: optional whitespace and sign, then decimal digits.
std::optional<int64_t> SimpleAtoi(const std::string& text) {
  std::string s = TrimSpaces(text);
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (i == s.size() || s.size() - i > 12) return std::nullopt;
  for (size_t k = i; k < s.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return std::nullopt;
  }
  return std::stoll(s);
}

Status InvalidArgument(const std::string& message) {
  return PlacementError("InvalidArgumentError: " + message);
}
Status Unknown(const std::string& message) { return PlacementError("UnknownError: " + message); }

}  // namespace

std::vector<int> CudaVisibleDevices(const std::optional<std::string>& value,
                                    const std::vector<PhysicalGpu>& all) {
  std::vector<int> visible;
  if (!value) {
    for (int i = 0; i < static_cast<int>(all.size()); ++i) visible.push_back(i);
    return visible;
  }
  for (const std::string& raw : SplitCommas(*value)) {
    const std::string entry = TrimSpaces(raw);
    int index = -1;
    if (entry.rfind("GPU-", 0) == 0) {
      // A unique prefix of a device's UUID.
      for (int i = 0; i < static_cast<int>(all.size()); ++i) {
        if (!all[i].uuid.empty() && all[i].uuid.rfind(entry, 0) == 0) {
          if (index >= 0) {
            index = -2;  // ambiguous
            break;
          }
          index = i;
        }
      }
    } else if (!entry.empty() && std::all_of(entry.begin(), entry.end(), ::isdigit) && entry.size() < 10) {
      index = std::stoi(entry);
      if (index >= static_cast<int>(all.size())) index = -1;
    }
    if (index < 0) break;  // an invalid entry ends the list
    if (std::find(visible.begin(), visible.end(), index) != visible.end()) return {};
    visible.push_back(index);
  }
  return visible;
}

int64_t MinSystemMemory(int64_t available_bytes, int cc_major) {
  constexpr int64_t kMiB = 1 << 20;
  if (available_bytes < (int64_t{1} << 31)) return 225 * kMiB;
  if (cc_major <= 6) return 500 * kMiB;
  if (cc_major <= 7) return 1050 * kMiB;
  if (cc_major <= 8) return 1536 * kMiB;
  return 1800 * kMiB;
}

int64_t DefaultMemoryLimit(int64_t free_bytes, int cc_major) {
  const int64_t reserve = MinSystemMemory(free_bytes, cc_major);
  return reserve < free_bytes ? free_bytes - reserve : free_bytes;
}

StatusOr<std::vector<LogicalGpu>> MakeLogicalGpus(const std::vector<PhysicalGpu>& visible,
                                                  const GpuOptions& options) {
  std::vector<LogicalGpu> logical;
  const int count = static_cast<int>(visible.size());
  if (count == 0) return logical;  // TensorFlow checks nothing without GPUs
  // device_count {GPU: 0}: TensorFlow does not even parse the visible list.
  if (options.max_gpus == 0) return logical;

  // visible_device_list: TF GPU i is CUDA-visible GPU list[i].
  std::vector<int> order;
  if (options.visible_device_list.empty()) {
    for (int i = 0; i < count; ++i) order.push_back(i);
  } else {
    for (const std::string& entry : SplitCommas(options.visible_device_list)) {
      std::optional<int64_t> id = SimpleAtoi(entry);
      if (!id) {
        return InvalidArgument(fmt::format("Could not parse entry in 'visible_device_list': '{}'. "
                                           "visible_device_list = {}",
                                           entry, options.visible_device_list));
      }
      if (*id < 0 || *id >= count) {
        return InvalidArgument(fmt::format("'visible_device_list' listed an invalid GPU id '{}' but visible "
                                           "device count is {}",
                                           *id, count));
      }
      order.push_back(static_cast<int>(*id));
    }
  }
  if (std::set<int>(order.begin(), order.end()).size() != order.size()) {
    return InvalidArgument(
        fmt::format("visible_device_list contained a duplicate entry: {}", options.visible_device_list));
  }

  // gpu_device.cc: num_gpus_to_use, the first of the valid GPUs.
  if (options.max_gpus >= 0 && static_cast<size_t>(options.max_gpus) < order.size()) {
    order.resize(static_cast<size_t>(options.max_gpus));
  }
  const auto& virtual_devices = options.virtual_devices;
  if (!virtual_devices.empty()) {
    if (options.per_process_gpu_memory_fraction > 0) {
      return InvalidArgument("It's invalid to set per_process_gpu_memory_fraction when virtual_devices is set.");
    }
    if (order.size() < virtual_devices.size()) {
      return Unknown(fmt::format("Not enough GPUs to create virtual devices. num_gpus_to_use: {} "
                                 "#virtual_devices: {}",
                                 order.size(), virtual_devices.size()));
    }
    if (!options.visible_device_list.empty() && order.size() != virtual_devices.size()) {
      return InvalidArgument(fmt::format(
          "The number of GPUs in visible_device_list doesn't match the number of elements in the "
          "virtual_devices list. #GPUs in visible_device_list: {} virtual_devices.size(): {}",
          order.size(), virtual_devices.size()));
    }
    if (order.size() != virtual_devices.size()) {
      return Unknown(fmt::format("The number of valid GPUs doesn't match the number of elements in the "
                                 "virtual_devices list. #valid GPUs: {} virtual_devices.size(): {}",
                                 order.size(), virtual_devices.size()));
    }
  }

  for (size_t i = 0; i < order.size(); ++i) {
    const PhysicalGpu& gpu = visible[order[i]];
    auto add = [&](int64_t limit) {
      LogicalGpu l;
      l.tf_id = static_cast<int>(logical.size());
      l.cuda_ordinal = order[i];
      l.physical = gpu;
      l.memory_limit_bytes = limit;
      l.allow_growth = options.allow_growth;
      l.tf32 = options.tf32 && gpu.cc_major >= 8;
      logical.push_back(l);
    };
    if (!virtual_devices.empty() && !virtual_devices[i].empty()) {
      for (double mb : virtual_devices[i]) add(static_cast<int64_t>(mb) * (int64_t{1} << 20));
      continue;
    }
    // SingleVirtualDeviceMemoryLimit.
    if (options.per_process_gpu_memory_fraction > 0) {
      add(static_cast<int64_t>(gpu.total_bytes * options.per_process_gpu_memory_fraction));
    } else if (gpu.free_bytes == PhysicalGpu::kUnmeasured) {
      add(LogicalGpu::kLimitOnFirstUse);
    } else {
      add(DefaultMemoryLimit(gpu.free_bytes, gpu.cc_major));
    }
  }
  return logical;
}

}  // namespace tfrun
