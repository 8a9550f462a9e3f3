// The frame-aware propagator on hand-written v1 control flow, with the
// handle kernels and two stand-ins (Add, Less): dead branches, a while loop
// of several iterations, and the errors TensorFlow 2.21 gives for a dead
// fetch and malformed frames (its texts, from running the same GraphDefs:
// testdata/golden/DERIVATIONS.md, "Control flow (issue 41)").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/graph_def/graph_def_import.h"
#include "core/graph_def/tf_graph_file.h"
#include "core/runtime/executor.h"

namespace tfrun {
namespace {

Status HostAdd(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(c.output, c.Allocate(c.node.dtype, c.inputs[0].shape()));
  for (int64_t i = 0; i < c.output.num_elements(); ++i) {
    c.output.data<float>()[i] = c.inputs[0].data<float>()[i] + c.inputs[1].data<float>()[i];
  }
  return Status::Ok();
}

Status HostLess(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(c.output, c.Allocate(DType::kBool, c.inputs[0].shape()));
  c.output.data<bool>()[0] = c.inputs[0].data<float>()[0] < c.inputs[1].data<float>()[0];
  return Status::Ok();
}

constexpr const char* kT = R"(attr { key: "T" value { type: DT_FLOAT } })";

std::string Const(const std::string& name, const std::string& value, const char* type = "DT_FLOAT") {
  const std::string field = std::string(type) == "DT_BOOL" ? "bool_val" : "float_val";
  return "node { name: \"" + name + "\" op: \"Const\" attr { key: \"dtype\" value { type: " + type +
         " } } attr { key: \"value\" value { tensor { dtype: " + type + " tensor_shape {} " + field + ": " + value +
         " } } } }\n";
}

std::string Op(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
               const std::string& attrs = kT) {
  std::string text = "node { name: \"" + name + "\" op: \"" + op + "\"";
  for (const std::string& in : inputs) text += " input: \"" + in + "\"";
  return text + " " + attrs + " }\n";
}

std::string Enter(const std::string& name, const std::string& input, const std::string& frame, bool constant = false) {
  return Op(name, "Enter", {input},
            std::string(kT) + " attr { key: \"frame_name\" value { s: \"" + frame +
                "\" } } attr { key: \"is_constant\" value { b: " + (constant ? "true" : "false") + " } }");
}

// A counter loop: while (i < limit) i = i + one; the result is its Exit.
std::string CounterLoop() {
  return Const("i0", "0") + Const("limit", "5") + Const("one", "1") + Enter("enter", "i0", "f") +
         Enter("limit_in", "limit", "f", true) + Enter("one_in", "one", "f", true) +
         Op("merge", "Merge", {"enter", "next"}, std::string(kT) + " attr { key: \"N\" value { i: 2 } }") +
         Op("less", "Less", {"merge", "limit_in"}) +
         Op("cond", "LoopCond", {"less"}, "") + Op("switch", "Switch", {"merge", "cond"}) +
         Op("body", "Identity", {"switch:1"}) + Op("add", "Add", {"body", "one_in"}) +
         Op("next", "NextIteration", {"add"}) + Op("exit", "Exit", {"switch"});
}

struct RunOutcome {
  Status status;
  std::vector<Tensor> fetched;
  std::vector<std::string> executed;  // node names, once per run of each
};

RunOutcome RunText(const std::string& text, const std::vector<std::string>& fetch) {
  RunOutcome r;
  StatusOr<TfGraphFile> file = ParseTfGraphBytes(text, "g.pbtxt", "");
  if (!file.ok()) return {file.status(), {}, {}};
  StatusOr<Graph> graph = ImportGraphDef(*file, "g.pbtxt", GraphDefImportOptions());
  if (!graph.ok()) return {graph.status(), {}, {}};
  // Outlives the run's results, which hold its tensors.
  static HostAllocator memory{"cpu"};
  DeviceSet devices;
  devices.Add(Device::Local("CPU", 0, &memory));
  Placement placement;
  placement.device_of.assign(graph->nodes.size(), 0);
  KernelRegistry kernels;
  BindHandleKernels(&kernels, kCpu, kAllTypes);
  kernels.Bind("Add", kCpu, kNumericTypes, HostAdd);
  kernels.Bind("Less", kCpu, DTypeSet{DType::kBool}, HostLess);
  std::vector<NodeOutput> outputs;
  for (const std::string& f : fetch) {
    StatusOr<NodeOutput> o = graph->FindOutput(f, "fetch");
    if (!o.ok()) return {o.status(), {}, {}};
    outputs.push_back(*o);
  }
  // Twice: as a plain run (the propagator moves control-flow values
  // itself) and with node times (every node through its kernel, counted).
  Executor fast(*graph, devices, placement, kernels);
  StatusOr<RunResult> plain = fast.Run(outputs);
  Executor timed(*graph, devices, placement, kernels);
  timed.set_record_node_times(true);
  StatusOr<RunResult> result = timed.Run(outputs);
  EXPECT_EQ(plain.ok(), result.ok());
  if (!result.ok()) {
    if (!plain.ok()) EXPECT_EQ(plain.status().message(), result.status().message());
    return {result.status(), {}, {}};
  }
  if (!plain.ok()) return {plain.status(), {}, {}};
  for (size_t i = 0; i < result->fetched.size(); ++i) {
    const Tensor& a = plain->fetched[i];
    const Tensor& b = result->fetched[i];
    EXPECT_TRUE(a.num_bytes() == b.num_bytes() && std::memcmp(a.raw(), b.raw(), a.num_bytes()) == 0) << fetch[i];
  }
  r.fetched = result->fetched;
  for (int id : result->executed) r.executed.push_back(graph->nodes[id].name);
  return r;
}

TEST(FramePropagatorTest, AWhileLoopRunsItsIterations) {
  RunOutcome r = RunText(CounterLoop(), {"exit"});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.fetched.size(), 1u);
  EXPECT_EQ(r.fetched[0].data<float>()[0], 5.0f);
  // Six tests of the condition, five additions; the Exit runs live once
  // (its five dead runs call no kernel).
  EXPECT_EQ(std::count(r.executed.begin(), r.executed.end(), "less"), 6);
  EXPECT_EQ(std::count(r.executed.begin(), r.executed.end(), "add"), 5);
  EXPECT_EQ(std::count(r.executed.begin(), r.executed.end(), "exit"), 1);
}

TEST(FramePropagatorTest, ALoopThatRunsNoIterationReturnsItsInput) {
  std::string text = CounterLoop();
  text.replace(text.find("float_val: 5"), 12, "float_val: 0");
  RunOutcome r = RunText(text, {"exit"});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.fetched[0].data<float>()[0], 0.0f);
}

