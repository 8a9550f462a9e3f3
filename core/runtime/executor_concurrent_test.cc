// Nodes run at the same time (Executor::set_inter_op_threads): independent
// nodes overlap, a node that changes shared state runs alone and in run
// order (a variable's writer in run order among the nodes that may hold the
// variable), and a run with failures reports the first in run order, as a run
// one node at a time would. The kernels here sleep to make overlaps
// visible; they record when each node ran.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "core/base/parallel.h"
#include "core/graph_file/loader.h"
#include "core/runtime/executor.h"

namespace tfrun {
namespace {

using Clock = std::chrono::steady_clock;

struct Span {
  Clock::time_point start, end;
};

// What the recording kernels saw, by node name.
struct Recorder {
  std::mutex mu;
  std::map<std::string, Span> spans;
  int running = 0, most_running = 0;
} g_recorder;

// Sleeps, then computes inputs[0] + inputs[last] (an Add, a Mul's stand-in
// or an AddN of two) or forwards inputs[0] (a one-input node).
Status RecordedKernel(KernelContext& c) {
  const Clock::time_point start = Clock::now();
  {
    std::lock_guard<std::mutex> lock(g_recorder.mu);
    g_recorder.most_running = std::max(g_recorder.most_running, ++g_recorder.running);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(c.node.name.rfind("slow", 0) == 0 ? 150 : 40));
  Status status = Status::Ok();
  if (c.node.name.rfind("fail", 0) == 0 || c.node.name.rfind("slow_fail", 0) == 0) {
    status = RuntimeError("failed: " + c.node.name);
  } else {
    const Tensor& x = c.inputs[0];
    const Tensor& y = c.inputs.back();
    TFRUN_ASSIGN_OR_RETURN(c.output, c.Allocate(x.dtype(), x.shape()));
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      c.output.data<float>()[i] = c.inputs.size() == 1 ? x.data<float>()[i] : x.data<float>()[i] + y.data<float>()[i];
    }
  }
  std::lock_guard<std::mutex> lock(g_recorder.mu);
  --g_recorder.running;
  g_recorder.spans[c.node.name] = {start, Clock::now()};
  return status;
}

// RecordedKernel as a kernel on several threads runs it: inside a
// MultiThreadedSection.
Status SectionKernel(KernelContext& c) {
  MultiThreadedSection section;
  return RecordedKernel(c);
}

// RecordedKernel, noting the kernel threads each node ran with.
std::map<std::string, int> g_kernel_threads_seen;
Status ThreadsKernel(KernelContext& c) {
  {
    std::lock_guard<std::mutex> lock(g_recorder.mu);
    g_kernel_threads_seen[c.node.name] = KernelThreads();
  }
  return RecordedKernel(c);
}

struct PlacedGraph {
  HostAllocator memory{"cpu"};
  DeviceSet devices;
  Graph graph;
  Placement placement;
  KernelRegistry kernels;

  // `shared_state` names a node loaded as an Identity that runs as Print:
  // stateful, so it changes shared state (node_effects.h).
  explicit PlacedGraph(const std::string& text, const std::string& shared_state = "") {
    g_recorder.spans.clear();
    g_recorder.most_running = 0;
    devices.Add(Device::Local("CPU", 0, &memory));
    StatusOr<Graph> loaded = LoadGraphText(text, "concurrent.yaml");
    EXPECT_TRUE(loaded.ok()) << loaded.status().message();
    graph = std::move(*loaded);
    if (!shared_state.empty()) graph.nodes[graph.by_name[shared_state]].op = "Print";
    EXPECT_TRUE(PlaceGraph(graph, devices, false, *FindProfile("tf2"), &placement).ok());
    BindHandleKernels(&kernels, kCpu, kAllTypes);
    for (const char* op : {"Add", "Mul", "AddN", "Print"}) kernels.Bind(op, kCpu, kNumericTypes, RecordedKernel);
  }

  // What TensorFlow's 0 for both thread counts chooses for the fetches.
  Executor::ThreadChoice Choose(int cores) {
    Executor executor(graph, devices, placement, kernels);
    return executor.ChooseThreads(graph.fetch, {}, {}, cores);
  }

