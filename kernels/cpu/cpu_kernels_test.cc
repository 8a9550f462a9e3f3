// Every CPU kernel in every dtype the kernel table lists, run through the
// executor and checked against straightforward reference arithmetic.
#include "kernels/cpu/cpu_kernels.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/parallel.h"
#include "core/graph/kernel_lookup.h"
#include "core/graph/op_registry.h"
#include "core/graph_def/graph_file_loader.h"
#include "core/graph_file/loader.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"

namespace tfrun {
namespace {

// Loads `yaml`, places it on CPU:0 and returns the fetched tensors.
std::vector<Tensor> RunGraph(const std::string& yaml) {
  StatusOr<Graph> graph = LoadGraphText(yaml, "k.yaml");
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  if (!graph.ok()) return {};
  static const DeviceSet devices = DeviceSet::CpuOnly();
  Placement placement;
  Status placed = PlaceGraph(*graph, devices, false, *FindProfile("tf2"), &placement);
  EXPECT_TRUE(placed.ok()) << placed.message();
  KernelRegistry kernels;
  RegisterCpuKernels(&kernels);
  Executor executor(*graph, devices, placement, kernels);
  StatusOr<RunResult> result = executor.Run(graph->fetch);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? result->fetched : std::vector<Tensor>{};
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}

class NumericDTypeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NumericDTypeTest, MatMulAllTransposes) {
  const std::string dt = GetParam();
  // Small integers: exact in every dtype, so all must agree exactly.
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      std::string yaml = "nodes:\n"
                         "  - {name: a, op: Const, dtype: " + dt + ", shape: [" + (ta ? "3, 2" : "2, 3") +
                         "], value: [1, 2, 3, 4, 5, 6]}\n"
                         "  - {name: b, op: Const, dtype: " + dt + ", shape: [" + (tb ? "2, 3" : "3, 2") +
                         "], value: [1, 2, 3, 4, 5, 6]}\n"
                         "  - {op: MatMul, inputs: [a, b], transpose_a: " + (ta ? "true" : "false") +
                         ", transpose_b: " + (tb ? "true" : "false") + "}\n";
      std::vector<Tensor> out = RunGraph(yaml);
      ASSERT_EQ(out.size(), 1u);
      // Reference: A (2x3) times B (3x2) with the stored layouts.
      double A[2][3], B[3][2];
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 3; ++k) A[i][k] = ta ? 1 + k * 2 + i : 1 + i * 3 + k;
      for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 2; ++j) B[k][j] = tb ? 1 + j * 3 + k : 1 + k * 2 + j;
      std::vector<double> expected;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) expected.push_back(A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j]);
      EXPECT_EQ(Values(out[0]), expected) << dt << " ta=" << ta << " tb=" << tb;
      EXPECT_EQ(Name(out[0].dtype()), dt);
    }
  }
}

TEST_P(NumericDTypeTest, ElementwiseAddNAndIdentity) {
  const std::string dt = GetParam();
  std::string yaml = "nodes:\n"
                     "  - {name: x, op: Const, dtype: " + dt + ", shape: [4], value: [1, -2, 3, 8]}\n"
                     "  - {name: y, op: Const, dtype: " + dt + ", shape: [4], value: [5, 6, -7, 2]}\n"
                     "  - {name: s, op: Const, dtype: " + dt + ", value: 3}\n"
                     "  - {name: add, op: Add, inputs: [x, y]}\n"
                     "  - {name: sub, op: Sub, inputs: [x, y]}\n"
                     "  - {name: mul, op: Mul, inputs: [x, y]}\n"
                     "  - {name: scaled, op: Mul, inputs: [s, x]}\n"
                     "  - {name: shifted, op: Sub, inputs: [x, s]}\n"
                     "  - {name: addn, op: AddN, inputs: [x, y, x]}\n"
                     "  - {name: addn1, op: AddN, inputs: [y]}\n"
                     "  - {name: id, op: Identity, inputs: [y]}\n"
                     "fetch: [add, sub, mul, scaled, shifted, addn, addn1, id]\n";
  std::vector<Tensor> out = RunGraph(yaml);
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(Values(out[0]), (std::vector<double>{6, 4, -4, 10}));
  EXPECT_EQ(Values(out[1]), (std::vector<double>{-4, -8, 10, 6}));
  EXPECT_EQ(Values(out[2]), (std::vector<double>{5, -12, -21, 16}));
  EXPECT_EQ(Values(out[3]), (std::vector<double>{3, -6, 9, 24}));
  EXPECT_EQ(Values(out[4]), (std::vector<double>{-2, -5, 0, 5}));
  EXPECT_EQ(Values(out[5]), (std::vector<double>{7, 2, -1, 18}));
  EXPECT_EQ(Values(out[6]), (std::vector<double>{5, 6, -7, 2}));
  EXPECT_EQ(Values(out[7]), (std::vector<double>{5, 6, -7, 2}));
}

INSTANTIATE_TEST_SUITE_P(AllNumeric, NumericDTypeTest,
                         ::testing::Values("float32", "float64", "float16", "bfloat16", "int32", "int64"));

TEST(CpuKernelsTest, IntegerArithmeticWrapsLikeTwosComplement) {
  std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: big, op: Const, dtype: int32, shape: [2], value: [2147483647, -2147483648]}
  - {name: one, op: Const, dtype: int32, value: 1}
  - {name: add, op: Add, inputs: [big, one]}
  - {name: sub, op: Sub, inputs: [big, one]}
fetch: [add, sub])");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data<int32_t>()[0], INT32_MIN);
  EXPECT_EQ(out[1].data<int32_t>()[1], INT32_MAX);
}

TEST(CpuKernelsTest, CastEveryPairWithDefinedEdgeCases) {
  const char* dtypes[] = {"float32", "float64", "float16", "bfloat16", "int32", "int64", "bool"};
  for (const char* from : dtypes) {
    for (const char* to : dtypes) {
      std::string from_s = from;
      std::string values = from_s == "bool" ? "[true, false, true]" : "[1, 0, 3]";
      std::vector<Tensor> out = RunGraph(std::string("nodes:\n  - {name: x, op: Const, dtype: ") + from +
                                    ", shape: [3], value: " + values + "}\n  - {op: Cast, inputs: [x], DstT: " + to +
                                    "}\n");
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> expected = std::string(to) == "bool" || from_s == "bool"
                                         ? std::vector<double>{1, 0, 1}
                                         : std::vector<double>{1, 0, 3};
      EXPECT_EQ(Values(out[0]), expected) << from << " -> " << to;
      EXPECT_EQ(Name(out[0].dtype()), to);
    }
  }
  std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: x, op: Const, shape: [5], value: [2.9, -2.9, .nan, 1e10, -1e10]}
  - {op: Cast, inputs: [x], DstT: int32})");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values(out[0]), (std::vector<double>{2, -2, INT32_MIN, INT32_MIN, INT32_MIN}));
}

TEST(CpuKernelsTest, VariablesAreInitialisedBeforeUse) {
  std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: v, op: Variable, dtype: int32, shape: [2], value: [4, 5]}
  - {name: w, op: Variable, value: 2.5}
  - {op: Identity, inputs: [v]}
  - {op: Identity, inputs: [w]}
