// cuBLAS, loaded with dlopen on first GPU use: CPU graphs never load it, the
// binary starts in milliseconds and runs where the CUDA libraries are
// missing. Search order: $TFRUN_CUBLAS (a path), libcublas.so.13 through
// the loader's path, /usr/local/cuda/lib64/libcublas.so.13.
#pragma once

#include <cublas_api.h>

#include <string>
#include <vector>

#include "core/base/status.h"

namespace tfrun {
namespace cuda {

struct CublasApi {
  std::string path;  // the library that was loaded
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  // The C entry point (the C++ header adds an overload, so no decltype).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The default search list (with $TFRUN_CUBLAS first when set).
std::vector<std::string> CublasSearchList();

// Loads from the first path in `search` that opens and has every symbol;
// the error names each path tried and why it failed.
StatusOr<CublasApi> LoadCublas(const std::vector<std::string>& search);

// LoadCublas(CublasSearchList()), once per process.
StatusOr<const CublasApi*> Cublas();

// The element types cuBLAS multiplies here.
enum class GemmType { kFloat32, kFloat64, kFloat16, kBFloat16 };

// Row-major out[m, n] = op(a) op(b) on the GPU, where a is a_rows x a_cols
// and b is b_rows x b_cols as stored. float32 uses TensorFloat-32 tensor
// cores when `tf32` is set (TensorFlow's default on compute capability
// >= 8.0); float16 and bfloat16 accumulate in float32.
Status GpuMatMul(const CublasApi& api, cublasHandle_t handle, GemmType type, const void* a, int64_t a_rows,
                 int64_t a_cols, bool transpose_a, const void* b, int64_t b_rows, int64_t b_cols, bool transpose_b,
                 void* out, bool tf32);

}  // namespace cuda
}  // namespace tfrun
