// Compares the CUDA elementwise kernels with host arithmetic on random
// inputs of many sizes. Skips, saying why, where no GPU is visible.
#include "kernels/cuda/elementwise.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/cuda/gpu_visible.h"

namespace tfrun {
namespace cuda {
namespace {

template <typename T>
T* ToDevice(const std::vector<T>& host) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, host.size() * sizeof(T) + 1), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

template <typename T>
std::vector<T> ToHost(const T* d, size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

TEST(CudaElementwiseTest, AddNFloat32MatchesHostForManySizesAndInputCounts) {
  TFRUN_SKIP_WITHOUT_GPU();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4, 4);
  for (int64_t n : {0, 1, 7, 255, 256, 1000, 65537, 1 << 20}) {
    // 16, 256 and 4000 inputs fill each parameter-block size; 4001 needs
    // a second pass.
    for (int inputs : {1, 2, 3, 16, 17, 40, 256, 257, 4000, 4001}) {
      if (inputs > 40 && n > 1000) continue;
      std::vector<std::vector<float>> host(inputs, std::vector<float>(n));
      std::vector<const void*> dev;
      for (auto& h : host) {
        for (float& v : h) v = dist(rng);
        dev.push_back(ToDevice(h));
      }
      float* out = nullptr;
      ASSERT_EQ(cudaMalloc(&out, n * sizeof(float) + 1), cudaSuccess);
      ASSERT_EQ(AddN(ElementType::kFloat32, dev.data(), inputs, n, out, nullptr), 0);
      std::vector<float> got = ToHost(out, n);
      for (int64_t i = 0; i < n; ++i) {
        float expect = host[0][i];
        for (int k = 1; k < inputs; ++k) expect += host[k][i];
        ASSERT_EQ(got[i], expect) << "n=" << n << " inputs=" << inputs << " i=" << i;
      }
      for (const void* p : dev) cudaFree(const_cast<void*>(p));
      cudaFree(out);
    }
  }
}

TEST(CudaElementwiseTest, BinaryOpsWithScalarBroadcastAndIntegerWrap) {
  TFRUN_SKIP_WITHOUT_GPU();
  std::vector<int32_t> x = {2147483647, -5, 7, 0};
  std::vector<int32_t> s = {1};
  int32_t* dx = ToDevice(x);
  int32_t* ds = ToDevice(s);
  int32_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, x.size() * sizeof(int32_t)), cudaSuccess);
  ASSERT_EQ(Binary(ElementType::kInt32, BinaryOp::kAdd, dx, false, ds, true, Broadcast(), 4, out, nullptr), 0);
  EXPECT_EQ(ToHost(out, 4), (std::vector<int32_t>{INT32_MIN, -4, 8, 1}));
  ASSERT_EQ(Binary(ElementType::kInt32, BinaryOp::kMul, ds, true, dx, false, Broadcast(), 4, out, nullptr), 0);
  EXPECT_EQ(ToHost(out, 4), x);
  ASSERT_EQ(Binary(ElementType::kInt32, BinaryOp::kSub, dx, false, dx, false, Broadcast(), 4, out, nullptr), 0);
  EXPECT_EQ(ToHost(out, 4), (std::vector<int32_t>{0, 0, 0, 0}));
  cudaFree(dx);
  cudaFree(ds);
  cudaFree(out);
}

// On a machine without the NVIDIA driver the skip reason says so, not
// cudart's "driver version is insufficient" (issue 20); with the driver,
// the reason (if any) is CUDA's own.
TEST(GpuVisibleTest, NamesAMissingDriver) {
  std::string why;
  const bool visible = GpuVisible(&why);
  if (!DriverInstalled()) {
    EXPECT_FALSE(visible);
    EXPECT_EQ(why, "no GPU visible: no NVIDIA driver (libcuda.so.1 is not installed)");
  } else if (visible) {
    EXPECT_EQ(why, "");
  } else {
    EXPECT_EQ(why.rfind("no GPU visible (cuda", 0), 0u) << why;
  }
}

// [2,3] - [3] and [2,1] * [1,3], as NumPy broadcasts them.
TEST(CudaElementwiseTest, BinaryBroadcastsLikeNumpy) {
  TFRUN_SKIP_WITHOUT_GPU();
  std::vector<int32_t> m = {10, 20, 30, 40, 50, 60};
  std::vector<int32_t> row = {1, 2, 3};
  std::vector<int32_t> col = {2, 3};
  int32_t* dm = ToDevice(m);
  int32_t* drow = ToDevice(row);
  int32_t* dcol = ToDevice(col);
  int32_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 6 * sizeof(int32_t)), cudaSuccess);
  Broadcast b;
  b.rank = 2;
  b.dims[0] = 2;
  b.dims[1] = 3;
  b.x_strides[0] = 3;
  b.x_strides[1] = 1;
  b.y_strides[0] = 0;
  b.y_strides[1] = 1;
  ASSERT_EQ(Binary(ElementType::kInt32, BinaryOp::kSub, dm, false, drow, false, b, 6, out, nullptr), 0);
  EXPECT_EQ(ToHost(out, 6), (std::vector<int32_t>{9, 18, 27, 39, 48, 57}));
  b.x_strides[0] = 1;  // [2,1]: its one column stretches
  b.x_strides[1] = 0;
  ASSERT_EQ(Binary(ElementType::kInt32, BinaryOp::kMul, dcol, false, drow, false, b, 6, out, nullptr), 0);
  EXPECT_EQ(ToHost(out, 6), (std::vector<int32_t>{2, 4, 6, 3, 6, 9}));
  cudaFree(dm);
  cudaFree(drow);
  cudaFree(dcol);
  cudaFree(out);
}

}  // namespace
}  // namespace cuda
}  // namespace tfrun