  StatusOr<RunResult> Execute(int threads) {
    Executor executor(graph, devices, placement, kernels);
    executor.set_inter_op_threads(threads);
    return executor.Run(graph.fetch);
  }
};

bool Before(const std::string& a, const std::string& b) {
  return g_recorder.spans.at(a).end <= g_recorder.spans.at(b).start;
}
bool Overlap(const std::string& a, const std::string& b) { return !Before(a, b) && !Before(b, a); }

constexpr char kTowers[] = R"(
nodes:
  - {name: a, op: Const, value: [1.0, 2.0]}
  - {name: a1, op: Add, inputs: [a, a]}
  - {name: b1, op: Mul, inputs: [a, a]}
  - {name: w, op: Identity, inputs: [a1]}
  - {name: a2, op: Add, inputs: [a1, a1]}
  - {name: b2, op: Mul, inputs: [b1, b1]}
  - {name: s, op: AddN, inputs: [a2, b2]}
fetch: [s, w]
)";

TEST(ExecutorConcurrentTest, IndependentNodesOverlapWithTheSameResults) {
  PlacedGraph run(kTowers);
  StatusOr<RunResult> one_at_a_time = run.Execute(1);
  ASSERT_TRUE(one_at_a_time.ok()) << one_at_a_time.status().message();
  EXPECT_EQ(g_recorder.most_running, 1);
  PlacedGraph concurrent(kTowers);
  StatusOr<RunResult> together = concurrent.Execute(2);
  ASSERT_TRUE(together.ok()) << together.status().message();
  EXPECT_EQ(g_recorder.most_running, 2);
  EXPECT_TRUE(Overlap("a1", "b1"));
  EXPECT_TRUE(Before("a2", "s") && Before("b2", "s"));
  // s = (a1 + a1) + (b1 + b1), a1 = b1 = 2a: 8a.
  EXPECT_EQ(together->fetched[0].data<float>()[1], 16.0f);
  EXPECT_EQ(together->fetched[0].data<float>()[1], one_at_a_time->fetched[0].data<float>()[1]);
}

// The order of ready nodes goes by the work left after each: by op in a
// first run (every node here an elementwise op of one unit), by the
// kernels' times in the previous run after it. The slow node, one unit by
// op, runs after both three-node chains the first time; the second run
// has seen it take 150 ms against 40 a node, and starts it first.
TEST(ExecutorConcurrentTest, ALaterRunOrdersNodesByTheKernelTimesOfTheOneBefore) {
  PlacedGraph run(R"(
nodes:
  - {name: c, op: Const, value: [1.0]}
  - {name: a1, op: Add, inputs: [c, c]}
  - {name: a2, op: Add, inputs: [a1, a1]}
  - {name: a3, op: Add, inputs: [a2, a2]}
  - {name: b1, op: Mul, inputs: [c, c]}
  - {name: b2, op: Mul, inputs: [b1, b1]}
  - {name: b3, op: Mul, inputs: [b2, b2]}
  - {name: slow, op: Add, inputs: [c, c]}
  - {name: s, op: AddN, inputs: [a3, b3, slow]}
fetch: [s]
)");
  Executor executor(run.graph, run.devices, run.placement, run.kernels);
  executor.set_inter_op_threads(2);
  StatusOr<RunResult> first = executor.Run(run.graph.fetch);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(Before("a2", "slow") && Before("b2", "slow"));
  StatusOr<RunResult> second = executor.Run(run.graph.fetch);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_TRUE(Overlap("slow", "a1"));
  EXPECT_EQ(first->fetched[0].data<float>()[0], second->fetched[0].data<float>()[0]);
}

// w changes shared state: everything before it in run order (a1, b1) has
// run when it starts, nothing after it (a2, b2, s) starts before it ends.
TEST(ExecutorConcurrentTest, ANodeThatChangesSharedStateRunsAloneInRunOrder) {
  PlacedGraph run(kTowers, "w");
  StatusOr<RunResult> result = run.Execute(2);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(Overlap("a1", "b1"));
  for (const char* before : {"a1", "b1"}) EXPECT_TRUE(Before(before, "w")) << before;
  for (const char* after : {"a2", "b2", "s"}) EXPECT_TRUE(Before("w", after)) << after;
  EXPECT_TRUE(Overlap("a2", "b2"));
  EXPECT_EQ(result->fetched[1].data<float>()[0], 2.0f);
}

