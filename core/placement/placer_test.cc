// The placer is pure logic: these run it on simulated devices.
#include "core/placement/placer.h"

#include <gtest/gtest.h>

#include "core/devices/simulated_gpus_for_tests.h"
#include "core/graph_file/loader.h"
#include "core/placement/placement_log.h"

namespace tfrun {
namespace {

struct Placed {
  Status status;
  Placement placement;
  Graph graph;
  std::string Device(const std::string& node) const {
    const Node* n = graph.Find(node);
    return n && placement.device_of[n->id] >= 0 ? std::to_string(placement.device_of[n->id]) : "?";
  }
};

Placed Place(const std::string& yaml, int gpus, bool soft, const char* profile = "tf2",
             const std::vector<std::string>& explain = {}) {
  Placed p;
  StatusOr<Graph> g = LoadGraphText(yaml, "p.yaml");
  EXPECT_TRUE(g.ok()) << g.status().message();
  p.graph = std::move(*g);
  static DeviceSet sets[] = {SimulatedGpus(0), SimulatedGpus(1), SimulatedGpus(2), SimulatedGpus(4)};
  const DeviceSet& devices = sets[gpus == 4 ? 3 : gpus];
  std::vector<int> ids;
  for (const std::string& name : explain) ids.push_back(p.graph.Find(name)->id);
  p.status = PlaceGraph(p.graph, devices, soft, *FindProfile(profile), &p.placement, ids);
  return p;
}

// The explanation of `node` by its name's position in --explain.
const NodeExplanation& Explained(const Placed& p, size_t i) { return p.placement.explanations.at(i); }

std::string NameOf(const Placed& p, int id) { return id >= 0 ? p.graph.nodes[id].name : "-"; }

// Device indices: 0 is CPU:0, 1 + i is GPU:i.
TEST(PlacerTest, GpuBeforeCpuAndGeneratorsFollowConsumers) {
  Placed p = Place(R"(nodes:
  - {name: a, op: Const, value: 1.0, device: /cpu:0}
  - {name: b, op: Const, value: 1.0}
  - {name: c, op: AddN, inputs: [a, b]})", 2, false);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.Device("c"), "1");  // GPU:0
  EXPECT_EQ(p.Device("a"), "0");  // pinned
  EXPECT_EQ(p.Device("b"), "1");  // follows c
}

TEST(PlacerTest, NameOrderIsStringOrder) {
  // Among devices of one type the placer takes the first name in string
  // order, so "GPU:10" comes before "GPU:2". A real machine always has
  // GPU:0 and GPU:1, which come first either way: this device set starts at
  // GPU:2, so string order picks GPU:10 where numeric order would pick GPU:2.
  std::vector<LogicalGpu> logical(10);
  for (int i = 0; i < 10; ++i) logical[i].tf_id = logical[i].cuda_ordinal = i + 2;
  DeviceSet devices = DeviceSet::WithGpus(logical, true);
  StatusOr<Graph> g = LoadGraphText("nodes: [{name: c, op: Const, value: 1}, {name: x, op: Identity, inputs: [c]}]",
                                    "p.yaml");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Placement placement;
  ASSERT_TRUE(PlaceGraph(*g, devices, false, *FindProfile("tf2"), &placement).ok());
  EXPECT_EQ(devices[placement.device_of[1]].name, "/job:localhost/replica:0/task:0/device:GPU:10");
  EXPECT_EQ(devices[placement.device_of[0]].name, "/job:localhost/replica:0/task:0/device:GPU:10");  // follows x
}

TEST(PlacerTest, AvailableDevicesAreListedInStringOrder) {
  // TensorFlow sorts the names it lists: GPU:10 and GPU:11 before GPU:2.
  std::vector<LogicalGpu> logical(12);
  for (int i = 0; i < 12; ++i) logical[i].tf_id = logical[i].cuda_ordinal = i;
  DeviceSet devices = DeviceSet::WithGpus(logical, true);
  StatusOr<Graph> g = LoadGraphText("nodes: [{name: c, op: Const, value: 1, device: /gpu:12}]", "p.yaml");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Placement placement;
  const Status s = PlaceGraph(*g, devices, false, *FindProfile("tf2"), &placement);
  ASSERT_FALSE(s.ok());
  const std::string gpu = "/job:localhost/replica:0/task:0/device:GPU:";
  EXPECT_NE(s.message().find("available devices are [ /job:localhost/replica:0/task:0/device:CPU:0, " + gpu + "0, " +
                             gpu + "1, " + gpu + "10, " + gpu + "11, " + gpu + "2, " + gpu + "3, "),
            std::string::npos)
      << s.message();
}

TEST(PlacerTest, SoftPlacementClearsTypeAndIdButKeepsTheRest) {
  const char* yaml = R"(nodes:
  - {name: a, op: Const, value: 1.0, device: /gpu:3}
  - {name: b, op: Identity, inputs: [a], device: /gpu:3}
  - {name: i, op: Const, dtype: int32, value: [[1]]}
  - {name: c, op: MatMul, inputs: [i, i], device: /gpu:0})";
  Placed hard = Place(yaml, 1, false);
  EXPECT_FALSE(hard.status.ok());
  EXPECT_EQ(hard.status.kind(), ErrorKind::kPlacement);
  Placed soft = Place(yaml, 1, true);
  ASSERT_TRUE(soft.status.ok()) << soft.status.message();
  EXPECT_EQ(soft.Device("b"), "1");  // /gpu:3 -> first GPU
  EXPECT_EQ(soft.Device("c"), "0");  // no int32 MatMul on GPUs
  EXPECT_EQ(soft.placement.soft_moves.size(), 3u);
  EXPECT_NE(soft.placement.soft_moves[1].find("no MatMul kernel for int32 on /device:GPU:0"), std::string::npos);
}

TEST(PlacerTest, VariableGroupIsPlacedTogether) {
  Placed p = Place(R"(nodes:
  - device: /gpu:0
    nodes: [{name: v, op: Variable, dtype: int32, value: 1}])", 1, true);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.Device("v"), "0");
  EXPECT_EQ(p.Device("v/Assign"), "0");
  EXPECT_EQ(p.Device("v/read"), "0");
  Placed f = Place(R"(nodes:
  - device: /gpu:0
    nodes: [{name: w, op: Variable, value: 1.5}])", 1, false);
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(f.Device("w"), "1");
  EXPECT_EQ(f.Device("w/read"), "1");
}

// Soft placement's note says why each node moved: the Variable has no
// int32 kernel on a GPU; its read (an Identity, which has one) moved
// because it is colocated with the Variable.
TEST(PlacerTest, SoftMoveNotesNameTheColocatedNodeThatCannotMove) {
  Placed p = Place(R"(nodes:
  - {name: v, op: Variable, dtype: int32, value: [1, 2], device: /gpu:0})", 1, true);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.placement.soft_moves.size(), 3u);
  EXPECT_EQ(p.placement.soft_moves[0],
            "soft placement put 'v' (VariableV2) on /job:localhost/replica:0/task:0/device:CPU:0: no VariableV2 "
            "kernel for int32 on /device:GPU:0");
  EXPECT_EQ(p.placement.soft_moves[2],
            "soft placement put 'v/read' (Identity) on /job:localhost/replica:0/task:0/device:CPU:0: it is colocated "
            "with 'v' (VariableV2), which has no VariableV2 kernel for int32 on /device:GPU:0");
}

// A node that asks for no device, colocated with one whose device does not
// exist (a variable's initializer in a TensorFlow graph, which
// colocate_with keeps out of the device scope): its note names the other
// node's request, and that no device matches it.
TEST(PlacerTest, SoftMoveNotesNameTheDeviceTheColocatedNodeAsksFor) {
  const DeviceSet devices = SimulatedGpus(0);
  Node v;
  v.name = "v";
  v.op = "VarHandleOp";
  v.dtype = DType::kFloat32;
  StatusOr<DeviceSpec> gpu3 = DeviceSpec::Parse("/device:GPU:3");
  ASSERT_TRUE(gpu3.ok());
  v.requested_device = *gpu3;
  EXPECT_EQ(SoftMoveNote("c", "Const", DType::kInt32, DeviceSpec(), devices[0], devices, &v),
            "soft placement put 'c' (Const) on /job:localhost/replica:0/task:0/device:CPU:0: it is colocated with "
            "'v' (VarHandleOp), and no device matches /device:GPU:3");
}

TEST(PlacerTest, ImportOrdersOfEachEra) {
  StatusOr<Graph> g = LoadGraphText(R"(nodes:
  - device: /gpu:2
    nodes: [{op: Const, value: 1}, {op: Const, value: 1}, {op: AddN, inputs: [Const, Const_1]}]
  - device: /gpu:3
    nodes: [{op: Const, value: 1}, {op: Const, value: 1}, {op: AddN, inputs: [Const_2, Const_3]}]
  - {op: AddN, inputs: [AddN, AddN_1]})",
                                    "p.yaml");
  ASSERT_TRUE(g.ok());
  auto names = [&](const std::vector<int>& ids) {
    std::vector<std::string> out;
    for (int id : ids) out.push_back(g->nodes[id].name);
    return out;
  };
  EXPECT_EQ(names(ImportOrder(*g, ImportOrder::kFile)),
            (std::vector<std::string>{"Const", "Const_1", "AddN", "Const_2", "Const_3", "AddN_1", "AddN_2"}));
  EXPECT_EQ(names(ImportOrder(*g, ImportOrder::kStack)),
            (std::vector<std::string>{"Const_3", "Const_2", "AddN_1", "Const_1", "Const", "AddN", "AddN_2"}));
}