fetch: [Identity, Identity_1])");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Values(out[0]), (std::vector<double>{4, 5}));
  EXPECT_EQ(Values(out[1]), (std::vector<double>{2.5}));
}

TEST(CpuKernelsTest, LargeMatMulUsesThePoolAndIsCorrect) {
  std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: a, op: Const, shape: [64, 300], fill: 0.5}
  - {name: b, op: Const, shape: [300, 70], fill: 2}
  - {op: MatMul, inputs: [a, b]})");
  ASSERT_EQ(out.size(), 1u);
  for (double v : Values(out[0])) ASSERT_EQ(v, 300.0);
}

TEST(CpuKernelsTest, EmptyTensorsRun) {
  std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: a, op: Const, shape: [0, 3], value: []}
  - {name: b, op: Const, shape: [3, 2], value: 1}
  - {op: MatMul, inputs: [a, b]}
  - {op: AddN, inputs: [a, a]})");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{0, 2}));
  EXPECT_EQ(out[1].num_elements(), 0);
}

// Peak memory is the live set, not the sum: a chain of eight 4 MB Adds
// keeps at most two intermediates alive at once, besides the constant the
// device holds (uploaded once into this device's own allocator, as
// TensorFlow's GPU Const kernel holds its tensor).
TEST(CpuKernelsTest, ExecutorFreesIntermediatesAfterLastUse) {
  std::string yaml = "nodes:\n  - {name: x, op: Const, shape: [1048576], fill: 1}\n"
                     "  - {name: a1, op: Add, inputs: [x, x]}\n";
  for (int i = 2; i <= 8; ++i) {
    yaml += "  - {name: a" + std::to_string(i) + ", op: Add, inputs: [a" + std::to_string(i - 1) + ", a" +
            std::to_string(i - 1) + "]}\n";
  }
  yaml += "fetch: [a8]\n";
  StatusOr<Graph> graph = LoadGraphText(yaml, "chain.yaml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  HostAllocator allocator("cpu");
  DeviceSet devices;
  devices.Add(Device::Local("CPU", 0, &allocator));
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices, false, *FindProfile("tf2"), &placement).ok());
  KernelRegistry kernels;
  RegisterCpuKernels(&kernels);
  Executor executor(*graph, devices, placement, kernels);
  StatusOr<RunResult> result = executor.Run(graph->fetch);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->fetched[0].data<float>()[12345], 256.0f);
  const size_t tensor_bytes = 4u << 20;
  EXPECT_LE(allocator.peak_bytes_in_use(), 3 * tensor_bytes);
  EXPECT_EQ(allocator.bytes_in_use(), 2 * tensor_bytes);  // x and the fetched a8
  // Later runs reuse the uploaded constant.
  result->fetched.clear();
  result = executor.Run(graph->fetch);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_LE(allocator.peak_bytes_in_use(), 3 * tensor_bytes);
}

// Runs a loaded graph on CPU:0 with `feeds` (tensor name -> host tensor),
// fetching `fetch` (tensor names; none: the graph's own fetches), with
// `style`; returns the run's result or error.
StatusOr<RunResult> RunLoaded(StatusOr<Graph> graph, const std::vector<std::pair<std::string, Tensor>>& feeds,
                              const std::vector<std::string>& fetch, NodeErrorStyle style = {}) {
  if (!graph.ok()) return graph.status();
  static const DeviceSet devices = DeviceSet::CpuOnly();
  Placement placement;
  TFRUN_RETURN_IF_ERROR(PlaceGraph(*graph, devices, false, *FindProfile("tf2"), &placement));
  KernelRegistry kernels;
  RegisterCpuKernels(&kernels);
  Executor executor(*graph, devices, placement, kernels);
  executor.set_node_error_style(style);
  std::vector<Feed> fed;
  for (const auto& [name, value] : feeds) {
    TFRUN_ASSIGN_OR_RETURN(const NodeOutput output, graph->FindOutput(name, "feed"));
    fed.push_back({output, value});
  }
  std::vector<NodeOutput> outputs = graph->fetch;
  if (!fetch.empty()) {
    outputs.clear();
    for (const std::string& f : fetch) {
      TFRUN_ASSIGN_OR_RETURN(const NodeOutput output, graph->FindOutput(f, "fetch"));
      outputs.push_back(output);
    }
  }
  return executor.Run(outputs, fed);
}

// `yaml`, a graph file's text.
StatusOr<RunResult> RunFed(const std::string& yaml, const std::vector<std::pair<std::string, Tensor>>& feeds,
                           std::vector<std::string> fetch = {}, NodeErrorStyle style = {}) {
  return RunLoaded(LoadGraphText(yaml, "k.yaml"), feeds, fetch, style);
}

// The graph file at `path` (a GraphDef).
StatusOr<RunResult> RunGraphFile(const std::string& path, const std::vector<std::string>& fetch,
                                 const std::vector<std::pair<std::string, Tensor>>& feeds = {}) {
  return RunLoaded(LoadAnyGraphFile(path, LoadOptions(), GraphDefImportOptions(), nullptr), feeds, fetch);
}

Tensor Floats(Shape shape, std::vector<float> values) {
  Tensor t = Tensor::AllocateHost(DType::kFloat32, std::move(shape)).value();
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

TEST(CpuKernelsTest, SplitAndConcatAlongEitherAxis) {
  const std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: x, op: Const, value: [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]}
  - {name: cols, op: Split, num_split: 2, axis: -1, inputs: [x]}
  - {name: rows, op: Split, num_split: 3, inputs: [x]}
  - {name: swapped, op: ConcatV2, axis: 1, inputs: ["cols:1", cols]}
  - {name: back, op: ConcatV2, axis: 0, inputs: ["rows:2", "rows:1", rows]}
fetch: [swapped, back, "cols:1"]
)");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(Values(out[0]), (std::vector<double>{3, 4, 1, 2, 7, 8, 5, 6, 11, 12, 9, 10}));
  EXPECT_EQ(Values(out[1]), (std::vector<double>{9, 10, 11, 12, 5, 6, 7, 8, 1, 2, 3, 4}));
  EXPECT_EQ(out[2].shape(), (Shape{3, 2}));
  EXPECT_EQ(Values(out[2]), (std::vector<double>{3, 4, 7, 8, 11, 12}));
}

