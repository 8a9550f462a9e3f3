#include "cli/version.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "cli/build_info.h"
#include "kernels/cuda/cublas.h"

namespace tfrun {

std::string VersionField() { return fmt::format("{} (git {})", kTfrunVersion, GitCommit()); }
namespace {

std::string CudaVersion(int v) { return v == 0 ? "none" : fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace

const char* GitCommit() { return TFRUN_GIT_COMMIT; }

std::string VersionText() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);  // the statically linked runtime: no driver needed
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  cudaGetLastError();
  StatusOr<const cuda::CublasApi*> cublas = cuda::Cublas();
  const std::string cublas_line =
      cublas.ok() ? "cuBLAS: " + (*cublas)->path : "cuBLAS: not found (" + cublas.status().message() + ")";
  return fmt::format("tfrun {} (git {}, {} build)\nCUDA runtime {}, driver {}\n{}", kTfrunVersion, GitCommit(),
                     TFRUN_COMPILATION_MODE, CudaVersion(runtime), CudaVersion(driver), cublas_line);
}

}  // namespace tfrun