// graph_constructor.cc imports the lowest-index node whose inputs are all
// imported (a heap); with edges that point forward that is not file order.
TEST(PlacerTest, FileImportOrderTakesTheLowestReadyNode) {
  Graph g;
  g.nodes.resize(5);
  const std::vector<std::vector<int>> inputs = {{3}, {}, {0, 4}, {}, {1}};
  for (int id = 0; id < 5; ++id) {
    g.nodes[id].id = id;
    g.nodes[id].inputs = inputs[id];
    for (int in : inputs[id]) g.nodes[in].consumers.push_back(id);
  }
  EXPECT_EQ(ImportOrder(g, ImportOrder::kFile), (std::vector<int>{1, 3, 0, 4, 2}));
  EXPECT_EQ(ImportOrder(g, ImportOrder::kStack), (std::vector<int>{3, 0, 1, 4, 2}));
}

TEST(PlacerTest, PartialPlacementIsKeptForTheLogOnError) {
  Placed p = Place(R"(nodes:
  - {name: a, op: Const, value: 1.0}
  - {name: ok, op: Identity, inputs: [a]}
  - {name: bad, op: Identity, inputs: [a], device: /gpu:5})", 1, false);
  ASSERT_FALSE(p.status.ok());
  EXPECT_EQ(p.placement.log_order.size(), 1u);  // 'ok' was placed and logged first
  EXPECT_NE(p.status.message().find("p.yaml:4:5: InvalidArgumentError: Cannot assign a device for operation bad"),
            std::string::npos)
      << p.status.message();
}