// A large ConcatV2 copies its output's bytes on several threads, chunks
// crossing rows and pieces (one empty) anywhere: every element lands where
// one thread puts it.
TEST(CpuKernelsTest, ALargeConcatSplitAcrossThreadsKeepsEveryElement) {
  const int64_t rows = 3, a_cols = 250001, c_cols = 350003;  // 7.2 MB out, chunks of 2 MB or more
  std::vector<float> a(rows * a_cols), c(rows * c_cols);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  for (size_t i = 0; i < c.size(); ++i) c[i] = -static_cast<float>(i);
  for (const int threads : {2, 3}) {  // chunks of 1.5 rows, and of one
    ScopedKernelThreads kernel_threads(threads);
    StatusOr<RunResult> r = RunFed(R"(nodes:
  - {name: a, op: Placeholder, shape: [3, 250001]}
  - {name: b, op: Placeholder, shape: [3, 0]}
  - {name: c, op: Placeholder, shape: [3, 350003]}
  - {name: joined, op: ConcatV2, axis: 1, inputs: [a, b, c]}
fetch: [joined]
)",
                                   {{"a", Floats({rows, a_cols}, a)}, {"b", Floats({rows, 0}, {})},
                                    {"c", Floats({rows, c_cols}, c)}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const Tensor& out = r->fetched[0];
    ASSERT_EQ(out.shape(), (Shape{rows, a_cols + c_cols}));
    int differ = 0;
    for (int64_t i = 0; i < rows; ++i) {
      const float* o = out.data<float>() + i * (a_cols + c_cols);
      for (int64_t k = 0; k < a_cols; ++k) differ += o[k] != a[i * a_cols + k];
      for (int64_t k = 0; k < c_cols; ++k) differ += o[a_cols + k] != c[i * c_cols + k];
    }
    EXPECT_EQ(differ, 0) << threads << " threads";
  }
}

TEST(CpuKernelsTest, BiasAddAndReluKeepNanAndNegativeZero) {
  const std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: v, op: Const, value: [[1.0, -2.0, .nan], [-0.0, 0.5, -3.0]]}
  - {name: b, op: Const, value: [0.5, 1.0, 1.0]}
  - {op: BiasAdd, inputs: [v, b]}
  - {op: Relu, inputs: [BiasAdd]}
  - {name: r, op: Relu, inputs: [v]}
fetch: [BiasAdd, Relu, r]
)");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(Values(out[0])[0], 1.5);
  EXPECT_EQ(Values(out[0])[5], -2.0);
  EXPECT_TRUE(std::isnan(Values(out[1])[2]));
  EXPECT_EQ(Values(out[1])[1], 0.0);
  EXPECT_TRUE(std::signbit(Values(out[2])[3]));  // six elements: Eigen's scalar path keeps -0.0
}

// TensorFlow 2.21 (CPU, TF_ENABLE_ONEDNN_OPTS=0) on relu of n float32
// -0.0s prints "-" for n < 8, eight "+" for n = 8, "+" x 8 then "-" for 9;
// float64 turns at 4; float16 and bfloat16 keep every -0.0.
TEST(CpuKernelsTest, ReluOfNegativeZeroFollowsEigensPackets) {
  auto signs = [](const std::string& dtype, int n) {
    std::string zeros;
    for (int i = 0; i < n; ++i) zeros += i ? ", -0.0" : "-0.0";
    const std::vector<Tensor> out = RunGraph(fmt::format(R"(nodes:
  - {{name: v, op: Const, dtype: {}, value: [{}]}}
  - {{op: Relu, inputs: [v]}}
fetch: [Relu]
)", dtype, zeros));
    std::string s;
    for (double x : Values(out[0])) s += std::signbit(x) ? '-' : '+';
    return s;
  };
  EXPECT_EQ(signs("float32", 6), "------");
  EXPECT_EQ(signs("float32", 8), "++++++++");
  EXPECT_EQ(signs("float32", 9), "++++++++-");
  EXPECT_EQ(signs("float64", 3), "---");
  EXPECT_EQ(signs("float64", 6), "++++--");
  EXPECT_EQ(signs("float16", 9), "---------");
  EXPECT_EQ(signs("bfloat16", 8), "--------");
}

// AddN adds in TensorFlow's order (1 + 1e8 rounds to 1e8 in float32, so
// the order shows): its inputs sorted by name (Grappler); the first one
// whose buffer the kernel may take moved to the front; ten inputs as the
// first two, then the next eight summed and added (aggregate_ops.h).
// TensorFlow 2.21 prints 0, 1 and 1 for this graph with variables in place
// of the constants (which Grappler would fold); graphs/tf/addn_order_run.run
// is such a graph's golden.
TEST(CpuKernelsTest, AddNAddsInTensorFlowsOrder) {
  const std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: a, op: Const, value: [1.0]}
  - {name: b, op: Const, value: [1.0e8]}
  - {name: c, op: Const, value: [-1.0e8]}
  - {name: sorted, op: AddN, inputs: [c, b, a]}
  - {name: x, op: Const, value: [1.0e8]}
  - {name: zero, op: Const, value: [0.0]}
  - {name: f, op: Sub, inputs: [zero, x]}
  - {name: taken, op: AddN, inputs: [a, b, f]}
  - {name: k0, op: Const, value: [1.0]}
  - {name: k1, op: Const, value: [0.0]}
  - {name: k2, op: Const, value: [1.0e8]}
  - {name: k3, op: Const, value: [-1.0e8]}
  - {name: ten, op: AddN, inputs: [k0, k1, k2, k3, k1, k1, k1, k1, k1, k1]}
fetch: [sorted, taken, ten]
)");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(Values(out[0]), std::vector<double>{0.0});  // (a + b) + c, not (c + b) + a = 1
  EXPECT_EQ(Values(out[1]), std::vector<double>{1.0});  // (f + b) + a: f's buffer holds the sum
  EXPECT_EQ(Values(out[2]), std::vector<double>{1.0});  // (k0 + k1) + (k2 + k3 + ...), not 0
}

// ReluGrad(gradients, features) is gradients * (features > 0 ? 1 : 0) in
// every lane (relu_op_functor.h): above the pool's size, on its threads,
// as in a whole tensor's packets and its tail. (Its NaN, infinite and -0.0
// cases are TensorFlow's output in graphs/tf/gradient_forms_run.run.)
TEST(CpuKernelsTest, ReluGradIsTheGradientTimesOneOrZeroInEveryLane) {
  StatusOr<RunResult> result =
      RunGraphFile("graphs/tf/gradient_forms_run.pbtxt", {"relu_grad_large", "relu_large_g", "relu_large_f"});
  ASSERT_TRUE(result.ok()) << result.status().message();
  const Tensor& out = result->fetched[0];
  const Tensor& g = result->fetched[1];
  const Tensor& f = result->fetched[2];
  ASSERT_EQ(out.num_elements(), 100003);
  int differ = 0;
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const float want = g.data<float>()[i] * (f.data<float>()[i] > 0.0f ? 1.0f : 0.0f);
    differ += std::memcmp(&want, out.data<float>() + i, sizeof(float)) != 0;
  }
  EXPECT_EQ(differ, 0);
}