// A fetch of a tensor inside a loop, as TensorFlow 2.21 answers it for a
// GraphDef it imported (transcript in testdata/golden/DERIVATIONS.md): its
// _Retval runs in the loop's frame on every live value, so one live value
// is the fetch, none is "does not have value", two are an error.
TEST(FramePropagatorTest, AFetchInsideALoopIsSetByItsOneLiveValue) {
  const auto with_limit = [](const char* limit) {
    std::string text = CounterLoop();
    text.replace(text.find("float_val: 5"), 12, std::string("float_val: ") + limit);
    return text;
  };
  // One iteration: the body's add runs once, the Switch's false side is
  // live at the last test only; the Merge runs twice.
  RunOutcome once = RunText(with_limit("1"), {"exit", "add", "switch"});
  ASSERT_TRUE(once.status.ok()) << once.status.message();
  EXPECT_EQ(once.fetched[1].data<float>()[0], 1.0f);
  EXPECT_EQ(once.fetched[2].data<float>()[0], 1.0f);
  RunOutcome merge = RunText(with_limit("1"), {"merge"});
  EXPECT_EQ(merge.status.message(),
            "g.pbtxt: InternalError: Retval[0] has already been set.\n\t [[{{node _retval_merge_0_0}}]]");
  EXPECT_EQ(merge.status.kind(), ErrorKind::kRuntime);
  // No iteration: the body never runs; the Merge runs once.
  RunOutcome none = RunText(with_limit("0"), {"exit", "add"});
  EXPECT_EQ(none.status.message(), "g.pbtxt: InvalidArgumentError: Retval[1] does not have value");
  RunOutcome merge_once = RunText(with_limit("0"), {"merge"});
  ASSERT_TRUE(merge_once.status.ok()) << merge_once.status.message();
  EXPECT_EQ(merge_once.fetched[0].data<float>()[0], 0.0f);
  // Two iterations: the second value of the add is the error, at its
  // position among the fetches; the Switch's false side is still one value.
  RunOutcome twice = RunText(with_limit("2"), {"exit", "add"});
  EXPECT_EQ(twice.status.message(),
            "g.pbtxt: InternalError: Retval[1] has already been set.\n\t [[{{node _retval_add_0_1}}]]");
  RunOutcome exit_side = RunText(with_limit("2"), {"switch"});
  ASSERT_TRUE(exit_side.status.ok()) << exit_side.status.message();
  EXPECT_EQ(exit_side.fetched[0].data<float>()[0], 2.0f);
}