TEST(PlacerTest, DotDrawsDevicesAndCrossDeviceEdges) {
  Placed p = Place(R"(nodes:
  - {name: a, op: Const, value: 1.0, device: /cpu:0}
  - {name: b, op: Identity, inputs: [a]})", 1, false);
  ASSERT_TRUE(p.status.ok());
  std::string dot = PlacementDot(p.graph, SimulatedGpus(1), p.placement);
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos);
  EXPECT_NE(dot.find("label=\"/job:localhost/replica:0/task:0/device:GPU:0\""), std::string::npos);
  EXPECT_NE(dot.find("\"a\" -> \"b\" [style=bold"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"b\\n(Identity)\""), std::string::npos) << dot;
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

TEST(PlacerExplainTest, GroupJoinsSoftStageAndWhyEachDeviceIsOut) {
  // An int32 Variable on the GPU: VariableV2 and Assign have no int32 GPU
  // kernel, so soft placement moves the whole group (ref edge and _class).
  Placed p = Place(R"(nodes:
  - {name: v, op: Variable, dtype: int32, value: 5, device: /gpu:0}
  - {name: x, op: Identity, inputs: [v]})", 1, true, "tf2", {"v/read"});
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  const NodeExplanation& e = Explained(p, 0);
  ASSERT_EQ(e.members.size(), 3u);
  EXPECT_EQ(NameOf(p, e.members[0].node), "v");
  EXPECT_EQ(e.members[0].types, (std::vector<std::string>{"CPU"}));
  bool ref_edge = false, class_join = false;
  for (const ColocationJoin& j : e.joins) {
    if (j.why == ColocationJoin::Why::kRefEdge && NameOf(p, j.node) == "v/Assign" && NameOf(p, j.with) == "v") {
      ref_edge = j.input == 0;
    }
    if (j.why == ColocationJoin::Why::kClass && NameOf(p, j.node) == "v/read" && j.name == "v") class_join = true;
  }
  EXPECT_TRUE(ref_edge);
  EXPECT_TRUE(class_join);
  EXPECT_EQ(e.merged_request.ToString(), "/device:GPU:0");
  EXPECT_EQ(e.stage, CandidateStage::kSoftRelaxed);
  EXPECT_EQ(e.group_types, (std::vector<std::string>{"CPU"}));
  ASSERT_EQ(e.devices.size(), 2u);  // GPU:0 first (priority 210), then CPU:0
  EXPECT_EQ(e.devices[0], 1);
  EXPECT_EQ(e.excluded[0], "no GPU kernel for VariableV2 ('v'), Assign ('v/Assign')");
  EXPECT_EQ(e.excluded[1], "");
  EXPECT_EQ(e.rule, PlacementRule::kFirstCandidate);
  EXPECT_EQ(NameOf(p, e.decided_by), "v");  // the group's first node placed
  EXPECT_EQ(e.device, 0);
  EXPECT_EQ(p.placement.device_of[e.node], e.device);
}

