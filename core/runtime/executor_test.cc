// The executor's bookkeeping for asynchronous devices, with a fake queue in
// place of a CUDA stream: which nodes are timed on the device, that every
// run ends by waiting for each queue once, and that device times replace
// host launch times.
#include "core/runtime/executor.h"

#include <gtest/gtest.h>

#include "core/graph_file/loader.h"

namespace tfrun {
namespace {

class FakeQueue final : public DeviceQueue {
 public:
  StatusOr<int> BeginSpan() override {
    begun_.push_back(static_cast<int>(begun_.size()));
    return begun_.back();
  }
  Status EndSpan(int span) override {
    ended_.push_back(span);
    return Status::Ok();
  }
  StatusOr<std::vector<SpanTime>> Finish() override {
    ++finishes;
    std::vector<SpanTime> ms;
    for (size_t i = 0; i < begun_.size(); ++i) ms.push_back({100.0 * static_cast<double>(i), 10.0 + static_cast<double>(i)});
    spans_per_run.push_back(static_cast<int>(begun_.size()));
    EXPECT_EQ(begun_, ended_);
    begun_.clear();
    ended_.clear();
    return ms;
  }
  int finishes = 0;
  std::vector<int> spans_per_run;

 private:
  std::vector<int> begun_, ended_;
};

// A host "kernel" standing in for a device's Add: the fake GPU's memory is
// host memory under a GPU allocator name.
Status FakeAdd(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(c.output, c.Allocate(c.node.dtype, c.node.shape));
  const float* x = c.inputs[0].data<float>();
  const float* y = c.inputs[1].data<float>();
  float* out = c.output.data<float>();
  for (int64_t i = 0; i < c.output.num_elements(); ++i) out[i] = x[i] + y[i];
  return Status::Ok();
}

// Handle kernels on both devices and `add` as Add on both.
KernelRegistry KernelsWithAdd(KernelFn add) {
  KernelRegistry kernels;
  BindHandleKernels(&kernels, kCpu, kAllTypes);
  BindHandleKernels(&kernels, kGpu, kAllTypes);
  kernels.Bind("Add", kCpu, kNumericTypes, add);
  kernels.Bind("Add", kGpu, kNumericTypes, add);
  return kernels;
}

struct TwoDevices {
  HostAllocator cpu_memory{"cpu"};
  HostAllocator gpu_memory{"GPU_0_bfc"};
  std::shared_ptr<FakeQueue> queue = std::make_shared<FakeQueue>();
  DeviceSet set;

  TwoDevices() {
    set.Add(Device::Local("CPU", 0, &cpu_memory));
    Device gpu = Device::Local("GPU", 0, &gpu_memory);
    gpu.queue = queue;
    set.Add(gpu);
  }
};

TEST(ExecutorTest, AsynchronousDeviceNodesAreTimedOnTheDevice) {
  StatusOr<Graph> graph = LoadGraphText(R"(
nodes:
  - {name: x, op: Const, device: /gpu:0, value: [1.0, 2.0]}
  - {name: y, op: Add, device: /gpu:0, inputs: [x, x]}
  - {name: z, op: Add, device: /cpu:0, inputs: [y, y]}
)",
                                        "queue.yaml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  TwoDevices devices;
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices.set, false, *FindProfile("tf2"), &placement).ok());
  const KernelRegistry kernels = KernelsWithAdd(FakeAdd);
  Executor executor(*graph, devices.set, placement, kernels);

  for (int run = 1; run <= 2; ++run) {
    StatusOr<RunResult> result = executor.Run(graph->fetch);
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(devices.queue->finishes, run);  // one wait per queue per run
    EXPECT_EQ(result->node_ms[0], 10.0);      // x, then y: the device's span times
    EXPECT_EQ(result->node_ms[1], 11.0);
    ASSERT_EQ(result->copies.size(), 1u);     // y crosses to the CPU once, read twice
    EXPECT_EQ(result->copies[0].from, "GPU_0_bfc");
    EXPECT_EQ(result->copies[0].to, "cpu");
    EXPECT_EQ(result->fetched[0].data<float>()[1], 8.0f);
  }
  EXPECT_EQ(devices.queue->spans_per_run, (std::vector<int>{2, 2}));
  // x was uploaded once and stays on the device; nothing else does.
  EXPECT_EQ(devices.gpu_memory.bytes_in_use(), 2 * sizeof(float));
}

Status FailingAdd(KernelContext&) { return RuntimeError("ResourceExhaustedError: OOM (fake)"); }