// A variable's writer (an ApplyGradientDescent on v0, a VariableV2) runs
// beside the other tower (slow1a, slow1b), after the node
// before it in run order that reads v0 without feeding it (slow_r0, which
// takes longer than the writer's own input g0) and before the one after
// it (late0). Run alone, it would have waited for slow1a and kept slow1b
// waiting.
TEST(ExecutorConcurrentTest, AVariablesWriterRunsBesideNodesThatCannotHoldTheVariable) {
  PlacedGraph run(R"(
nodes:
  - {name: a, op: Const, value: [1.0, 2.0]}
  - {name: v0, op: Identity, inputs: [a]}
  - {name: v1, op: Identity, inputs: [a]}
  - {name: slow_r0, op: Mul, inputs: [v0, a]}
  - {name: slow1a, op: Add, inputs: [v1, a]}
  - {name: g0, op: Mul, inputs: [a, a]}
  - {name: u0, op: AddN, inputs: [v0, a, g0]}
  - {name: late0, op: Mul, inputs: [v0, a]}
  - {name: slow1b, op: Add, inputs: [slow1a, a]}
  - {name: s, op: AddN, inputs: [slow1b, late0, slow_r0]}
fetch: [s, u0]
)");
  for (const char* variable : {"v0", "v1"}) run.graph.nodes[run.graph.by_name[variable]].op = "VariableV2";
  run.graph.nodes[run.graph.by_name["u0"]].op = "ApplyGradientDescent";
  for (const char* op : {"VariableV2", "ApplyGradientDescent"}) {
    run.kernels.Bind(op, kCpu, kNumericTypes, RecordedKernel);
  }
  StatusOr<RunResult> result = run.Execute(2);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(Overlap("u0", "slow1a") || Overlap("u0", "slow1b"));
  EXPECT_TRUE(Before("slow_r0", "u0"));
  EXPECT_TRUE(Before("u0", "late0"));
}

// A kernel of an op that MakesFreshOutputs lists, which outputs an input
// another node still reads, fails the run instead of letting a variable's
// writer change what that reader reads.
Status OutputsItsInput(KernelContext& c) {
  c.output = c.inputs[0];
  return Status::Ok();
}

TEST(ExecutorConcurrentTest, AFreshOutputsOpThatOutputsAHeldInputFails) {
  PlacedGraph run(R"(
nodes:
  - {name: a, op: Const, value: [[1.0, 2.0], [3.0, 4.0]]}
  - {name: p, op: MatMul, inputs: [a, a]}
  - {name: s, op: AddN, inputs: [p, a]}
fetch: [s]
)");
  run.kernels.Bind("MatMul", kCpu, kNumericTypes, OutputsItsInput);
  StatusOr<RunResult> result = run.Execute(1);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("node 'p' on /job:localhost/replica:0/task:0/device:CPU:0: InternalError: "
                                           "the MatMul kernel output a tensor another node holds"),
            std::string::npos)
      << result.status().message();
}

// The first failure in run order is the run's error, however long it took:
// slow_fail fails after fail_later has.
TEST(ExecutorConcurrentTest, TheFirstFailureInRunOrderIsReported) {
  PlacedGraph run(R"(
nodes:
  - {name: a, op: Const, value: [1.0, 2.0]}
  - {name: slow_fail, op: Add, inputs: [a, a]}
  - {name: fail_later, op: Mul, inputs: [a, a]}
  - {name: s, op: AddN, inputs: [slow_fail, fail_later]}
fetch: [s]
)");
  StatusOr<RunResult> result = run.Execute(2);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("failed: slow_fail"), std::string::npos) << result.status().message();
  EXPECT_LT(g_recorder.spans.at("fail_later").end, g_recorder.spans.at("slow_fail").end);
  EXPECT_EQ(g_recorder.spans.count("s"), 0u);  // after both: never started
}

// More threads than ready nodes, and runs one after another on the same
// executor (the threads are the process's, kept between runs).
TEST(ExecutorConcurrentTest, RunsRepeatOnMoreThreadsThanNodes) {
  PlacedGraph run(kTowers);
  Executor executor(run.graph, run.devices, run.placement, run.kernels);
  executor.set_inter_op_threads(8);
  for (int i = 0; i < 3; ++i) {
    StatusOr<RunResult> result = executor.Run(run.graph.fetch);
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(result->fetched[0].data<float>()[0], 8.0f);
  }
}

