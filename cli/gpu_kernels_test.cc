// Every GPU kernel of the kernel table against the CPU kernel, through the
// product's own path (real CUDA devices, placement, executor, copies):
// random inputs of many shapes, non-multiples of 8, empty and large, and a
// tolerance that depends on the dtype and TF32. Skips, saying why, where no
// GPU is visible.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cli/devices.h"
#include "core/graph/kernel_lookup.h"
#include "core/graph_file/loader.h"
#include "core/runtime/executor.h"
#include "core/runtime/kernel_registry.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cuda/cublas.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/gpu_visible.h"

namespace tfrun {
namespace {

class GpuKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TFRUN_SKIP_WITHOUT_GPU();
    ASSERT_NO_FATAL_FAILURE(UseDevices(/*tf32=*/true));
    ASSERT_TRUE(devices_.set.HasGpu()) << "CUDA sees a GPU but tfrun's device set has none";
    RegisterCpuKernels(&kernels_);
    RegisterCudaKernels(&kernels_);
  }

  // Fresh devices whose GPUs use TensorFloat-32 for float32 or not (each
  // backend takes the switch when it is made).
  void UseDevices(bool tf32) {
    GpuOptions options;
    options.tf32 = tf32;
    StatusOr<Devices> devices = BuildDevices(DeviceFlags(), options, GpuInventory::kDevices);
    ASSERT_TRUE(devices.ok()) << devices.status().message();
    devices_ = std::move(*devices);
  }

  // Runs `yaml` with every node on `device`; returns the fetched tensor.
  Tensor RunOn(const std::string& yaml, const std::string& device) {
    std::string text = yaml;
    for (size_t at = text.find("DEVICE"); at != std::string::npos; at = text.find("DEVICE", at)) {
      text.replace(at, 6, device);
    }
    StatusOr<Graph> graph = LoadGraphText(text, "gpu_kernels.yaml");
    EXPECT_TRUE(graph.ok()) << graph.status().message();
    if (!graph.ok()) return Tensor();
    Placement placement;
    Status placed = PlaceGraph(*graph, devices_.set, false, *FindProfile("tf2"), &placement);
    EXPECT_TRUE(placed.ok()) << placed.message();
    if (!placed.ok()) return Tensor();
    Executor executor(*graph, devices_.set, placement, kernels_);
    StatusOr<RunResult> result = executor.Run(graph->fetch);
    EXPECT_TRUE(result.ok()) << result.status().message();
    if (!result.ok() || result->fetched.empty()) return Tensor();
    return result->fetched[0];
  }

  // The same graph on /gpu:0 and /cpu:0; `tolerance(i, cpu_value)` bounds
  // the difference at element i.
  template <typename Tolerance>
  void Compare(const std::string& yaml, const std::string& what, Tolerance tolerance) {
    const Tensor gpu = RunOn(yaml, "/gpu:0");
    const Tensor cpu = RunOn(yaml, "/cpu:0");
    ASSERT_TRUE(gpu.is_valid() && cpu.is_valid()) << what;
    ASSERT_EQ(gpu.shape(), cpu.shape()) << what;
    for (int64_t i = 0; i < cpu.num_elements(); ++i) {
      const double want = cpu.GetAsDouble(i), got = gpu.GetAsDouble(i);
      ASSERT_LE(std::fabs(got - want), tolerance(want)) << what << " at " << i << ": GPU " << got << ", CPU " << want;
    }
  }

  Devices devices_;
  KernelRegistry kernels_;
};

std::string Input(const std::string& name, DType dtype, const std::vector<int64_t>& shape, int seed) {
  std::string dims;
  for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  const bool integer = dtype == DType::kInt32 || dtype == DType::kInt64;
  return "  - {name: " + name + ", op: Const, device: DEVICE, dtype: " + std::string(Name(dtype)) + ", shape: [" +
         dims + "], random: {distribution: uniform, min: " + (integer ? "-1000, max: 1000" : "-1, max: 1") +
         ", seed: " + std::to_string(seed) + "}}\n";
}