TEST(PlacerExplainTest, HeuristicAAndWhyItDidNotApply) {
  Placed p = Place(R"(nodes:
  - {name: a, op: Const, value: 1.0}
  - {name: b, op: Const, value: 2.0}
  - {name: c, op: Identity, inputs: [a], device: /cpu:0}
  - {name: d, op: Identity, inputs: [b], device: /cpu:0}
  - {name: e, op: Identity, inputs: [b], device: /gpu:1})", 2, false, "tf2", {"a", "b"});
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(Explained(p, 0).rule, PlacementRule::kHeuristicA);
  EXPECT_EQ(NameOf(p, Explained(p, 0).rule_node), "c");
  EXPECT_EQ(Explained(p, 0).device, 0);  // with c on CPU:0, not the first candidate GPU:0
  EXPECT_EQ(Explained(p, 1).rule, PlacementRule::kFirstCandidate);
  EXPECT_EQ(Explained(p, 1).rule_note, "Heuristic A did not apply: its consumers are on different devices");
  EXPECT_EQ(Explained(p, 1).device, 1);
}

TEST(PlacerExplainTest, FailingGroupAndGroupsNeverPlaced) {
  // c asks for a GPU that is not there: its group fails; d, later in
  // import order, is never placed.
  Placed p = Place(R"(nodes:
  - {name: a, op: Const, value: 1.0}
  - {name: c, op: Identity, inputs: [a], device: /gpu:3}
  - {name: d, op: Identity, inputs: [c]})", 2, false, "tf2", {"c", "d"});
  ASSERT_FALSE(p.status.ok());
  const NodeExplanation& c = Explained(p, 0);
  EXPECT_EQ(c.rule, PlacementRule::kNotPlaced);
  EXPECT_EQ(c.stage, CandidateStage::kNone);
  EXPECT_EQ(c.error, p.status.message());
  ASSERT_EQ(c.excluded.size(), 3u);
  for (const std::string& why : c.excluded) EXPECT_EQ(why, "does not match '/device:GPU:3'");
  const NodeExplanation& d = Explained(p, 1);
  EXPECT_EQ(d.rule, PlacementRule::kNotPlaced);
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.device, -1);
  EXPECT_EQ(d.stage, CandidateStage::kRequest);  // where it would have gone
}

TEST(PlacerExplainTest, TextNamesTheRuleAndTheChosenDevice) {
  Placed p = Place(R"(nodes:
  - {name: a, op: Const, value: 1.0}
  - {name: c, op: Identity, inputs: [a], device: /cpu:0})", 1, false, "tf2", {"a"});
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  static const DeviceSet devices = SimulatedGpus(1);
  const std::string text = ExplanationText(Explained(p, 0), p.graph, devices, *FindProfile("tf2"));
  EXPECT_NE(text.find("Explain 'a' (Const):\n  Colocation group: 1 node\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    1. /job:localhost/replica:0/task:0/device:GPU:0 (GPU, priority 210)\n"
                      "    2. /job:localhost/replica:0/task:0/device:CPU:0 (CPU, priority 70)  <- chosen\n"
                      "  Rule: Heuristic A: a generator goes where all its consumers went (as 'c')\n"
                      "  Placed on /job:localhost/replica:0/task:0/device:CPU:0\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace tfrun