// MaxPoolGrad: each window's gradient goes to its first maximum, a later
// position only when strictly greater (a NaN never replaces nor is
// replaced), in every lane of its searches: depth 13 takes the eight-lane
// (AVX2, where the processor has it), four-lane and one-by-one forms, on
// windows with ties and NaNs.
TEST(CpuKernelsTest, MaxPoolGradGivesEachWindowsGradientToItsFirstMaximum) {
  const int64_t batch = 2, rows = 5, cols = 6, depth = 13, out_rows = 3, out_cols = 3;
  std::vector<float> x(batch * rows * cols * depth), g(batch * out_rows * out_cols * depth);
  uint32_t state = 7;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    const uint32_t r = state >> 24;
    v = r < 8 ? NAN : static_cast<float>(r % 5);  // few values: many ties
  }
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i + 1);
  // A GraphDef (graph files name no MaxPoolGrad): three placeholders.
  const std::string path = ::testing::TempDir() + "/max_pool_grad.pbtxt";
  std::ofstream(path) << R"(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "g" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "dx" op: "MaxPoolGrad" input: "x" input: "y" input: "g"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "ksize" value { list { i: 1 i: 3 i: 3 i: 1 } } }
  attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } }
  attr { key: "padding" value { s: "SAME" } }
  attr { key: "data_format" value { s: "NHWC" } } }
)";
  StatusOr<RunResult> r =
      RunGraphFile(path, {"dx"},
                   {{"x", Floats({batch, rows, cols, depth}, x)},
                    {"y", Floats({batch, out_rows, out_cols, depth}, std::vector<float>(g.size()))},
                    {"g", Floats({batch, out_rows, out_cols, depth}, g)}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // SAME, 3x3 stride 2 over 5x6 into 3x3: rows padded by 2 in all, one on
  // top ((3 - 1) * 2 + 3 - 5, the top the smaller half), columns by 1, none
  // on the left.
  std::vector<float> want(x.size(), 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t orow = 0; orow < out_rows; ++orow) {
      for (int64_t ocol = 0; ocol < out_cols; ++ocol) {
        for (int64_t k = 0; k < depth; ++k) {
          const int64_t r0 = std::max<int64_t>(0, orow * 2 - 1), c0 = ocol * 2;
          const int64_t r1 = std::min<int64_t>(rows, orow * 2 - 1 + 3), c1 = std::min<int64_t>(cols, c0 + 3);
          int64_t best = ((b * rows + r0) * cols + c0) * depth + k;
          for (int64_t yy = r0; yy < r1; ++yy) {
            for (int64_t xx = c0; xx < c1; ++xx) {
              const int64_t at = ((b * rows + yy) * cols + xx) * depth + k;
              if (x[at] > x[best]) best = at;
            }
          }
          want[best] += g[((b * out_rows + orow) * out_cols + ocol) * depth + k];
        }
      }
    }
  }
  const Tensor& dx = r->fetched[0];
  ASSERT_EQ(dx.num_elements(), static_cast<int64_t>(want.size()));
  int differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += dx.data<float>()[i] != want[i];
  EXPECT_EQ(differ, 0);
}

// Conv2DBackpropInput, on the forward convolution of the turned-around
// filter where strides and dilations are 1 and on oneDNN's backward-data
// kernel elsewhere: against the definition (each input position sums
// out_backprop times the filter over every output whose window covers it),
// on small integers, whose sums are exact in any order. The geometries take
// both paths: odd and even filters (SAME pads an even one unequally), VALID,
// explicit padding wider than the filter allows for the forward form,
// strides and dilations.
TEST(CpuKernelsTest, Conv2DBackpropInputIsTheDefinitionOnEveryPath) {
  struct Case {
    int64_t batch, rows, cols, in_depth, filter_rows, filter_cols, out_depth, stride, dilation;
    std::string padding;
    std::vector<int64_t> pads;  // EXPLICIT: top, bottom, left, right
  };
  const std::vector<Case> cases = {
      {2, 7, 6, 3, 3, 3, 5, 1, 1, "SAME", {}},        {2, 8, 7, 4, 4, 2, 3, 1, 1, "SAME", {}},
      {1, 9, 7, 5, 3, 2, 8, 1, 1, "VALID", {}},       {2, 6, 6, 2, 2, 3, 4, 1, 1, "EXPLICIT", {0, 1, 2, 1}},
      {1, 5, 5, 2, 2, 2, 3, 1, 1, "EXPLICIT", {2, 0, 0, 3}}, {2, 9, 8, 3, 3, 3, 4, 2, 1, "SAME", {}},
      {1, 9, 9, 2, 3, 3, 3, 1, 2, "SAME", {}},        {1, 6, 6, 1, 1, 1, 1, 1, 1, "VALID", {}}};
  int index = 0;
  for (const Case& k : cases) {
    SCOPED_TRACE(index);
    const int64_t span_rows = (k.filter_rows - 1) * k.dilation + 1, span_cols = (k.filter_cols - 1) * k.dilation + 1;
    int64_t out_rows = 0, out_cols = 0, top = 0, left = 0;
    if (k.padding == "VALID") {
      out_rows = (k.rows - span_rows) / k.stride + 1;
      out_cols = (k.cols - span_cols) / k.stride + 1;
    } else if (k.padding == "SAME") {
      out_rows = (k.rows + k.stride - 1) / k.stride;
      out_cols = (k.cols + k.stride - 1) / k.stride;
      top = std::max<int64_t>((out_rows - 1) * k.stride + span_rows - k.rows, 0) / 2;
      left = std::max<int64_t>((out_cols - 1) * k.stride + span_cols - k.cols, 0) / 2;
    } else {
      out_rows = (k.rows + k.pads[0] + k.pads[1] - span_rows) / k.stride + 1;
      out_cols = (k.cols + k.pads[2] + k.pads[3] - span_cols) / k.stride + 1;
      top = k.pads[0];
      left = k.pads[2];
    }
    std::vector<float> filter(k.filter_rows * k.filter_cols * k.in_depth * k.out_depth);
    std::vector<float> grad(k.batch * out_rows * out_cols * k.out_depth);
    uint32_t state = 11 + index;
    for (auto* values : {&filter, &grad}) {
      for (float& v : *values) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<float>(static_cast<int>(state >> 29) - 3);  // -3 .. 4
      }
    }
    std::string pads;
    for (int64_t p : k.pads) pads += fmt::format(" i: {}", p);
    const std::string path = ::testing::TempDir() + "/conv_backprop_input.pbtxt";
    std::ofstream(path) << fmt::format(R"(
node {{ name: "sizes" op: "Const" attr {{ key: "dtype" value {{ type: DT_INT32 }} }}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{ dim {{ size: 4 }} }}
    int_val: {} int_val: {} int_val: {} int_val: {} }} }} }} }}
