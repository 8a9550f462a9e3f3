// The CPU's elementwise fusion (fused_elementwise.cc) against the same
// runs without it: every value the same bit for bit, a run's errors the
// same, and the fused passes counted, so that a run that fused nothing
// cannot pass for one that did.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/base/parallel.h"
#include "core/graph_def/graph_file_loader.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/fused_elementwise_avx2.h"

namespace tfrun {
namespace {

namespace generic {
using cpu::TermOp;
#include "kernels/cpu/fused_elementwise_loops.h"
}  // namespace generic

std::string FloatNode(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  std::string text = "node { name: \"" + name + "\" op: \"" + op + "\"";
  for (const std::string& in : inputs) text += " input: \"" + in + "\"";
  text += " attr { key: \"T\" value { type: DT_FLOAT } }";
  if (op == "AddN") text += " attr { key: \"N\" value { i: 2 } }";
  return text + " }\n";
}

std::string Placeholder(const std::string& name) {
  return "node { name: \"" + name + "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
}

std::string Scalar(const std::string& name, float value) {
  return "node { name: \"" + name + "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } } " +
         "attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: " +
         std::to_string(value) + " } } } }\n";
}

std::string Variable(const std::string& name, int64_t rows, int64_t cols) {
  return "node { name: \"" + name + "\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } } " +
         "attr { key: \"shape\" value { shape { dim { size: " + std::to_string(rows) + " } dim { size: " +
         std::to_string(cols) + " } } } } attr { key: \"container\" value { s: \"\" } } " +
         "attr { key: \"shared_name\" value { s: \"\" } } }\n";
}

// A weight's update as tf_cnn_benchmarks' parameter-server mode computes
// it (weight decay, two towers, the average; the decay's scalar fed), its
// moving average as CIFAR-10's trainer keeps one (after the update), and
// a fetched elementwise root over two terms, one with a scalar on its
// right, another a computed scalar on its left.
std::string TrainingStep(int64_t rows, int64_t cols) {
  return Placeholder("p") + Placeholder("q") + Placeholder("s") + Placeholder("row") + Placeholder("t_in") +
         FloatNode("t", "Square", {"t_in"}) + Scalar("half", 0.5f) +
         Scalar("lr", 0.1f) +
         Variable("v", rows, cols) +
         FloatNode("sq", "Square", {"p"}) + FloatNode("neg", "Neg", {"q"}) +
         "node { name: \"v/Assign\" op: \"Assign\" input: \"v\" input: \"neg\" attr { key: \"T\" value { type: "
         "DT_FLOAT } } attr { key: \"validate_shape\" value { b: true } } attr { key: \"use_locking\" value { b: "
         "true } } }\n" +
         FloatNode("v/read", "Identity", {"v"}) + FloatNode("decay", "Mul", {"v/read", "s"}) +
         FloatNode("tower", "AddN", {"decay", "sq"}) + FloatNode("diff", "Sub", {"sq", "neg"}) +
         FloatNode("both", "AddN", {"diff", "tower"}) + FloatNode("average", "Mul", {"half", "both"}) +
         "node { name: \"apply\" op: \"ApplyGradientDescent\" input: \"v\" input: \"lr\" input: \"average\" "
         "attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"use_locking\" value { b: false } } }\n" +
         // v's moving average, after v's update in run order
         Variable("avg", rows, cols) +
         "node { name: \"avg/Assign\" op: \"Assign\" input: \"avg\" input: \"sq\" attr { key: \"T\" value { type: "
         "DT_FLOAT } } attr { key: \"validate_shape\" value { b: true } } attr { key: \"use_locking\" value { b: "
         "true } } }\n" +
         FloatNode("avg/read", "Identity", {"avg"}) + FloatNode("ema_sub", "Sub", {"avg/read", "v/read"}) +
         FloatNode("ema_mul", "Mul", {"ema_sub", "half"}) +
         "node { name: \"ema\" op: \"AssignSub\" input: \"avg\" input: \"ema_mul\" "
         "attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"use_locking\" value { b: false } } }\n" +
         FloatNode("left", "Mul", {"sq", "t"}) + FloatNode("right", "Sub", {"neg", "sq"}) +
         FloatNode("right2", "AddV2", {"right", "half"}) + FloatNode("out", "Add", {"left", "right2"}) +
         // a root whose other input is a row: it broadcasts, so the terms
         // are computed and Mul's own kernel runs
         FloatNode("row_left", "Sub", {"sq", "neg"}) + FloatNode("by_row", "Mul", {"row_left", "row"});
}

// The fusion kernels, counted: terms made, roots given terms.
KernelRegistry::FusionKernels g_fusion;
int g_terms = 0, g_roots_with_terms = 0;
Status CountedDefer(KernelContext& c, KernelFn own) {
  TFRUN_RETURN_IF_ERROR(g_fusion.defer(c, own));
  g_terms += c.output.variant() != nullptr;
  return Status::Ok();
}
Status CountedRoot(KernelContext& c, KernelFn own) {
  bool terms = false;
  for (const Tensor& t : c.inputs) terms = terms || t.variant() != nullptr;
  TFRUN_RETURN_IF_ERROR(g_fusion.run_root(c, own));
  g_roots_with_terms += terms;
  return Status::Ok();
}

Tensor Random(Shape shape, uint32_t seed) {
  Tensor t = Tensor::AllocateHost(DType::kFloat32, std::move(shape)).value();
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-140, 40);  // tiny (denormal products) to large
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = std::ldexp(mantissa(gen), exponent(gen));
  return t;
}

struct StepResult {
  Status status;
  std::vector<Tensor> values;  // out, by_row, then v and avg after the update
};

// Initializes v from q and avg from p, runs one step (fetching out and
// by_row, the updates as targets), then reads v and avg.
StepResult RunStep(const std::string& graph_text, bool fuse, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  const std::string path = ::testing::TempDir() + "/fused_step.pbtxt";
  std::ofstream(path) << graph_text;
  StatusOr<Graph> graph = LoadAnyGraphFile(path, LoadOptions(), GraphDefImportOptions(), nullptr);
  if (!graph.ok()) return {graph.status(), {}};
  static const DeviceSet devices = DeviceSet::CpuOnly();
  Placement placement;
  if (Status s = PlaceGraph(*graph, devices, false, *FindProfile("tf2"), &placement); !s.ok()) return {s, {}};
  KernelRegistry kernels;
  RegisterCpuKernels(&kernels);
  g_fusion = kernels.FindFusion("CPU");
  kernels.BindFusion("CPU", {CountedDefer, CountedRoot});
  Executor executor(*graph, devices, placement, kernels);
  executor.set_fuse_elementwise(fuse);
  std::vector<Feed> fed;
  for (const auto& [name, value] : feeds) fed.push_back({graph->FindOutput(name, "feed").value(), value});
  const auto id = [&](const char* name) { return *graph->by_name.Find(name); };
  StepResult result;
  result.status = executor.RunTargets({id("v/Assign"), id("avg/Assign")}, fed);
  if (!result.status.ok()) return result;
  StatusOr<RunResult> step = executor.Run({{id("out"), 0}, {id("by_row"), 0}}, fed, {id("apply"), id("ema")});
  if (!step.ok()) return {step.status(), {}};
  StatusOr<RunResult> read = executor.Run({{id("v/read"), 0}, {id("avg/read"), 0}});
  if (!read.ok()) return {read.status(), {}};
  result.values = step->fetched;
  result.values.push_back(read->fetched[0]);
  result.values.push_back(read->fetched[1]);
  return result;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.num_elements()) * 4) == 0;
}