// The numeric dtypes TensorFlow has a GPU kernel for `op` in (so places
// it on the GPU), all of which the CPU also has.
std::vector<DType> GpuDTypes(const std::string& op) {
  std::vector<DType> out;
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
    if (TfHasKernelFor(op, d, kGpu)) out.push_back(d);
  }
  return out;
}

// BiasAdd and Relu round once per element on both sides; Split and
// ConcatV2 move bytes (strided copies), so all four are exact.
TEST_F(GpuKernelsTest, BiasAddReluSplitConcatMatchTheCpu) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 3}, {0, 4}, {257, 129}, {4, 6, 10}}) {
    const int64_t channels = shape.back();
    for (DType dtype : GpuDTypes("BiasAdd")) {
      std::string yaml = "nodes:\n" + Input("v", dtype, shape, 1) + Input("b", dtype, {channels}, 2) +
                         "  - {name: out, op: BiasAdd, device: DEVICE, inputs: [v, b]}\nfetch: [out]\n";
      Compare(yaml, "BiasAdd " + std::string(Name(dtype)), [](double) { return 0.0; });
    }
    for (DType dtype : GpuDTypes("Relu")) {
      std::string yaml = "nodes:\n" + Input("v", dtype, shape, 3) +
                         "  - {name: out, op: Relu, device: DEVICE, inputs: [v]}\nfetch: [out]\n";
      Compare(yaml, "Relu " + std::string(Name(dtype)), [](double) { return 0.0; });
    }
    for (DType dtype : GpuDTypes("Split")) {
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        if (shape[axis] % 2 != 0) continue;
        const std::string a = std::to_string(axis);
        std::string yaml = "nodes:\n" + Input("v", dtype, shape, 4) +
                           "  - {name: s, op: Split, num_split: 2, axis: " + a + ", device: DEVICE, inputs: [v]}\n"
                           "  - {name: out, op: ConcatV2, axis: " + a + ", device: DEVICE, inputs: [\"s:1\", s]}\n"
                           "fetch: [out]\n";
        Compare(yaml, "Split/ConcatV2 " + std::string(Name(dtype)) + " axis " + a, [](double) { return 0.0; });
      }
    }
  }
}

// Cast converts each element once on both sides (half and bfloat16
// through float, rounded to nearest), so GPU and CPU agree exactly for
// values in range; bool is 0/1 and "not zero".
TEST_F(GpuKernelsTest, CastMatchesTheCpu) {
  const std::vector<DType> types = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                                    DType::kInt32,   DType::kInt64,    DType::kBool};
  for (DType from : types) {
    for (DType to : types) {
      if (!TfHasKernelFor("Cast", to, kGpu)) continue;
      const std::string input =
          from == DType::kBool
              ? "  - {name: v, op: Const, device: DEVICE, dtype: bool, value: [true, false, true]}\n"
              : Input("v", from, {257, 3}, 7);
      std::string yaml = "nodes:\n" + input + "  - {name: out, op: Cast, device: DEVICE, inputs: [v], DstT: " +
                         std::string(Name(to)) + "}\nfetch: [out]\n";
      Compare(yaml, "Cast " + std::string(Name(from)) + " to " + std::string(Name(to)), [](double) { return 0.0; });
    }
  }
}

TEST_F(GpuKernelsTest, ElementwiseOpsAreExactForEveryDTypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {{0}, {1}, {7}, {17, 33}, {1000, 3}, {(1 << 20) + 3}};
  for (const char* op : {"Add", "Sub", "Mul", "AddN", "Identity"}) {
    for (DType dtype : GpuDTypes(op)) {
      for (const auto& shape : shapes) {
        for (int inputs : std::string(op) == "AddN" ? std::vector<int>{1, 2, 17, 300} : std::vector<int>{1}) {
          if (std::string(op) == "AddN" && inputs > 17 && shape.size() == 1 && shape[0] > 1000) continue;
          const int arity = std::string(op) == "AddN" ? inputs : std::string(op) == "Identity" ? 1 : 2;
          std::string yaml = "nodes:\n";
          std::string names;
          for (int i = 0; i < arity; ++i) {
            yaml += Input("x" + std::to_string(i), dtype, shape, i + 1);
            names += (i ? ", x" : "x") + std::to_string(i);
          }
          yaml += "  - {name: out, op: " + std::string(op) + ", device: DEVICE, inputs: [" + names + "]}\n";
          yaml += "fetch: [out]\n";
          // Each step rounds to the dtype on both sides, in the same order.
          Compare(yaml, std::string(op) + " " + std::string(Name(dtype)) + " x" + std::to_string(arity),
                  [](double) { return 0.0; });
        }
      }
      // A scalar operand broadcasts.
      if (std::string(op) == "Add" || std::string(op) == "Mul") {
        std::string yaml = "nodes:\n" + Input("x", dtype, {1000}, 1) + Input("s", dtype, {}, 2) +
                           "  - {name: out, op: " + op + ", device: DEVICE, inputs: [s, x]}\nfetch: [out]\n";
        Compare(yaml, std::string(op) + " scalar " + std::string(Name(dtype)), [](double) { return 0.0; });
      }
    }
  }
}