// A failed run settles the queues it used (its spans complete and
// forgotten), so the next run's times are its own; nodes that queue no
// device work (Identity, NoOp, int32 kept in host memory) are not timed.
TEST(ExecutorTest, AFailedRunLeavesNoSpansAndHandleNodesAreNotTimed) {
  StatusOr<Graph> graph = LoadGraphText(R"(
nodes:
  - {name: x, op: Const, device: /gpu:0, value: [1.0, 2.0]}
  - {name: y, op: Add, device: /gpu:0, inputs: [x, x]}
  - {name: i, op: Identity, device: /gpu:0, inputs: [y]}
  - {name: n, op: Const, device: /gpu:0, dtype: int32, value: [1, 2]}
  - {name: m, op: Add, device: /gpu:0, inputs: [n, n]}
  - {name: g, op: NoOp, device: /gpu:0}
fetch: [i, m, g]
)",
                                        "queue.yaml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  TwoDevices devices;
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices.set, false, *FindProfile("tf2"), &placement).ok());
  const KernelRegistry failing = KernelsWithAdd(FailingAdd), working = KernelsWithAdd(FakeAdd);
  {
    Executor executor(*graph, devices.set, placement, failing);
    StatusOr<RunResult> result = executor.Run(graph->fetch);
    ASSERT_FALSE(result.ok());
    // x's span and y's (ended although y failed) were settled.
    EXPECT_EQ(devices.queue->finishes, 1);
    EXPECT_EQ(devices.queue->spans_per_run, (std::vector<int>{2}));
  }
  Executor executor(*graph, devices.set, placement, working);
  StatusOr<RunResult> result = executor.Run(graph->fetch);
  ASSERT_TRUE(result.ok()) << result.status().message();
  // x (the upload) and y on the device; i forwards, n and m are int32 in
  // host memory, g does nothing: none of them is timed there.
  EXPECT_EQ(devices.queue->spans_per_run, (std::vector<int>{2, 2}));
  EXPECT_EQ(result->node_ms[0], 10.0);
  EXPECT_EQ(result->node_ms[1], 11.0);
}

// A node placed where the backend binds no kernel for it fails the run
// before any node runs, and the error names every such node; nodes the run
// does not need are not asked about.
TEST(ExecutorTest, NodesWithoutAKernelFailBeforeAnythingRuns) {
  StatusOr<Graph> graph = LoadGraphText(R"(
nodes:
  - {name: x, op: Const, device: /gpu:0, value: [1.0, 2.0]}
  - {name: y, op: Mul, device: /gpu:0, inputs: [x, x]}
  - {name: z, op: Sub, device: /cpu:0, inputs: [y, x]}
  - {name: unused, op: Relu, device: /gpu:0, inputs: [x]}
fetch: [z]
)",
                                        "nokernel.yaml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  TwoDevices devices;
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices.set, false, *FindProfile("tf2"), &placement).ok());
  const KernelRegistry kernels = KernelsWithAdd(FakeAdd);  // no Mul, Sub or Relu anywhere
  Executor executor(*graph, devices.set, placement, kernels);
  const Status checked = executor.CheckKernels(graph->fetch, {}, {});
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.kind(), ErrorKind::kRuntime);
  EXPECT_EQ(checked.message(),
            "nokernel.yaml: tfrun has no kernel for these nodes as placed: 'y' (Mul, float32) on "
            "/job:localhost/replica:0/task:0/device:GPU:0; 'z' (Sub, float32) on "
            "/job:localhost/replica:0/task:0/device:CPU:0 (TensorFlow has one; --place-only places and logs without "
            "running)");
  EXPECT_EQ(devices.queue->finishes, 0);  // nothing ran
  const KernelRegistry all = [] {
    KernelRegistry k = KernelsWithAdd(FakeAdd);
    k.Bind("Mul", kGpu, kNumericTypes, FakeAdd);
    k.Bind("Sub", kCpu, kNumericTypes, FakeAdd);
    return k;
  }();
  Executor complete(*graph, devices.set, placement, all);
  EXPECT_TRUE(complete.CheckKernels(graph->fetch, {}, {}).ok());
  // A binding for other dtypes is no binding.
  KernelRegistry floats_only = KernelsWithAdd(FakeAdd);
  floats_only.Bind("Mul", kGpu, DTypeSet{DType::kFloat64}, FakeAdd);
  floats_only.Bind("Sub", kCpu, kNumericTypes, FakeAdd);
  Executor partial(*graph, devices.set, placement, floats_only);
  const Status wrong_dtype = partial.CheckKernels(graph->fetch, {}, {});
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_NE(wrong_dtype.message().find("'y' (Mul, float32)"), std::string::npos) << wrong_dtype.message();
}

