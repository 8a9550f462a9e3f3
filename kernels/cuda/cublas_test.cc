// The cuBLAS loader everywhere, and cuBLAS MatMul against a host reference
// where a GPU is visible (skipped with the reason elsewhere).
#include "kernels/cuda/cublas.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "kernels/cuda/gpu_visible.h"

namespace tfrun {
namespace cuda {
namespace {

TEST(CublasLoaderTest, MissingLibraryIsAClearErrorNamingEachPathTried) {
  StatusOr<CublasApi> api = LoadCublas({"/nonexistent/libcublas.so.13", "libdefinitely-not-cublas.so"});
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().kind(), ErrorKind::kRuntime);
  EXPECT_NE(api.status().message().find("/nonexistent/libcublas.so.13 ("), std::string::npos);
  EXPECT_NE(api.status().message().find("libdefinitely-not-cublas.so ("), std::string::npos);
  EXPECT_NE(api.status().message().find("TFRUN_CUBLAS"), std::string::npos);
}

TEST(CublasLoaderTest, ALibraryWithoutTheSymbolsIsSkipped) {
  StatusOr<CublasApi> api = LoadCublas({"libm.so.6"});
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.status().message().find("libm.so.6 (no symbol cublasCreate_v2)"), std::string::npos)
      << api.status().message();
}

// A handle where a GPU is visible; without one an error, not a crash.
TEST(CublasLoaderTest, LoadsTheToolkitsLibraryAndMakesAHandleOnlyWithAGpu) {
  if (!std::ifstream("/usr/local/cuda/lib64/libcublas.so.13")) GTEST_SKIP() << "no libcublas.so.13 on this machine";
  StatusOr<CublasApi> api = LoadCublas({"/usr/local/cuda/lib64/libcublas.so.13"});
  ASSERT_TRUE(api.ok()) << api.status().message();
  std::string why;
  cublasHandle_t handle = nullptr;
  if (GpuVisible(&why)) {
    ASSERT_EQ(api->create(&handle), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(api->destroy(handle), CUBLAS_STATUS_SUCCESS);
  } else {
    EXPECT_NE(api->create(&handle), CUBLAS_STATUS_SUCCESS) << why;
  }
}

// float32 without TF32 must match a double-precision host product closely;
// with TF32, float16 and bfloat16 to their precision.
TEST(CublasMatMulTest, MatchesHostForShapesTransposesAndTypes) {
  TFRUN_SKIP_WITHOUT_GPU();
  StatusOr<const CublasApi*> api = Cublas();
  ASSERT_TRUE(api.ok()) << api.status().message();
  cublasHandle_t handle = nullptr;
  ASSERT_EQ((*api)->create(&handle), CUBLAS_STATUS_SUCCESS);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  struct Case { int m, k, n; };
  for (Case c : {Case{1, 1, 1}, Case{7, 13, 5}, Case{64, 64, 64}, Case{129, 31, 257}, Case{0, 4, 3}, Case{512, 300, 77}}) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        std::vector<float> a(c.m * c.k), b(c.k * c.n);
        for (float& v : a) v = dist(rng);
        for (float& v : b) v = dist(rng);
        auto at = [&](int i, int p) { return ta ? a[p * c.m + i] : a[i * c.k + p]; };
        auto bt = [&](int p, int j) { return tb ? b[j * c.k + p] : b[p * c.n + j]; };
        for (GemmType type : {GemmType::kFloat32, GemmType::kFloat64, GemmType::kFloat16, GemmType::kBFloat16}) {
          for (bool tf32 : {false, true}) {
            if (tf32 && type != GemmType::kFloat32) continue;
            const size_t elem = type == GemmType::kFloat64 ? 8 : type == GemmType::kFloat32 ? 4 : 2;
            std::vector<char> ha(a.size() * elem), hb(b.size() * elem);
            auto store = [&](std::vector<char>& dst, const std::vector<float>& src) {
              for (size_t i = 0; i < src.size(); ++i) {
                if (type == GemmType::kFloat64) reinterpret_cast<double*>(dst.data())[i] = src[i];
                if (type == GemmType::kFloat32) reinterpret_cast<float*>(dst.data())[i] = src[i];
                if (type == GemmType::kFloat16) reinterpret_cast<__half*>(dst.data())[i] = __float2half(src[i]);
                if (type == GemmType::kBFloat16) reinterpret_cast<__nv_bfloat16*>(dst.data())[i] = __float2bfloat16(src[i]);
              }
            };
            store(ha, a);
            store(hb, b);
            void *da, *db, *dc;
            ASSERT_EQ(cudaMalloc(&da, ha.size() + 1), cudaSuccess);
            ASSERT_EQ(cudaMalloc(&db, hb.size() + 1), cudaSuccess);
            ASSERT_EQ(cudaMalloc(&dc, c.m * c.n * elem + 1), cudaSuccess);
            cudaMemcpy(da, ha.data(), ha.size(), cudaMemcpyHostToDevice);
            cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice);
            Status s = GpuMatMul(**api, handle, type, da, ta ? c.k : c.m, ta ? c.m : c.k, ta, db, tb ? c.n : c.k,
                                 tb ? c.k : c.n, tb, dc, tf32);
            ASSERT_TRUE(s.ok()) << s.message();
            std::vector<char> hc(c.m * c.n * elem);
            cudaMemcpy(hc.data(), dc, hc.size(), cudaMemcpyDeviceToHost);
            const double tol = type == GemmType::kFloat64 ? 1e-12 : type == GemmType::kFloat32 && !tf32 ? 1e-5
                               : type == GemmType::kFloat16 ? 5e-3 : 3e-2;
            for (int i = 0; i < c.m; ++i) {
              for (int j = 0; j < c.n; ++j) {
                double want = 0;
                for (int p = 0; p < c.k; ++p) want += double(at(i, p)) * double(bt(p, j));
                const size_t idx = i * c.n + j;
                double got = type == GemmType::kFloat64 ? reinterpret_cast<double*>(hc.data())[idx]
                             : type == GemmType::kFloat32 ? reinterpret_cast<float*>(hc.data())[idx]
                             : type == GemmType::kFloat16 ? __half2float(reinterpret_cast<__half*>(hc.data())[idx])
                                 : __bfloat162float(reinterpret_cast<__nv_bfloat16*>(hc.data())[idx]);
                ASSERT_NEAR(got, want, tol * std::sqrt(double(c.k)) * 4 + tol)
                    << "m=" << c.m << " k=" << c.k << " n=" << c.n << " ta=" << ta << " tb=" << tb;
              }
            }
            cudaFree(da);
            cudaFree(db);
            cudaFree(dc);
          }
        }
      }
    }
  }
  (*api)->destroy(handle);
}

}  // namespace
}  // namespace cuda
}  // namespace tfrun
