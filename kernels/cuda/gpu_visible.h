// For GPU tests: whether CUDA sees a GPU, and if not why, for GTEST_SKIP.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace tfrun {

inline bool GpuVisible(std::string* why) {
  int count = 0;  // left untouched when no driver is installed
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    *why = std::string("no GPU visible (") + cudaGetErrorString(e) + ")";
    return false;
  }
  return true;
}

}  // namespace tfrun
