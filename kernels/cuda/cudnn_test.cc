// The cuDNN loader everywhere (no GPU needed), and a convolution where a
// GPU is visible (skipped with the reason elsewhere; gpu_test runs the
// convolution goldens through tfrun there).
#include "kernels/cuda/cudnn.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/cuda/gpu_visible.h"

namespace tfrun {
namespace cuda {
namespace {

TEST(CudnnLoaderTest, MissingLibraryIsAClearErrorNamingEachPathTried) {
  StatusOr<CudnnApi> api = LoadCudnn({"/nonexistent/libcudnn.so.9", "libdefinitely-not-cudnn.so"});
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.status().kind(), ErrorKind::kRuntime);
  EXPECT_NE(api.status().message().find("cannot load cuDNN"), std::string::npos);
  EXPECT_NE(api.status().message().find("/nonexistent/libcudnn.so.9 ("), std::string::npos);
  EXPECT_NE(api.status().message().find("libdefinitely-not-cudnn.so ("), std::string::npos);
  EXPECT_NE(api.status().message().find("TFRUN_CUDNN"), std::string::npos);
}

TEST(CudnnLoaderTest, ALibraryWithoutTheSymbolsIsSkipped) {
  StatusOr<CudnnApi> api = LoadCudnn({"libm.so.6"});
  ASSERT_FALSE(api.ok());
  EXPECT_NE(api.status().message().find("libm.so.6 (no symbol cudnnCreate)"), std::string::npos)
      << api.status().message();
}

// cuDNN 9 still exports every legacy convolution entry point tfrun binds:
// the library TFRUN_CUDNN names (a Python wheel's, on the GPU machine),
// else the toolkit's.
TEST(CudnnLoaderTest, TheToolkitsLibraryHasEveryEntryPoint) {
  const char* named = std::getenv("TFRUN_CUDNN");
  const std::string path = named != nullptr && *named != '\0' ? named : "/usr/local/cuda/lib64/libcudnn.so.9";
  if (!std::ifstream(path)) GTEST_SKIP() << "no libcudnn.so.9 on this machine (" << path << ")";
  StatusOr<CudnnApi> api = LoadCudnn({path});
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_STREQ(api->error_string(CUDNN_STATUS_SUCCESS), "CUDNN_STATUS_SUCCESS");
}

// A 1x5x5x1 image convolved with a 3x3 filter of ones (padding 1): each
// output is the sum of its 3x3 neighbourhood; then the two gradients
// against the same sums done by hand.
TEST(CudnnConvolutionTest, ForwardAndBothGradientsMatchHandSums) {
  TFRUN_SKIP_WITHOUT_GPU();
  StatusOr<const CudnnApi*> api = Cudnn();
  ASSERT_TRUE(api.ok()) << api.status().message();
  cudnnHandle_t handle = nullptr;
  ASSERT_EQ((*api)->create(&handle), CUDNN_STATUS_SUCCESS);
  ConvProblem p;
  p.batch = 1;
  p.in_rows = p.in_cols = 5;
  p.in_depth = p.out_depth = 1;
  p.filter_rows = p.filter_cols = 3;
  p.pad_rows = p.pad_cols = 1;
  p.out_rows = p.out_cols = 5;
  std::vector<float> x(25), w(9, 1.0f), y(25);
  for (int i = 0; i < 25; ++i) x[i] = static_cast<float>(i);
  auto sum3x3 = [](const std::vector<float>& v, int r, int c) {
    float s = 0;
    for (int y = r - 1; y <= r + 1; ++y) {
      for (int x = c - 1; x <= c + 1; ++x) {
        if (y >= 0 && y < 5 && x >= 0 && x < 5) s += v[y * 5 + x];
      }
    }
    return s;
  };
  float *dx = nullptr, *dw = nullptr, *dy = nullptr, *scratch = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, 25 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dw, 9 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, 25 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&scratch, 64 << 20), cudaSuccess);
  const Workspace workspace = [&](size_t bytes) -> StatusOr<void*> {
    if (bytes > (64u << 20)) return RuntimeError("workspace too large for the test");
    return static_cast<void*>(scratch);
  };
  ASSERT_EQ(cudaMemcpy(dx, x.data(), 25 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dw, w.data(), 9 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  const Status forward = RunConvolution(**api, handle, ConvPass::kForward, p, false, dx, dw, dy, workspace);
  ASSERT_TRUE(forward.ok()) << forward.message();
  ASSERT_EQ(cudaMemcpy(y.data(), dy, 25 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) EXPECT_FLOAT_EQ(y[r * 5 + c], sum3x3(x, r, c)) << r << "," << c;
  }
  // d(sum of y)/dx with ones as dy: each input counted once per window it is in.
  std::vector<float> ones(25, 1.0f), grad(25);
  ASSERT_EQ(cudaMemcpy(dy, ones.data(), 25 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  const Status data = RunConvolution(**api, handle, ConvPass::kBackwardData, p, false, dw, dy, dx, workspace);
  ASSERT_TRUE(data.ok()) << data.message();
  ASSERT_EQ(cudaMemcpy(grad.data(), dx, 25 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) EXPECT_FLOAT_EQ(grad[r * 5 + c], sum3x3(ones, r, c)) << r << "," << c;
  }
  // d(sum of y)/dw[i][j]: the sum of x shifted by (i-1, j-1).
  ASSERT_EQ(cudaMemcpy(dx, x.data(), 25 * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  const Status filter = RunConvolution(**api, handle, ConvPass::kBackwardFilter, p, false, dx, dy, dw, workspace);
  ASSERT_TRUE(filter.ok()) << filter.message();
  std::vector<float> wgrad(9);
  ASSERT_EQ(cudaMemcpy(wgrad.data(), dw, 9 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      float s = 0;
      for (int r = 0; r < 5; ++r) {
        for (int c = 0; c < 5; ++c) {
          const int y = r + i - 1, x2 = c + j - 1;
          if (y >= 0 && y < 5 && x2 >= 0 && x2 < 5) s += x[y * 5 + x2];
        }
      }
      EXPECT_FLOAT_EQ(wgrad[i * 3 + j], s) << i << "," << j;
    }
  }
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
  cudaFree(scratch);
}

}  // namespace
}  // namespace cuda
}  // namespace tfrun