std::vector<std::pair<std::string, Tensor>> Feeds(int64_t rows, int64_t cols, Shape p_shape = {}) {
  return {{"p", Random(p_shape.empty() ? Shape{rows, cols} : p_shape, 1)},
          {"q", Random({rows, cols}, 2)},
          {"s", Random({}, 3)},
          {"row", Random({cols}, 4)},
          {"t_in", Random({}, 5)}};
}

TEST(FusedElementwiseTest, AFusedStepComputesTheSameBitsAsTheNodesKernels) {
  const int64_t rows = 256, cols = 161;  // 41,216 elements: blocks of 1,024 and a partial one
  const std::string text = TrainingStep(rows, cols);
  const auto feeds = Feeds(rows, cols);
  g_terms = g_roots_with_terms = 0;
  const StepResult plain = RunStep(text, false, feeds);
  ASSERT_TRUE(plain.status.ok()) << plain.status.message();
  EXPECT_EQ(g_terms, 0);
  const StepResult fused = RunStep(text, true, feeds);
  ASSERT_TRUE(fused.status.ok()) << fused.status.message();
  // decay, tower, diff, both and average in apply; ema_sub and ema_mul in
  // ema; left, right and right2 in out; row_left for by_row, which cannot
  // take it in a pass (a row broadcasts) and computes it first.
  EXPECT_EQ(g_terms, 11);
  EXPECT_EQ(g_roots_with_terms, 4);
  ASSERT_EQ(plain.values.size(), 4u);
  ASSERT_EQ(fused.values.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(SameBits(plain.values[i], fused.values[i])) << "value " << i;
}

// Tensors too small for a pass are computed by their nodes' kernels.
TEST(FusedElementwiseTest, SmallTensorsAreNotFused) {
  const std::string text = TrainingStep(16, 16);
  const auto feeds = Feeds(16, 16);
  const StepResult plain = RunStep(text, false, feeds);
  g_terms = g_roots_with_terms = 0;
  const StepResult fused = RunStep(text, true, feeds);
  ASSERT_TRUE(fused.status.ok()) << fused.status.message();
  EXPECT_EQ(g_terms, 0);
  EXPECT_EQ(g_roots_with_terms, 0);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(SameBits(plain.values[i], fused.values[i])) << "value " << i;
}

// A deferred node's error is its own kernel's, where its inputs' shapes
// do not fit: AddN of two shapes.
TEST(FusedElementwiseTest, AnErrorIsTheNodesOwn) {
  const std::string text = TrainingStep(256, 160);
  const auto feeds = Feeds(256, 160, {160, 256});
  const StepResult plain = RunStep(text, false, feeds);
  const StepResult fused = RunStep(text, true, feeds);
  ASSERT_FALSE(plain.status.ok());
  EXPECT_EQ(fused.status.message(), plain.status.message());
  EXPECT_NE(plain.status.message().find("AddN"), std::string::npos) << plain.status.message();
}

// The loops' AVX2 build computes the generic build's bits, every lane and
// the tails (lengths that are no multiple of 8), scalars on either side.
TEST(FusedElementwiseTest, TheAvx2LoopsComputeTheGenericLoopsBits) {
  if (!ProcessorHasAvx2()) GTEST_SKIP() << "this processor has no AVX2";
  const Tensor x = Random({1037}, 11), y = Random({1037}, 12), var = Random({1037}, 13);
  const float* px = x.data<float>();
  const float* py = y.data<float>();
  const float scalar = 0.37f;
  std::vector<float> want(1037), got(1037);
  for (const cpu::TermOp op : {cpu::TermOp::kAdd, cpu::TermOp::kSub, cpu::TermOp::kMul}) {
    for (const int64_t len : {int64_t{1037}, int64_t{1024}, int64_t{7}}) {
      for (int scalars = 0; scalars < 3; ++scalars) {
        const float* a = scalars == 1 ? nullptr : px;
        const float* b = scalars == 2 ? nullptr : py;
        generic::Combine(op, a, &scalar, b, &scalar, len, want.data());
        avx2::CombineLoop(op, a, &scalar, b, &scalar, len, got.data());
        EXPECT_EQ(std::memcmp(want.data(), got.data(), len * sizeof(float)), 0)
            << "op " << static_cast<int>(op) << ", length " << len << ", scalar operand " << scalars;
      }
    }
  }
  std::vector<float> v_want(var.data<float>(), var.data<float>() + 1037), v_got = v_want;
  generic::Descend(v_want.data(), px, scalar, 1037);
  avx2::DescentLoop(v_got.data(), px, scalar, 1037);
  EXPECT_EQ(std::memcmp(v_want.data(), v_got.data(), v_want.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace tfrun