// A kernel's output of another dtype than its NodeDef declares is an error
// (TensorFlow's executor checks each output), never a tensor whose bytes a
// consumer reads as the declared dtype's.
TEST(ExecutorTest, AnOutputOfTheWrongDtypeIsAnError) {
  StatusOr<Graph> graph = LoadGraphText(R"(
nodes:
  - {name: x, op: Const, value: [1.0, 2.0]}
  - {name: y, op: Add, inputs: [x, x]}
fetch: [y]
)",
                                        "dtype.yaml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  TwoDevices devices;
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices.set, false, *FindProfile("tf2"), &placement).ok());
  // y as a NodeDef that declares a double output, as a hostile GraphDef's
  // node could while its kernel makes float.
  graph->properties[graph->nodes[1].properties] = NodeProperties{{}, {"DOUBLE", "DOUBLE"}, {"DOUBLE"}};
  const KernelRegistry kernels = KernelsWithAdd(FakeAdd);
  Executor executor(*graph, devices.set, placement, kernels);
  StatusOr<RunResult> result = executor.Run(graph->fetch);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "dtype.yaml:4:5: node 'y' on /job:localhost/replica:0/task:0/device:GPU:0: InternalError: Output 0 of "
            "type float does not match declared output type double for node {{node y}}");
}

// An Add that writes into an input's buffer where the executor handed it
// alone (ForwardOrAllocateOutput), recording whether it did.
int g_forwarded = 0;
Status ForwardingAdd(KernelContext& c) {
  TFRUN_RETURN_IF_ERROR(c.ForwardOrAllocateOutput({0, 1}, c.inputs[0].shape()));
  g_forwarded += c.output.raw() == c.inputs[0].raw() || c.output.raw() == c.inputs[1].raw() ? 1 : 0;
  const float* x = c.inputs[0].data<float>();
  const float* y = c.inputs[1].data<float>();
  float* out = c.output.data<float>();
  for (int64_t i = 0; i < c.output.num_elements(); ++i) out[i] = x[i] + y[i];
  return Status::Ok();
}

// An input read for the last time is handed over alone, so an elementwise
// kernel writes its output there; a value read again later, fetched, a
// Const's or read twice by one node is never written over.
TEST(ExecutorTest, LastReadsAreForwardedAndNothingStillReadIsOverwritten) {
  StatusOr<Graph> graph = LoadGraphText(R"(
nodes:
  - {name: c, op: Const, value: [1.0, 2.0]}
  - {name: a, op: Add, inputs: [c, c]}
  - {name: b, op: Add, inputs: [a, c]}
  - {name: d, op: Add, inputs: [b, b]}
  - {name: e, op: Add, inputs: [d, c]}
  - {name: f, op: Add, inputs: [d, e]}
fetch: [a, f]
)",
                                        "forward.yaml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  TwoDevices devices;
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*graph, devices.set, false, *FindProfile("tf2"), &placement).ok());
  const KernelRegistry kernels = KernelsWithAdd(ForwardingAdd);
  Executor executor(*graph, devices.set, placement, kernels);
  g_forwarded = 0;
  StatusOr<RunResult> result = executor.Run(graph->fetch);
  ASSERT_TRUE(result.ok()) << result.status().message();
  // a = [2, 4] (fetched: kept); b = a + c = [3, 6]; d = [6, 12]; e = d + c
  // = [7, 14] (d read again by f: not forwarded); f = d + e = [13, 26].
  EXPECT_EQ(std::vector<float>(result->fetched[0].data<float>(), result->fetched[0].data<float>() + 2),
            (std::vector<float>{2, 4}));
  EXPECT_EQ(std::vector<float>(result->fetched[1].data<float>(), result->fetched[1].data<float>() + 2),
            (std::vector<float>{13, 26}));
  // Forwarded: f (into d or e, both read last there). Not: a (Const), b
  // (a is fetched), d (b read twice by d), e (d read later by f).
  EXPECT_EQ(g_forwarded, 1);
  EXPECT_EQ(std::vector<float>(graph->nodes[0].value.data<float>(), graph->nodes[0].value.data<float>() + 2),
            (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace tfrun