node {{ name: "w" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "g" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "dx" op: "Conv2DBackpropInput" input: "sizes" input: "w" input: "g"
  attr {{ key: "T" value {{ type: DT_FLOAT }} }}
  attr {{ key: "strides" value {{ list {{ i: 1 i: {} i: {} i: 1 }} }} }}
  attr {{ key: "dilations" value {{ list {{ i: 1 i: {} i: {} i: 1 }} }} }}
  attr {{ key: "padding" value {{ s: "{}" }} }}
  attr {{ key: "explicit_paddings" value {{ list {{ i: 0 i: 0{} i: 0 i: 0 }} }} }}
  attr {{ key: "data_format" value {{ s: "NHWC" }} }} }}
)",
                                       k.batch, k.rows, k.cols, k.in_depth, k.stride, k.stride, k.dilation,
                                       k.dilation, k.padding, pads);
    StatusOr<RunResult> r = RunGraphFile(
        path, {"dx"},
        {{"w", Floats({k.filter_rows, k.filter_cols, k.in_depth, k.out_depth}, filter)},
         {"g", Floats({k.batch, out_rows, out_cols, k.out_depth}, grad)}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::vector<float> want(k.batch * k.rows * k.cols * k.in_depth, 0.0f);
    for (int64_t b = 0; b < k.batch; ++b) {
      for (int64_t orow = 0; orow < out_rows; ++orow) {
        for (int64_t ocol = 0; ocol < out_cols; ++ocol) {
          for (int64_t fr = 0; fr < k.filter_rows; ++fr) {
            for (int64_t fc = 0; fc < k.filter_cols; ++fc) {
              const int64_t row = orow * k.stride - top + fr * k.dilation;
              const int64_t col = ocol * k.stride - left + fc * k.dilation;
              if (row < 0 || row >= k.rows || col < 0 || col >= k.cols) continue;
              for (int64_t i = 0; i < k.in_depth; ++i) {
                for (int64_t o = 0; o < k.out_depth; ++o) {
                  want[((b * k.rows + row) * k.cols + col) * k.in_depth + i] +=
                      filter[((fr * k.filter_cols + fc) * k.in_depth + i) * k.out_depth + o] *
                      grad[((b * out_rows + orow) * out_cols + ocol) * k.out_depth + o];
                }
              }
            }
          }
        }
      }
    }
    const Tensor& dx = r->fetched[0];
    ASSERT_EQ(dx.num_elements(), static_cast<int64_t>(want.size()));
    int differ = 0;
    for (size_t i = 0; i < want.size(); ++i) differ += dx.data<float>()[i] != want[i];
    EXPECT_EQ(differ, 0);
    ++index;
  }
}

// LRNGrad against LaunchLRNGrad's loop (lrn_op.cc) written out here, bit
// for bit: rows whose gradients are mostly zero (after max pooling; pow
// only where a gradient is) and rows that are dense, depths with and
// without a tail of eight, CIFAR-10's parameters.
TEST(CpuKernelsTest, LrnGradIsTensorFlowsLoopOnSparseAndDenseRows) {
  for (const int64_t depth : {64, 13}) {
    SCOPED_TRACE(depth);
    const int64_t rows = 40, radius = 4;
    const float bias = 1.0f, alpha = 0.001f / 9.0f, beta = 0.75f;
    std::vector<float> x(rows * depth), y(rows * depth), g(rows * depth);
    uint32_t state = 5;
    auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) / 16777216.0f;
    };
    for (float& v : x) v = 4.0f * next() - 2.0f;
    for (float& v : y) v = next();
    for (int64_t i = 0; i < rows; ++i) {
      const bool sparse = i % 3 != 0;
      for (int64_t j = 0; j < depth; ++j) g[i * depth + j] = sparse && next() < 0.8f ? 0.0f : next() - 0.5f;
    }
    const std::string path = ::testing::TempDir() + "/lrn_grad.pbtxt";
    std::ofstream(path) << fmt::format(R"(
node {{ name: "g" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "x" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "y" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "dx" op: "LRNGrad" input: "g" input: "x" input: "y"
  attr {{ key: "T" value {{ type: DT_FLOAT }} }}
  attr {{ key: "depth_radius" value {{ i: {} }} }}
  attr {{ key: "bias" value {{ f: {} }} }}
  attr {{ key: "alpha" value {{ f: {} }} }}
  attr {{ key: "beta" value {{ f: {} }} }} }}
)",
                                       radius, bias, alpha, beta);
    const Shape shape = {1, 1, rows, depth};
    StatusOr<RunResult> r = RunGraphFile(path, {"dx"}, {{"g", Floats(shape, g)}, {"x", Floats(shape, x)}, {"y", Floats(shape, y)}});
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::vector<float> want(rows * depth, 0.0f);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < depth; ++j) {
        const float gs = g[i * depth + j];
        if (gs == 0.0f) continue;
        const int64_t k0 = std::max<int64_t>(0, j - radius), k1 = std::min<int64_t>(depth, j + radius + 1);
        float norm = 0.0f;
        for (int64_t k = j - radius; k <= j + radius; ++k) {
          if (k >= 0 && k < depth) norm += x[i * depth + k] * x[i * depth + k];
        }
        const float scaled = norm * alpha;
        norm = scaled + bias;
        const float power = std::pow(norm, -beta);
        const float ab2 = -2.0f * alpha * beta * y[i * depth + j];
        for (int64_t k = k0; k < k1; ++k) {
          float dyi = (x[i * depth + k] * ab2) / norm;
          if (k == j) dyi += power;
          dyi *= gs;
          want[i * depth + k] += dyi;
        }
      }
    }
    const Tensor& dx = r->fetched[0];
    int differ = 0;
    for (size_t i = 0; i < want.size(); ++i) differ += std::memcmp(&dx.data<float>()[i], &want[i], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0);
  }
}

constexpr const char* kFedTowers = R"(nodes:
  - {name: x, op: Placeholder, shape: [null, 2]}
  - {name: split, op: Split, num_split: 2, inputs: [x]}
  - {name: w, op: Const, value: [[1.0], [10.0]]}
  - {name: a, op: MatMul, inputs: [split, w]}
  - {name: b, op: MatMul, inputs: ["split:1", w]}
  - {name: joined, op: ConcatV2, axis: 0, inputs: [a, b]}
)";

