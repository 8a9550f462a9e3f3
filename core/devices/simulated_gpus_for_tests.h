// Test fixture: a DeviceSet of CPU:0 and `n` simulated logical GPUs
// (device index 0 is CPU:0, 1 + i is GPU:i), for the pure-logic tests of
// placement.
#pragma once

#include <vector>

#include "core/devices/device_set.h"

namespace tfrun {

inline DeviceSet SimulatedGpus(int n) {
  std::vector<LogicalGpu> logical(n);
  for (int i = 0; i < n; ++i) {
    logical[i].tf_id = i;
    logical[i].cuda_ordinal = i;
    logical[i].physical.name = "Sim";
    logical[i].memory_limit_bytes = 1 << 30;
  }
  return DeviceSet::WithGpus(logical, true);
}

}  // namespace tfrun