TEST_F(GpuKernelsTest, MatMulMatchesTheCpuWithinItsDTypesRounding) {
  struct Case {
    int64_t m, k, n;
  };
  const Case cases[] = {{1, 1, 1}, {7, 13, 5}, {17, 33, 65}, {0, 4, 3}, {4, 0, 3}, {64, 128, 256}, {257, 1000, 31}};
  for (DType dtype : GpuDTypes("MatMul")) {
    for (bool tf32 : {false, true}) {
      if (tf32 && dtype != DType::kFloat32) continue;
      ASSERT_NO_FATAL_FAILURE(UseDevices(tf32));
      // Relative rounding of one product sum in the output dtype (or TF32).
      const double eps = dtype == DType::kFloat64   ? 1e-13
                         : dtype == DType::kFloat32 ? (tf32 ? 4e-3 : 2e-6)
                         : dtype == DType::kFloat16 ? 2e-3
                                                    : 1.6e-2;
      for (const Case& c : cases) {
        for (bool ta : {false, true}) {
          for (bool tb : {false, true}) {
            using Dims = std::vector<int64_t>;
            std::string yaml = "nodes:\n" + Input("a", dtype, ta ? Dims{c.k, c.m} : Dims{c.m, c.k}, 1) +
                               Input("b", dtype, tb ? Dims{c.n, c.k} : Dims{c.k, c.n}, 2) +
                               "  - {name: out, op: MatMul, device: DEVICE, inputs: [a, b], transpose_a: " +
                               (ta ? "true" : "false") + ", transpose_b: " + (tb ? "true" : "false") +
                               "}\nfetch: [out]\n";
            // Inputs in [-1, 1]: a sum of k products is about sqrt(k) in size.
            const double scale = std::sqrt(static_cast<double>(c.k)) + 1;
            Compare(yaml,
                    fmt::format("MatMul {} {}x{}x{} ta={} tb={} tf32={}", Name(dtype), c.m, c.k, c.n, ta, tb, tf32),
                    [&](double want) { return eps * (std::fabs(want) + scale); });
          }
        }
      }
    }
  }
}

// A run that fails on the GPU (an output no GPU holds) leaves the devices
// fit for the next run on them: the queues are settled, nothing is stale.
TEST_F(GpuKernelsTest, AFailedRunThenAGoodOneOnTheSameDevices) {
  ASSERT_NO_FATAL_FAILURE(UseDevices(/*tf32=*/false));  // float32 exact enough for a tight comparison
  const std::string too_big = "nodes:\n" + Input("a", DType::kFloat32, {200000, 1}, 1) +
                              Input("b", DType::kFloat32, {1, 200000}, 2) +
                              "  - {name: c, op: MatMul, device: DEVICE, inputs: [a, b]}\nfetch: [c]\n";
  StatusOr<Graph> graph = LoadGraphText([&] {
    std::string t = too_big;
    for (size_t at = t.find("DEVICE"); at != std::string::npos; at = t.find("DEVICE", at)) t.replace(at, 6, "/gpu:0");
    return t;
  }(), "too_big.yaml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices_.set, false, *FindProfile("tf2"), &placement).ok());
  Executor failing(*graph, devices_.set, placement, kernels_);
  StatusOr<RunResult> failed = failing.Run(graph->fetch);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("ResourceExhaustedError: OOM when allocating tensor with "
                                           "shape[200000,200000] and type float on "
                                           "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"),
            std::string::npos)
      << failed.status().message();
  Compare("nodes:\n" + Input("a", DType::kFloat32, {64, 48}, 3) + Input("b", DType::kFloat32, {48, 32}, 4) +
              "  - {name: c, op: MatMul, device: DEVICE, inputs: [a, b]}\nfetch: [c]\n",
          "after a failed run", [](double want) { return 1e-4 * (1 + std::fabs(want)); });
}