TEST(CpuKernelsTest, FeedsReplaceOutputsAndPruneWhatOnlyTheyNeeded) {
  StatusOr<RunResult> r = RunFed(kFedTowers, {{"x", Floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->fetched[0].shape(), (Shape{4, 1}));
  EXPECT_EQ(Values(r->fetched[0]), (std::vector<double>{21, 43, 65, 87}));
  // Feeding split:1 replaces that output only; split still runs for split:0.
  r = RunFed(kFedTowers, {{"x", Floats({2, 2}, {1, 2, 3, 4})}, {"split:1", Floats({1, 2}, {0, 1})}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values(r->fetched[0]), (std::vector<double>{21, 10}));
  // Feeding both outputs of split prunes it, and x with it: nothing unfed runs.
  r = RunFed(kFedTowers, {{"split:0", Floats({1, 2}, {1, 0})}, {"split:1", Floats({1, 2}, {0, 1})}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values(r->fetched[0]), (std::vector<double>{1, 10}));
  // A fetched fed tensor is the fed value.
  r = RunFed(kFedTowers, {{"split:1", Floats({1, 2}, {7, 7})}}, {"split:1"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Values(r->fetched[0]), (std::vector<double>{7, 7}));
}

TEST(CpuKernelsTest, UnfedPlaceholderAndRuntimeShapesFailWithTheOpsTexts) {
  StatusOr<RunResult> r = RunFed(kFedTowers, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kRuntime);
  EXPECT_EQ(r.status().message(),
            "k.yaml:2:5: node 'x' on /job:localhost/replica:0/task:0/device:CPU:0: InvalidArgumentError: You must "
            "feed a value for placeholder tensor 'x' with dtype float and shape [?,2]\n\t [[{{node x}}]]");
  r = RunFed(kFedTowers, {{"x", Floats({3, 2}, {1, 2, 3, 4, 5, 6})}}, {}, {NodeErrorLine::kNodeDef, true});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "Number of ways to split should evenly divide the split dimension, but got split_dim 0 (size = 3) and "
                "num_split 2\n\t [[Node: split = Split[T=DT_FLOAT, num_split=2, "
                "_device=\"/job:localhost/replica:0/task:0/cpu:0\"](split/split_dim, x)]]"),
            std::string::npos)
      << r.status().message();
  // Shapes only a feed makes wrong fail in the kernel, as TensorFlow's do.
  const char* two = R"(nodes:
  - {name: p, op: Placeholder, shape: [null]}
  - {name: q, op: Placeholder, shape: [null]}
  - {op: Add, inputs: [p, q]}
  - {name: m, op: Placeholder, shape: [null, null]}
  - {op: MatMul, inputs: [m, m]}
  - {op: ConcatV2, axis: 1, inputs: [m, m]}
)";
  r = RunFed(two, {{"p", Floats({2}, {1, 2})}, {"q", Floats({3}, {1, 2, 3})}}, {"Add"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("InvalidArgumentError: Incompatible shapes: [2] vs. [3]"), std::string::npos);
  r = RunFed(two, {{"m", Floats({2, 3}, {1, 2, 3, 4, 5, 6})}}, {"MatMul"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]"), std::string::npos);
  r = RunFed(two, {{"m", Floats({2, 3}, {1, 2, 3, 4, 5, 6})}}, {"concat"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->fetched[0].shape(), (Shape{2, 6}));
}

// Every op a graph file can hold runs on the CPU in every dtype tfrun
// takes for it that TensorFlow has a CPU kernel for: whatever TensorFlow
// places on CPU:0, tfrun can run.
TEST(CpuKernelsTest, EveryOpRunsOnTheCpuWhereTensorFlowHasAKernel) {
  KernelRegistry kernels;
  RegisterCpuKernels(&kernels);
  for (const OpDef& def : AllOps()) {
    const std::string_view op = def.type == "Variable" ? std::string_view("VariableV2") : def.type;
    for (DType dtype : kAllDTypes) {
      if (!def.allowed_dtypes.Contains(dtype) || !TfHasKernelFor(op, dtype, kCpu)) continue;
      EXPECT_NE(kernels.Find(op, kCpu, dtype), nullptr) << op << " " << Name(dtype);
    }
  }
}

// TensorFlow 2.21 (CPU): bfloat16 products in float32, then truncated.
TEST(CpuKernelsTest, Bfloat16MatMulTruncatesLikeTensorFlow) {
  const std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: a, op: Const, dtype: bfloat16, value: [[1.5], [1.0]]}
  - {name: b, op: Const, dtype: bfloat16, value: [[1.0390625, 1.0078125]]}
  - {name: c, op: Const, dtype: bfloat16, value: [[1.0, 1.0, 1.0]]}
  - {name: d, op: Const, dtype: bfloat16, value: [[1.0], [0.00390625], [0.00390625]]}
  - {name: p, op: MatMul, inputs: [a, b]}
  - {name: q, op: MatMul, inputs: [c, d]}
fetch: [p, q]
)");
  ASSERT_EQ(out.size(), 2u);
  // 1.5 x 1.0390625 = 1.55859375: TensorFlow prints 1.55469 (truncated).
  EXPECT_EQ(Values(out[0]), (std::vector<double>{1.5546875, 1.5078125, 1.0390625, 1.0078125}));
  // Summed in float32 (1.0078125), not step by step in bfloat16 (1.0).
  EXPECT_EQ(Values(out[1]), (std::vector<double>{1.0078125}));
}

// TensorFlow 2.21 (CPU) on zero times negative: -0.0 only with a
// transposed operand, a dimension of 1 and M + K + N < 20.
TEST(CpuKernelsTest, MatMulSignsZerosAsTensorFlow) {
  auto signs = [](const std::string& a, const std::string& b, bool ta, bool tb) {
    const std::vector<Tensor> out = RunGraph(fmt::format(R"(nodes:
  - {{name: a, op: Const, value: {}}}
  - {{name: b, op: Const, value: {}}}
  - {{op: MatMul, inputs: [a, b], transpose_a: {}, transpose_b: {}}}
fetch: [MatMul]
)", a, b, ta, tb));
    std::string s;
    for (double x : Values(out[0])) s += x != 0 ? '.' : std::signbit(x) ? '-' : '+';
    return s;
  };
  // The issue's case: [[0, 8]]^T x [[-3, 0, 5, -8]].
  EXPECT_EQ(signs("[[0, 8]]", "[[-3, 0, 5, -8]]", true, false), "-++-.+..");  // [[-0. 0. 0. -0.] [-24. 0. 40. -64.]]
  EXPECT_EQ(signs("[[0]]", "[[-4, 5]]", false, false), "++");
  EXPECT_EQ(signs("[[0, 0]]", "[[-1], [-1]]", false, false), "+");       // no transpose: from +0.0
  EXPECT_EQ(signs("[[0], [0]]", "[[-1], [-1]]", true, false), "-");      // M = N = 1, K = 2
  EXPECT_EQ(signs("[[0], [0]]", "[[-1], [1]]", true, false), "+");       // -0.0 + 0.0
  EXPECT_EQ(signs("[[0, 0], [0, 0]]", "[[-1, -1], [-1, -1]]", true, false), "++++");  // all dims 2: Eigen's GEMM
}

// TensorFlow 2.21 prints 14.550002 for [[3, -3]] x [[-4.45], [-9.3]]: each
// product rounded, then summed (a fused multiply-add gives 14.550001).
TEST(CpuKernelsTest, VectorProductsRoundEachProductAsTensorFlow) {
  const std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: a, op: Const, value: [[3, -3]]}
  - {name: b, op: Const, value: [[-4.45], [-9.3]]}
  - {name: r, op: MatMul, inputs: [a, b]}
fetch: [r]
)");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(static_cast<float>(Values(out[0])[0]), 14.550002f);
}

// NumPy's broadcasting: [2,1,3] + [4,1] is [2,4,3]; [2,3] - [3]; a fed
// shape that does not broadcast fails at run time with BCast's text.
TEST(CpuKernelsTest, BinaryOpsBroadcastLikeNumpy) {
  const std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: a, op: Const, dtype: int32, value: [[[1, 2, 3]], [[4, 5, 6]]]}
  - {name: b, op: Const, dtype: int32, value: [[0], [10], [20], [30]]}
  - {name: m, op: Const, value: [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]}
  - {name: r, op: Const, value: [0.5, 1.0, 1.5]}
  - {name: sum, op: Add, inputs: [a, b]}
  - {name: diff, op: Sub, inputs: [m, r]}
  - {name: prod, op: Mul, inputs: [r, m]}
fetch: [sum, diff, prod]
)");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 3}));
  // np.array([[[1,2,3]],[[4,5,6]]]) + np.array([[0],[10],[20],[30]])
  EXPECT_EQ(Values(out[0]), (std::vector<double>{1,  2,  3,  11, 12, 13, 21, 22, 23, 31, 32, 33,
                                                 4,  5,  6,  14, 15, 16, 24, 25, 26, 34, 35, 36}));
  EXPECT_EQ(Values(out[1]), (std::vector<double>{1, 1.5, 2, 4, 4.5, 5}));
  EXPECT_EQ(Values(out[2]), (std::vector<double>{0.75, 2.5, 5.25, 2.25, 5.5, 9.75}));
}