// tf.cond: the untaken branch is dead, the Merge takes the live one.
std::string Cond(bool pred) {
  return Const("x", "2") + Const("p", pred ? "true" : "false", "DT_BOOL") + Op("s", "Switch", {"x", "p"}) +
         Op("t", "Add", {"s:1", "s:1"}) + Op("f", "Identity", {"s:0"}) +
         Op("m", "Merge", {"f", "t"}, std::string(kT) + " attr { key: \"N\" value { i: 2 } }");
}

TEST(FramePropagatorTest, MergeTakesTheLiveBranchAndItsIndex) {
  RunOutcome taken = RunText(Cond(true), {"m", "m:1"});
  ASSERT_TRUE(taken.status.ok()) << taken.status.message();
  EXPECT_EQ(taken.fetched[0].data<float>()[0], 4.0f);
  EXPECT_EQ(taken.fetched[1].data<int32_t>()[0], 1);
  RunOutcome untaken = RunText(Cond(false), {"m", "m:1"});
  ASSERT_TRUE(untaken.status.ok()) << untaken.status.message();
  EXPECT_EQ(untaken.fetched[0].data<float>()[0], 2.0f);
  EXPECT_EQ(untaken.fetched[1].data<int32_t>()[0], 0);
}

TEST(FramePropagatorTest, ADeadFetchFailsAsInTensorFlow) {
  RunOutcome r = RunText(Cond(true), {"m", "f"});
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.message(), "g.pbtxt: InvalidArgumentError: Retval[1] does not have value");
}

TEST(FramePropagatorTest, MalformedFramesGetTensorFlowsErrors) {
  RunOutcome exit = RunText(Const("x", "1") + Op("e", "Exit", {"x"}), {"e"});
  EXPECT_NE(exit.status.message().find("node 'e': InvalidArgumentError: Invalid Exit op: Cannot find a "
                                       "corresponding Enter op."),
            std::string::npos)
      << exit.status.message();
  RunOutcome frames = RunText(Const("x", "1") + Enter("e1", "x", "f1") + Enter("e2", "x", "f2") +
                           Op("a", "Add", {"e1", "e2"}) + Op("x1", "Exit", {"a"}),
                       {"x1"});
  EXPECT_NE(frames.status.message().find("{{node a}} has inputs from different frames. The input {{node e2}} is in "
                                         "frame 'f2'. The input {{node e1}} is in frame 'f1'."),
            std::string::npos)
      << frames.status.message();
}

}  // namespace
}  // namespace tfrun
