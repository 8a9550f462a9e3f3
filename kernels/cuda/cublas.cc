#include "kernels/cuda/cublas.h"

#include <fmt/format.h>

#include <limits>
#include <mutex>

#include "kernels/cuda/library_loader.h"

namespace tfrun {
namespace cuda {

std::vector<std::string> CublasSearchList() { return LibrarySearchList("TFRUN_CUBLAS", "libcublas.so.13"); }

StatusOr<CublasApi> LoadCublas(const std::vector<std::string>& search) {
  return LoadLibrary<CublasApi>(search, "cuBLAS", "TFRUN_CUBLAS", [](CublasApi& api, auto&& bind) {
    bind(api.create, "cublasCreate_v2");
    bind(api.destroy, "cublasDestroy_v2");
    bind(api.set_stream, "cublasSetStream_v2");
    bind(api.set_math_mode, "cublasSetMathMode");
    bind(api.gemm_ex, "cublasGemmEx");
    bind(api.status_string, "cublasGetStatusString");
  });
}

StatusOr<const CublasApi*> Cublas() {
  static std::once_flag once;
  static StatusOr<CublasApi>* loaded = nullptr;
  std::call_once(once, [] { loaded = new StatusOr<CublasApi>(LoadCublas(CublasSearchList())); });
  if (!loaded->ok()) return loaded->status();
  return &loaded->value();
}

Status GpuMatMul(const CublasApi& api, cublasHandle_t handle, GemmType type, const void* a, int64_t a_rows,
                 int64_t a_cols, bool ta, const void* b, int64_t b_rows, int64_t b_cols, bool tb, void* out,
                 bool tf32) {
  const int64_t m = ta ? a_cols : a_rows, k = ta ? a_rows : a_cols, n = tb ? b_rows : b_cols;
  if (m == 0 || n == 0) return Status::Ok();
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (m > kMax || n > kMax || k > kMax || a_cols > kMax || b_cols > kMax) {
    return RuntimeError(fmt::format("cublasGemmEx: dimensions {}x{}x{} exceed cuBLAS's 32-bit limit", m, n, k));
  }
  cudaDataType data;
  cublasComputeType_t compute;
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* alpha = &one_f;
  const void* beta = &zero_f;
  switch (type) {
    case GemmType::kFloat32:
      data = CUDA_R_32F;
      compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case GemmType::kFloat64:
      data = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      alpha = &one_d;
      beta = &zero_d;
      break;
    case GemmType::kFloat16:
      data = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    default:
      data = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
  }
  // cuBLAS is column-major: a row-major matrix is its transpose there, so
  // compute out^T (n x m) = op(b)^T op(a)^T by passing b first.
  cublasStatus_t s = api.gemm_ex(handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha, b, data,
                                 static_cast<int>(b_cols), a, data, static_cast<int>(a_cols), beta, out, data,
                                 static_cast<int>(n), compute, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) {
    return RuntimeError(fmt::format("cublasGemmEx failed: {}", api.status_string(s)));
  }
  return Status::Ok();
}

}  // namespace cuda
}  // namespace tfrun