// tf.matmul of bfloat16 and float32: a SparseMatMul, float32 out.
TEST(CpuKernelsTest, MixedBfloat16MatMulIsAFloat32Product) {
  const std::vector<Tensor> out = RunGraph(R"(nodes:
  - {name: a, op: Const, dtype: bfloat16, value: [[1.5, -2.0]]}
  - {name: b, op: Const, value: [[2.25], [0.125]]}
  - {op: MatMul, inputs: [a, b]}
fetch: [MatMul]
)");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DType::kFloat32);
  EXPECT_EQ(Values(out[0]), (std::vector<double>{3.125}));
}

// Runs the CPU kernel bound for `op` and `dtype` on `inputs`, as a node
// with `num_outputs` outputs; the kernel's status and output.
struct BoundRun {
  Status status;
  Tensor output;
  std::vector<Tensor> outputs;  // a kernel of several outputs's
};
BoundRun RunBound(const std::string& op, DType dtype, std::vector<Tensor> inputs, int num_outputs = 1) {
  static const KernelRegistry kernels = [] {
    KernelRegistry k;
    RegisterCpuKernels(&k);
    return k;
  }();
  Node node;
  node.name = "k";
  node.op = op;
  node.dtype = dtype;
  node.num_outputs = num_outputs;
  KernelFn kernel = kernels.Find(op, kCpu, dtype);
  EXPECT_NE(kernel, nullptr) << op;
  if (kernel == nullptr) return {};
  VariableStore variables;
  DeviceConstants constants;
  KernelContext c{node, std::move(inputs), CpuAllocator(), "/job:localhost/replica:0/task:0/device:CPU:0",
                  &variables, &constants, nullptr};
  Status status = kernel(c);
  return {status, c.output, c.outputs};
}

template <typename T>
Tensor Vector(DType dtype, std::vector<T> values, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  Tensor t = Tensor::AllocateHost(dtype, shape).value();
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}
template <typename T>
Tensor Scalar(DType dtype, T value) {
  Tensor t = Tensor::AllocateHost(dtype, {}).value();
  t.data<T>()[0] = value;
  return t;
}

std::vector<int64_t> Int64s(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetAsInt64(i));
  return v;
}

// INT_MIN % -1 traps in C++ (SIGFPE); TensorFlow 2.21's FloorMod gives 0
// and FloorDiv INT_MIN, as its Session returned for these inputs.
TEST(CpuKernelsTest, FloorModAndFloorDivOfTheMostNegativeIntegerByMinusOne) {
  const int32_t min32 = std::numeric_limits<int32_t>::min();
  BoundRun mod = RunBound("FloorMod", DType::kInt32, {Vector<int32_t>(DType::kInt32, {min32, 7, -7}),
                                                      Vector<int32_t>(DType::kInt32, {-1, -1, -1})});
  ASSERT_TRUE(mod.status.ok()) << mod.status.message();
  EXPECT_EQ(Int64s(mod.output), (std::vector<int64_t>{0, 0, 0}));
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  BoundRun mod64 = RunBound("FloorMod", DType::kInt64, {Vector<int64_t>(DType::kInt64, {min64}),
                                                        Vector<int64_t>(DType::kInt64, {-1})});
  ASSERT_TRUE(mod64.status.ok());
  EXPECT_EQ(Int64s(mod64.output), (std::vector<int64_t>{0}));
  BoundRun div = RunBound("FloorDiv", DType::kInt32, {Vector<int32_t>(DType::kInt32, {min32}),
                                                      Vector<int32_t>(DType::kInt32, {-1})});
  ASSERT_TRUE(div.status.ok());
  EXPECT_EQ(Int64s(div.output), (std::vector<int64_t>{min32}));
  EXPECT_EQ(RunBound("FloorMod", DType::kInt32, {Vector<int32_t>(DType::kInt32, {5}),
                                                 Vector<int32_t>(DType::kInt32, {0})})
                .status.message(),
            "InvalidArgumentError: Integer division by zero");
}

// Range as TensorFlow 2.21's Session computed it: an int64 span wider than
// int64 counted in unsigned arithmetic, not overflowed; its texts, floats
// in six digits (DERIVATIONS.md, "Hostile graphs").
TEST(CpuKernelsTest, RangeCountsSpansWiderThanItsTypeAsTensorFlow) {
  const int64_t min64 = std::numeric_limits<int64_t>::min(), max64 = std::numeric_limits<int64_t>::max();
  auto range64 = [](int64_t start, int64_t limit, int64_t delta) {
    return RunBound("Range", DType::kInt64, {Scalar(DType::kInt64, start), Scalar(DType::kInt64, limit),
                                             Scalar(DType::kInt64, delta)});
  };
  BoundRun wide = range64(min64 + 5, max64, int64_t{1} << 62);
  ASSERT_TRUE(wide.status.ok()) << wide.status.message();
  EXPECT_EQ(Int64s(wide.output), (std::vector<int64_t>{-9223372036854775803, -4611686018427387899, 5,
                                                       4611686018427387909}));
  BoundRun whole = range64(min64, max64, max64);
  ASSERT_TRUE(whole.status.ok());
  EXPECT_EQ(Int64s(whole.output), (std::vector<int64_t>{min64, -1, max64 - 1}));
  BoundRun down = range64(max64, min64, min64);
  ASSERT_TRUE(down.status.ok());
  EXPECT_EQ(Int64s(down.output), (std::vector<int64_t>{max64, -1}));
  EXPECT_EQ(range64(min64, max64, 1).status.message(),
            "InvalidArgumentError: Requires ((limit - start) / delta) <= 9223372036854775807");
  BoundRun ints = RunBound("Range", DType::kInt32, {Scalar<int32_t>(DType::kInt32, std::numeric_limits<int32_t>::min()),
                                                    Scalar<int32_t>(DType::kInt32, std::numeric_limits<int32_t>::max()),
                                                    Scalar<int32_t>(DType::kInt32, 1 << 30)});
  ASSERT_TRUE(ints.status.ok());
  EXPECT_EQ(Int64s(ints.output), (std::vector<int64_t>{-2147483648, -1073741824, 0, 1073741824}));
  auto range32f = [](float start, float limit, float delta) {
    return RunBound("Range", DType::kFloat32, {Scalar(DType::kFloat32, start), Scalar(DType::kFloat32, limit),
                                               Scalar(DType::kFloat32, delta)});
  };
  EXPECT_EQ(range32f(0.1f, 0.05f, 1).status.message(),
            "InvalidArgumentError: Requires start <= limit when delta > 0: 0.1/0.05");
  EXPECT_EQ(range32f(1234567.0f, 0, 1).status.message(),
            "InvalidArgumentError: Requires start <= limit when delta > 0: 1.23457e+06/0");
  EXPECT_EQ(range32f(0, 1e30f, 1e-10f).status.message(),
            "InvalidArgumentError: Requires ((limit - start) / delta) <= 9223372036854775807");
  EXPECT_EQ(RunBound("Range", DType::kInt32, {Scalar<int32_t>(DType::kInt32, 0), Scalar<int32_t>(DType::kInt32, 5),
                                              Scalar<int32_t>(DType::kInt32, 0)})
                .status.message(),
            "InvalidArgumentError: Requires delta != 0: 0");
  EXPECT_EQ(RunBound("Range", DType::kInt32, {Vector<int32_t>(DType::kInt32, {1}, {1, 1}),
                                              Scalar<int32_t>(DType::kInt32, 5), Scalar<int32_t>(DType::kInt32, 1)})
                .status.message(),
            "InvalidArgumentError: start must be a scalar, not shape [1,1]");
  // Half: TensorFlow's running sum in half precision.
  BoundRun half = RunBound("Range", DType::kFloat16, {Scalar(DType::kFloat16, Eigen::half(0.0f)),
                                                      Scalar(DType::kFloat16, Eigen::half(1.0f)),
                                                      Scalar(DType::kFloat16, Eigen::half(0.3f))});
  ASSERT_TRUE(half.status.ok()) << half.status.message();
  EXPECT_EQ(Values(half.output), (std::vector<double>{0.0, 0.300048828125, 0.60009765625, 0.900390625}));
}

