// What TF2 eager executes for a graph file, on simulated devices. The
// expected sequences are TensorFlow 2.21's own (CPU-only cases, run with
// tf.debugging.set_log_device_placement(True)) and the TF2 GPU guide's
// transcripts; the GPU cases follow placement_utils.cc's pinning rules.
#include "core/placement/eager_program.h"

#include <gtest/gtest.h>

#include "core/devices/simulated_gpus_for_tests.h"
#include "core/graph_file/loader.h"
#include "core/placement/placement_log.h"

namespace tfrun {
namespace {

struct Planned {
  Status status;
  Placement placement;
  EagerPlan plan;
  Graph graph;
  DeviceSet devices;
  // "_EagerConst@CPU:0 MatMul@GPU:0 ..."
  std::string Ops() const {
    std::string out;
    for (const EagerOp& op : plan.executed) {
      const std::string& name = devices[op.device].name;
      out += (out.empty() ? "" : " ") + op.op + "@" + name.substr(name.rfind(':', name.size() - 3) + 1);
    }
    return out;
  }
};

Planned Plan(const std::string& yaml, int gpus, bool soft = true) {
  Planned p;
  StatusOr<Graph> g = LoadGraphText(yaml, "e.yaml");
  EXPECT_TRUE(g.ok()) << g.status().message();
  p.graph = std::move(*g);
  p.devices = SimulatedGpus(gpus);
  p.status = PlanEager(p.graph, p.devices, soft, &p.placement, &p.plan);
  return p;
}

constexpr const char* kGuideMatMul = R"(nodes:
  - {name: a, op: Const, value: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}
  - {name: b, op: Const, value: [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}
  - {op: MatMul, inputs: [a, b]})";

TEST(EagerProgramTest, ConstantsExecuteEagerConstWhereTheyArePlaced) {
  EXPECT_EQ(Plan(kGuideMatMul, 0).Ops(), "_EagerConst@CPU:0 _EagerConst@CPU:0 MatMul@CPU:0");
  EXPECT_EQ(Plan(kGuideMatMul, 1).Ops(), "_EagerConst@GPU:0 _EagerConst@GPU:0 MatMul@GPU:0");
}

TEST(EagerProgramTest, ConstantsInACpu0ScopeExecuteNothing) {
  Planned p = Plan(R"(nodes:
  - device: /CPU:0
    nodes:
      - {name: a, op: Const, value: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}
      - {name: b, op: Const, value: [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}
  - {op: MatMul, inputs: [a, b]})", 1);
  EXPECT_EQ(p.Ops(), "MatMul@GPU:0");
  // A partial scope is merged over CPU:0 too.
  EXPECT_EQ(Plan(R"(nodes:
  - {name: a, op: Const, value: [1.0], device: /job:localhost}
  - {op: Identity, inputs: [a], device: /job:localhost})", 1).Ops(), "Identity@CPU:0");
}

TEST(EagerProgramTest, FlatValuesAreReshapedAndScalarsFilled) {
  // tf.constant([1., ..., 6.], shape=[2, 3]): the shape list is a tensor too.
  EXPECT_EQ(Plan("nodes:\n  - {op: Const, shape: [2, 3], value: [1, 2, 3, 4, 5, 6]}", 0).Ops(),
            "_EagerConst@CPU:0 _EagerConst@CPU:0 Reshape@CPU:0");
  EXPECT_EQ(Plan("nodes:\n  - {op: Const, shape: [2, 2], fill: 1.0}", 0).Ops(),
            "_EagerConst@CPU:0 _EagerConst@CPU:0 Fill@CPU:0");
  // bool is filled on CPU:0 between two Identities.
  EXPECT_EQ(Plan("nodes:\n  - {op: Const, dtype: bool, shape: [2], value: true}", 0).Ops(),
            "_EagerConst@CPU:0 Identity@CPU:0 Fill@CPU:0 Identity@CPU:0");
  // Under a CPU:0 scope only the Fill runs.
  EXPECT_EQ(Plan("nodes:\n  - {op: Const, shape: [2, 2], fill: 1.0, device: /cpu:0}", 1).Ops(), "Fill@CPU:0");
  // On a GPU the float value goes to the GPU; the small int32 shape stays.
  EXPECT_EQ(Plan("nodes:\n  - {op: Const, shape: [2, 2], fill: 1.0}", 1).Ops(),
            "_EagerConst@GPU:0 _EagerConst@CPU:0 Fill@GPU:0");
}

TEST(EagerProgramTest, PythonScalarsAreCachedByTypeValueDtypeAndScope) {
  EXPECT_EQ(Plan(R"(nodes:
  - {op: Const, value: 7.0}
  - {op: Const, value: 7.00}
  - {op: Const, value: 7}
  - {op: Const, value: 7.0, dtype: float64}
  - {op: Const, value: 7.0, device: /gpu:0}
  - {op: Const, value: [7.0]})", 0).Ops(),
            "_EagerConst@CPU:0 _EagerConst@CPU:0 _EagerConst@CPU:0 _EagerConst@CPU:0 _EagerConst@CPU:0");
}

TEST(EagerProgramTest, Bfloat16FromPythonIsCastOnCpu0First) {
  EXPECT_EQ(Plan("nodes:\n  - {op: Const, dtype: bfloat16, value: [1.5, 2.0]}", 1).Ops(),
            "Cast@CPU:0 _EagerConst@GPU:0");
}

TEST(EagerProgramTest, ResourceVariablesAndTheirReads) {
  // The issue's example, as TensorFlow 2.21 executes it.
  Planned p = Plan(R"(nodes:
  - {name: v, op: Variable, dtype: int32, value: [1, 2]}
  - {name: w, op: Const, dtype: int32, value: [3, 4]}
  - {name: s, op: AddN, inputs: [v, w]}
fetch: [s, v])", 0);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.Ops(),
            "_EagerConst@CPU:0 VarHandleOp@CPU:0 AssignVariableOp@CPU:0 _EagerConst@CPU:0 "
            "ReadVariableOp@CPU:0 AddN@CPU:0");
  const int v = p.graph.Find("v")->id;
  EXPECT_EQ(p.plan.value[v], EagerValue::kVariable);
  EXPECT_EQ(p.plan.value[p.graph.Find("s")->id], EagerValue::kTensor);
  ASSERT_EQ(EagerPrintOps(p.placement, p.plan, v).size(), 2u);
  EXPECT_EQ(EagerPrintOps(p.placement, p.plan, v)[0].op, "ReadVariableOp");
  EXPECT_EQ(EagerPrintOps(p.placement, p.plan, v)[1].op, "Identity");
  EXPECT_EQ(p.graph.nodes[EagerValueNode(p.graph, p.plan, v)].name, "v/read");
  EXPECT_EQ(p.graph.nodes[v].eager_name, "v");
  // init is graph-mode only.
  EXPECT_EQ(p.plan.value[p.graph.Find("init")->id], EagerValue::kNone);
}

TEST(EagerProgramTest, AVariableOnAGpuScopeWithoutAnInt32KernelStaysOnTheCpu) {
  Planned p = Plan(R"(nodes:
  - device: /gpu:0
    name_scope: tower
    nodes:
      - {name: v, op: Variable, dtype: int32, value: 5}
      - {name: f, op: Variable, value: 5.0}
  - {op: Identity, inputs: [tower/v]})", 1);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  // The int32 scalar 5 is small: _EagerConst is pinned to CPU:0.
  EXPECT_EQ(p.Ops(),
            "_EagerConst@CPU:0 VarHandleOp@CPU:0 AssignVariableOp@CPU:0 "
            "_EagerConst@GPU:0 VarHandleOp@GPU:0 AssignVariableOp@GPU:0 "
            "ReadVariableOp@CPU:0 Identity@CPU:0");
  EXPECT_EQ(p.graph.Find("tower/v")->eager_name, "tower/v");
}

TEST(EagerProgramTest, AddNOfOneInputRunsNothingUnlessNamed) {
  Planned p = Plan(R"(nodes:
  - {name: w, op: Const, value: [3.0]}
  - {op: AddN, inputs: [w]}
  - {name: named, op: AddN, inputs: [w]}
  - {op: Cast, DstT: float32, inputs: [w]})", 0);
  EXPECT_EQ(p.Ops(), "_EagerConst@CPU:0 Identity@CPU:0");
  // A Variable is read when add_n converts it (TensorFlow 2.21 runs the
  // read alone); cast to its own dtype returns the Variable itself.
  Planned v = Plan(R"(nodes:
  - {name: v, op: Variable, value: 1.0}
  - {op: AddN, inputs: [v]}
  - {op: Cast, DstT: float32, inputs: [v]})", 0);
  EXPECT_EQ(v.Ops(), "_EagerConst@CPU:0 VarHandleOp@CPU:0 AssignVariableOp@CPU:0 ReadVariableOp@CPU:0");
  EXPECT_EQ(v.plan.value[v.graph.Find("AddN")->id], EagerValue::kTensor);
  EXPECT_EQ(v.plan.value[v.graph.Find("Cast")->id], EagerValue::kVariable);
}

TEST(EagerProgramTest, SmallIntegerOpsArePinnedToTheCpuEvenInAGpuScope) {
  EXPECT_EQ(Plan(R"(nodes:
  - device: /gpu:0
    nodes:
      - {name: a, op: Const, dtype: int32, value: [1, 2]}
      - {name: b, op: Const, dtype: int64, value: [1, 2]}
      - {op: Add, inputs: [a, a]}
      - {op: Const, dtype: int64, fill: 1, shape: [100]}
      - {op: Const, dtype: int64, shape: [100], random: {distribution: uniform, min: 0, max: 9}})", 1).Ops(),
            "_EagerConst@CPU:0 _EagerConst@CPU:0 Add@CPU:0 _EagerConst@CPU:0 _EagerConst@CPU:0 Fill@CPU:0 "
            "_EagerConst@GPU:0");
}

TEST(EagerProgramTest, HardPlacementFailsAtTheFirstOpWithTensorFlowsText) {
  Planned p = Plan(R"(nodes:
  - {name: a, op: Const, value: [[1.0]]}
  - {op: MatMul, inputs: [a, a], device: /gpu:0})", 0, false);
  ASSERT_FALSE(p.status.ok());
  EXPECT_EQ(p.status.message(),
            "e.yaml:3:5: InvalidArgumentError: Could not satisfy device specification "
            "'/job:localhost/replica:0/task:0/device:GPU:0'. enable_soft_placement=0. Supported device types "
            "[CPU]. All available devices [/job:localhost/replica:0/task:0/device:CPU:0]. [Op:MatMul]");
  EXPECT_EQ(p.Ops(), "_EagerConst@CPU:0");
  // _EagerConst runs from C++: no [Op:...] suffix.
  Planned c = Plan("nodes:\n  - {op: Const, value: [1.0], device: /device:GPU:2}", 1, false);
  ASSERT_FALSE(c.status.ok());
  EXPECT_EQ(c.status.message().substr(c.status.message().size() - 2), "].");
}

TEST(EagerProgramTest, SoftPlacementMovesOpsAndSaysSo) {
  Planned p = Plan(R"(nodes:
  - device: /gpu:2
    nodes:
      - {name: a, op: Const, value: [[1.0]]}
      - {op: MatMul, inputs: [a, a]})", 1);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.Ops(), "_EagerConst@GPU:0 MatMul@GPU:0");
  ASSERT_EQ(p.placement.soft_moves.size(), 2u);
}

TEST(EagerProgramTest, LinesAreTheGuidesText) {
  Planned p = Plan(kGuideMatMul, 1);
  EXPECT_EQ(ExecutedOpLines(p.plan.executed, p.devices),
            "Executing op _EagerConst in device /job:localhost/replica:0/task:0/device:GPU:0\n"
            "Executing op _EagerConst in device /job:localhost/replica:0/task:0/device:GPU:0\n"
            "Executing op MatMul in device /job:localhost/replica:0/task:0/device:GPU:0\n");
}

}  // namespace
}  // namespace tfrun