// Kernels on several threads take turns (each keeps the threads it was made
// for); with one thread a kernel (--intra-op-threads 1) none does, and
// independent ones overlap, as under TensorFlow's intra_op_parallelism_threads 1.
TEST(ExecutorConcurrentTest, MultiThreadedKernelsTakeTurnsUnlessKernelsHaveOneThread) {
  for (const int kernel_threads : {2, 1}) {
    SetKernelThreads(kernel_threads);
    PlacedGraph run(kTowers);
    for (const char* op : {"Add", "Mul"}) run.kernels.Bind(op, kCpu, kNumericTypes, SectionKernel);
    StatusOr<RunResult> result = run.Execute(2);
    ASSERT_TRUE(result.ok()) << result.status().message();
    EXPECT_EQ(Overlap("a1", "b1"), kernel_threads == 1) << kernel_threads << " kernel threads";
    EXPECT_EQ(result->fetched[0].data<float>()[1], 16.0f);
  }
  SetKernelThreads(0);
}

// TensorFlow's 0 ("choose"): three towers of products, at least two
// cores' worth of work beside their longest chain, run at once with a
// thread each on two cores, not on four; a chain runs one node at a time
// with kernels on every core.
TEST(ExecutorConcurrentTest, TowersAsWideAsTheMachineRunAtOnceWithAThreadEach) {
  PlacedGraph towers(R"(
nodes:
  - {name: a, op: Const, value: [[1.0, 2.0], [3.0, 4.0]]}
  - {name: x1, op: MatMul, inputs: [a, a]}
  - {name: x2, op: MatMul, inputs: [x1, a]}
  - {name: y1, op: MatMul, inputs: [a, a]}
  - {name: y2, op: MatMul, inputs: [y1, a]}
  - {name: z1, op: MatMul, inputs: [a, a]}
  - {name: z2, op: MatMul, inputs: [z1, a]}
  - {name: s, op: AddN, inputs: [x2, y2, z2]}
fetch: [s]
)");
  // Products 4 each, the sum 1: 25 in all, 9 on the longest chain.
  Executor::ThreadChoice two = towers.Choose(2);
  EXPECT_NEAR(two.width, 25.0 / 9.0, 1e-9);
  EXPECT_EQ(two.inter_op, 2);
  EXPECT_EQ(two.intra_op, 1);
  Executor::ThreadChoice four = towers.Choose(4);
  EXPECT_EQ(four.inter_op, 1);
  EXPECT_EQ(four.intra_op, 0);

  PlacedGraph chain(R"(
nodes:
  - {name: a, op: Const, value: [[1.0, 2.0], [3.0, 4.0]]}
  - {name: x1, op: MatMul, inputs: [a, a]}
  - {name: x2, op: MatMul, inputs: [x1, a]}
  - {name: s, op: AddN, inputs: [x2, a]}
fetch: [s]
)");
  Executor::ThreadChoice choice = chain.Choose(2);
  EXPECT_NEAR(choice.width, 1.0, 1e-9);
  EXPECT_EQ(choice.inter_op, 1);
  EXPECT_EQ(choice.intra_op, 0);
}

// With one thread a kernel, a segment that is one chain (here w, which
// runs alone) gets the chain's threads; nodes that can run beside others
// keep one.
// Runs `run` as the chosen setting does (two inter-op threads, one thread a
// kernel, 3 for a chain) with `ops` recording their kernel threads in
// g_kernel_threads_seen.
void RunRecordingKernelThreads(PlacedGraph& run, std::initializer_list<const char*> ops) {
  SetKernelThreads(1);
  for (const char* op : ops) run.kernels.Bind(op, kCpu, kNumericTypes, ThreadsKernel);
  Executor executor(run.graph, run.devices, run.placement, run.kernels);
  executor.set_inter_op_threads(2);
  executor.set_chain_kernel_threads(3);
  g_kernel_threads_seen.clear();
  StatusOr<RunResult> result = executor.Run(run.graph.fetch);
  SetKernelThreads(0);
  ASSERT_TRUE(result.ok()) << result.status().message();
}

TEST(ExecutorConcurrentTest, NodesThatRunAloneGetTheChainsThreads) {
  PlacedGraph run(kTowers, "w");
  RunRecordingKernelThreads(run, {"Add", "Mul", "AddN", "Print"});
  EXPECT_EQ(g_kernel_threads_seen.at("w"), 3);
  for (const char* wide : {"a1", "b1", "a2", "b2"}) EXPECT_EQ(g_kernel_threads_seen.at(wide), 1) << wide;
}