// Shapes whose element count overflows: TensorFlow's texts, never a
// division by an overflowed product.
TEST(CpuKernelsTest, ShapesThatOverflowAreTensorFlowsErrors) {
  const int64_t big = int64_t{1} << 62;
  const Tensor empty = Tensor::AllocateHost(DType::kFloat32, {0}).value();
  EXPECT_EQ(RunBound("Reshape", DType::kFloat32, {empty, Vector<int64_t>(DType::kInt64, {big, big, -1})})
                .status.message(),
            "InvalidArgumentError: Shape [4611686018427387904, 4611686018427387904, -1] has too many elements");
  EXPECT_EQ(RunBound("Reshape", DType::kFloat32, {empty, Vector<int64_t>(DType::kInt64, {big, big})}).status.message(),
            "InvalidArgumentError: Shape [4611686018427387904, 4611686018427387904] has too many elements");
  // TensorFlow aborts on this one (its product of the non-zero sizes
  // overflows after its check); tfrun says the same as above.
  EXPECT_EQ(RunBound("Reshape", DType::kFloat32, {empty, Vector<int64_t>(DType::kInt64, {big, 0, big, -1})})
                .status.message(),
            "InvalidArgumentError: Shape [4611686018427387904, 0, 4611686018427387904, -1] has too many elements");
  EXPECT_EQ(RunBound("Fill", DType::kFloat32, {Vector<int64_t>(DType::kInt64, {big, big}), Scalar(DType::kFloat32, 1.0f)})
                .status.message(),
            "InvalidArgumentError: Shape [4611686018427387904,4611686018427387904] would have more than 2**63 - 1 "
            "elements");
  // A Split of no outputs (an importer refuses it first) divides nothing.
  EXPECT_FALSE(RunBound("Split", DType::kFloat32, {Scalar<int32_t>(DType::kInt32, 0), Vector<float>(DType::kFloat32, {1, 2})},
                        0)
                   .status.ok());
}

// SplitV and BroadcastTo (a MirroredStrategy step's SGD unpacking its
// all-reduced gradients; a Keras metric's sample weights), with
// TensorFlow's texts (split_v_op.cc, broadcast_to_op.cc).
TEST(ArrayKernels, SplitVAndBroadcastTo) {
  const Tensor value = Vector<float>(DType::kFloat32, {1, 2, 3, 4, 5});
  BoundRun split = RunBound("SplitV", DType::kFloat32,
                            {value, Vector<int64_t>(DType::kInt64, {2, -1}), Scalar<int32_t>(DType::kInt32, 0)}, 2);
  ASSERT_TRUE(split.status.ok()) << split.status.message();
  ASSERT_EQ(split.outputs.size(), 2u);
  EXPECT_EQ(Values(split.outputs[0]), (std::vector<double>{1, 2}));
  EXPECT_EQ(Values(split.outputs[1]), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(RunBound("SplitV", DType::kFloat32,
                     {value, Vector<int64_t>(DType::kInt64, {-1, -1}), Scalar<int32_t>(DType::kInt32, 0)}, 2)
                .status.message(),
            "InvalidArgumentError: There can only be one -1 in the input.");
  EXPECT_NE(RunBound("SplitV", DType::kFloat32,
                     {value, Vector<int64_t>(DType::kInt64, {2, 2}), Scalar<int32_t>(DType::kInt32, 0)}, 2)
                .status.message()
                .find("Determined shape must either match input shape along split_dim exactly"),
            std::string::npos);
  BoundRun broadcast = RunBound("BroadcastTo", DType::kFloat32,
                                {Vector<float>(DType::kFloat32, {1, 2}), Vector<int32_t>(DType::kInt32, {3, 2})});
  ASSERT_TRUE(broadcast.status.ok()) << broadcast.status.message();
  EXPECT_EQ(broadcast.output.shape(), (Shape{3, 2}));
  EXPECT_EQ(Values(broadcast.output), (std::vector<double>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(RunBound("BroadcastTo", DType::kFloat32,
                     {Vector<float>(DType::kFloat32, {1, 2}), Vector<int32_t>(DType::kInt32, {3})})
                .status.message(),
            "InvalidArgumentError: Incompatible shapes: [2] vs. [3]");
}

// In a child: starts 1000 CPU threads under a 1.5 GB address space (8 MB
// stacks each) and exits 14 with the error on standard error, 0 if they
// started.
void StartThreadsUnderAMemoryLimit() {
  struct rlimit limit;
  limit.rlim_cur = limit.rlim_max = size_t{1536} << 20;
  setrlimit(RLIMIT_AS, &limit);
  const Status started = StartCpuThreads(1000);
  std::fprintf(stderr, "%s\n", started.message().c_str());
  std::exit(started.ok() ? 0 : 10 + static_cast<int>(started.kind()));
}

// Threads the system refuses are an error naming the count, before Eigen's
// pool, which would throw while half built and hang joining its threads.
TEST(CpuThreadsDeathTest, ThreadsTheSystemRefusesAreAnError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit this test sets";
#else
  EXPECT_EXIT(StartThreadsUnderAMemoryLimit(), testing::ExitedWithCode(10 + static_cast<int>(ErrorKind::kRuntime)),
              "cannot start 1000 CPU threads \\(--intra-op-threads, or one per core\\): Resource temporarily "
              "unavailable");
#endif
}

}  // namespace
}  // namespace tfrun
