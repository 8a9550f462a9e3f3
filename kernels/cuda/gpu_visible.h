// For GPU tests: whether CUDA sees a GPU, and if not why. Where none is
// visible a GPU test skips with the reason, except under
// TFRUN_REQUIRE_GPU=1 (the GPU machine's run.sh), where it fails: a GPU
// suite that never reached a GPU must not pass.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace tfrun {

// Whether the NVIDIA driver's library is installed at all: without it
// cudart reports "CUDA driver version is insufficient", which misleads.
inline bool DriverInstalled() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return false;
  dlclose(driver);
  return true;
}

inline bool GpuVisible(std::string* why) {
  int count = 0;  // left untouched when no driver is installed
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess && !DriverInstalled()) {
    *why = "no GPU visible: no NVIDIA driver (libcuda.so.1 is not installed)";
    return false;
  }
  if (e != cudaSuccess || count == 0) {
    *why = std::string("no GPU visible (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
    return false;
  }
  return true;
}

inline bool GpuRequired() {
  const char* v = std::getenv("TFRUN_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace tfrun

// Skips the current test where no GPU is visible, or fails it under
// TFRUN_REQUIRE_GPU=1. `why` may add to the reason.
#define TFRUN_SKIP_WITHOUT_GPU()                                                      \
  do {                                                                                \
    std::string tfrun_why_;                                                           \
    if (!::tfrun::GpuVisible(&tfrun_why_)) {                                          \
      if (::tfrun::GpuRequired()) FAIL() << "TFRUN_REQUIRE_GPU=1 but " << tfrun_why_; \
      GTEST_SKIP() << tfrun_why_;                                                     \
    }                                                                                 \
  } while (0)