// Add over more than 2^24 elements: the grid-stride loop's second pass.
TEST_F(GpuKernelsTest, ElementwiseBeyondOneGrid) {
  Compare("nodes:\n  - {name: x, op: Const, device: DEVICE, shape: [17000000], fill: 1.5}\n"
          "  - {name: y, op: Const, device: DEVICE, shape: [17000000], fill: 0.25}\n"
          "  - {name: z, op: Add, device: DEVICE, inputs: [x, y]}\nfetch: [z]\n",
          "Add of 17M elements", [](double) { return 0.0; });
}

// A 4096^3 float32 MatMul's device time as the executor reports it (CUDA
// events around the node) is within 2x of cuBLAS's own time for the same
// product, timed the same way outside tfrun.
TEST_F(GpuKernelsTest, MatMulNodeTimeIsCublasTime) {
  std::string yaml = "nodes:\n" + Input("a", DType::kFloat32, {4096, 4096}, 5) +
                     Input("b", DType::kFloat32, {4096, 4096}, 6) +
                     "  - {name: c, op: MatMul, device: /gpu:0, inputs: [a, b]}\nfetch: [c]\n";
  for (size_t at = yaml.find("DEVICE"); at != std::string::npos; at = yaml.find("DEVICE", at)) yaml.replace(at, 6, "/gpu:0");
  StatusOr<Graph> graph = LoadGraphText(yaml, "mm4096.yaml");
  ASSERT_TRUE(graph.ok());
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices_.set, false, *FindProfile("tf2"), &placement).ok());
  Executor executor(*graph, devices_.set, placement, kernels_);
  std::vector<double> node_ms;
  for (int run = 0; run < 6; ++run) {
    StatusOr<RunResult> result = executor.Run(graph->fetch);
    ASSERT_TRUE(result.ok()) << result.status().message();
    if (run > 0) node_ms.push_back(result->node_ms[graph->Find("c")->id]);
  }
  std::sort(node_ms.begin(), node_ms.end());

  // cuBLAS alone: the same GEMM on a stream of its own, between two events.
  StatusOr<const cuda::CublasApi*> api = cuda::Cublas();
  ASSERT_TRUE(api.ok()) << api.status().message();
  const size_t bytes = size_t{4096} * 4096 * sizeof(float);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&a, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, bytes), cudaSuccess);
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ((*api)->create(&handle), CUBLAS_STATUS_SUCCESS);
  (*api)->set_stream(handle, stream);
  cudaEvent_t start, end;
  cudaEventCreate(&start);
  cudaEventCreate(&end);
  std::vector<double> cublas_ms;
  for (int run = 0; run < 6; ++run) {
    cudaEventRecord(start, stream);
    ASSERT_TRUE(cuda::GpuMatMul(**api, handle, cuda::GemmType::kFloat32, a, 4096, 4096, false, b, 4096, 4096, false,
                                c, devices_.logical[0].physical.cc_major >= 8)
                    .ok());
    cudaEventRecord(end, stream);
    cudaEventSynchronize(end);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, end);
    if (run > 0) cublas_ms.push_back(ms);
  }
  std::sort(cublas_ms.begin(), cublas_ms.end());
  (*api)->destroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  const double ours = node_ms[node_ms.size() / 2], theirs = cublas_ms[cublas_ms.size() / 2];
  EXPECT_LE(ours, 2 * theirs) << "node " << ours << " ms, cuBLAS " << theirs << " ms";
  EXPECT_GE(ours, theirs / 2) << "node " << ours << " ms, cuBLAS " << theirs << " ms";
}

}  // namespace
}  // namespace tfrun