// A variable's writer runs beside other nodes: it keeps one thread a
// kernel (unless it streams), where a Print in its place gets the chain's.
TEST(ExecutorConcurrentTest, AVariablesWriterKeepsOneKernelThread) {
  PlacedGraph run(R"(
nodes:
  - {name: a, op: Const, value: [1.0, 2.0]}
  - {name: v, op: Identity, inputs: [a]}
  - {name: x, op: Add, inputs: [a, a]}
  - {name: w, op: Add, inputs: [v, x]}
  - {name: y, op: Mul, inputs: [x, x]}
fetch: [w, y]
)");
  run.graph.nodes[run.graph.by_name["v"]].op = "VariableV2";
  run.graph.nodes[run.graph.by_name["w"]].op = "AssignAdd";
  RunRecordingKernelThreads(run, {"Add", "Mul", "VariableV2", "AssignAdd"});
  EXPECT_EQ(g_kernel_threads_seen.at("w"), 1);
}

// With one thread a kernel, an elementwise node with an input of 2^20
// elements or more (more than a core's cache), or 2^21 in all its inputs,
// gets the chain's threads even where others run beside it; smaller ones
// and products keep one.
TEST(ExecutorConcurrentTest, ElementwiseNodesOnLargeInputsGetTheChainsThreads) {
  PlacedGraph run(R"(
nodes:
  - {name: big, op: Const, shape: [1024, 1024], fill: 1.0}
  - {name: small, op: Const, shape: [1023, 1024], fill: 1.0}
  - {name: on_big, op: Add, inputs: [big, big]}
  - {name: on_small, op: Mul, inputs: [small, small]}
  - {name: product, op: MatMul, inputs: [big, big]}
  - {name: three_small, op: AddN, inputs: [small, small, small]}
  - {name: two_small, op: AddN, inputs: [small, small]}
fetch: [on_big, on_small, product, three_small, two_small]
)");
  RunRecordingKernelThreads(run, {"Add", "Mul", "MatMul", "AddN"});
  EXPECT_EQ(g_kernel_threads_seen.at("on_big"), 3);
  EXPECT_EQ(g_kernel_threads_seen.at("on_small"), 1);
  EXPECT_EQ(g_kernel_threads_seen.at("product"), 1);
  EXPECT_EQ(g_kernel_threads_seen.at("three_small"), 3);
  EXPECT_EQ(g_kernel_threads_seen.at("two_small"), 1);
}

// Where nodes run at once, an input read for the last time is handed to
// its reader alone, which may write its output there (as one node at a
// time does); one still to be read elsewhere, or fetched, is not.
std::map<std::string, bool> g_could_forward;
Status ForwardingKernel(KernelContext& c) {
  {
    std::lock_guard<std::mutex> lock(g_recorder.mu);
    g_could_forward[c.node.name] = c.CanForward(0, c.inputs[0].shape());
  }
  return RecordedKernel(c);
}

TEST(ExecutorConcurrentTest, ALastReadIsForwardedWhereNodesRunAtOnce) {
  PlacedGraph run(kTowers);
  for (const char* op : {"Add", "Mul", "AddN"}) run.kernels.Bind(op, kCpu, kNumericTypes, ForwardingKernel);
  g_could_forward.clear();
  StatusOr<RunResult> result = run.Execute(2);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_FALSE(g_could_forward.at("a1"));  // a is a constant, read by b1 too
  EXPECT_FALSE(g_could_forward.at("a2"));  // a1 is read by w as well
  EXPECT_FALSE(g_could_forward.at("b2"));  // reads b1 twice: its first input is not the last read
  EXPECT_TRUE(g_could_forward.at("s"));    // a2's only reader
  EXPECT_EQ(result->fetched[0].data<float>()[1], 16.0f);
}

// A node that changes shared state runs alone: the towers on either side
// of it cannot overlap each other.
TEST(ExecutorConcurrentTest, ANodeThatRunsAloneCutsTheWidth) {
  PlacedGraph towers(R"(
nodes:
  - {name: a, op: Const, value: [[1.0, 2.0], [3.0, 4.0]]}
  - {name: x1, op: MatMul, inputs: [a, a]}
  - {name: y1, op: MatMul, inputs: [a, a]}
  - {name: p, op: Identity, inputs: [x1]}
  - {name: x2, op: MatMul, inputs: [p, a]}
  - {name: y2, op: MatMul, inputs: [y1, a]}
  - {name: s, op: AddN, inputs: [x2, y2]}
fetch: [s]
)", "p");
  // x1 | y1 (4), then p alone (Print: 1), then x2 | y2 (4), then s (1):
  // 18 in all over 10.
  EXPECT_NEAR(towers.Choose(2).width, 1.8, 1e-9);
}

}  // namespace
}  // namespace tfrun
