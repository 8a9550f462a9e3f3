// The passes on graphs TensorFlow 2.21 wrote (graphs/tf/make_graphs.py),
// against what its Session did with them (graphs/tf/*.run.expected: the
// nodes it placed, by name and op).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/graph/function_library.h"
#include "core/graph_def/graph_def_import.h"
#include "core/passes/pass_registry.h"

namespace tfrun {
namespace {

Graph Rewritten(const std::string& path) {
  StatusOr<Graph> g = LoadTfGraph(path, GraphDefImportOptions());
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return Graph();
  const Status s = RunPrePlacementPasses(&*g, nullptr);
  EXPECT_TRUE(s.ok()) << s.message();
  return std::move(*g);
}

// "name (op)" of every node, in id order.
std::vector<std::string> NodesOf(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes) out.push_back(n.name + " (" + n.op + ")");
  return out;
}

TEST(PassesTest, TheTableIsTensorFlowsOrder) {
  std::vector<std::string> names;
  int group = -1;
  for (const PassRow& row : PrePlacementPasses()) {
    EXPECT_GE(row.group, group) << row.name;
    group = row.group;
    EXPECT_TRUE(row.run != nullptr || !row.why_not.empty()) << row.name;
    names.emplace_back(row.name);
  }
  EXPECT_EQ(names[1], "AccumulateNV2RemovePass");
  EXPECT_EQ(names[2], "LowerFunctionalOpsPass");
  EXPECT_EQ(names[3], "ParallelConcatRemovePass");
}

// TensorFlow's log for it: acc/Internal/_0 ... _6, then acc, on CPU:1.
TEST(PassesTest, AccumulateNV2BecomesAnAccumulator) {
  const Graph g = Rewritten("graphs/tf/accumulate_n.pbtxt");
  EXPECT_EQ(NodesOf(g), (std::vector<std::string>{
                            "a (Const)", "b (Const)", "y/y (Const)", "y (Mul)", "acc/Internal/_0 (TemporaryVariable)",
                            "acc/Internal/_1 (Shape)", "acc/Internal/_2 (Const)", "acc/Internal/_3 (Fill)",
                            "acc/Internal/_4 (Assign)", "acc/Internal/_5 (AssignAdd)", "acc/Internal/_6 (AssignAdd)",
                            "acc (DestroyTemporaryVariable)"}));
  const Node& destroy = *g.Find("acc");
  EXPECT_EQ(destroy.requested_device_text, "/device:CPU:1");
  EXPECT_EQ(destroy.control_inputs.size(), 2u);  // after both AssignAdds
  EXPECT_EQ(g.Find("acc/Internal/_5")->inputs, (std::vector<int>{g.Find("acc/Internal/_4")->id, 0}));
  EXPECT_EQ(g.PropertiesOf(*g.Find("acc/Internal/_0"))->output_types, std::vector<std::string>{"FLOAT_REF"});
  EXPECT_EQ(g.name_counter, 7);
  // Its consumer reads the node that took its name, added after it.
  EXPECT_EQ(g.Find("y")->inputs[0], destroy.id);
  EXPECT_GT(destroy.id, g.Find("y")->id);
}

TEST(PassesTest, AccumulateNV2InAParallelLoopBecomesAddN) {
  const Graph g = Rewritten("graphs/tf/accumulate_n_loop.pbtxt");
  const Node* acc = g.Find("loop/acc");
  ASSERT_TRUE(acc != nullptr);
  EXPECT_EQ(acc->op, "AddN");
  EXPECT_EQ(acc->id, static_cast<int>(g.nodes.size()) - 1);  // appended, as TensorFlow's log shows
  EXPECT_EQ(g.nodes[acc->consumers[0]].name, "loop/NextIteration_1");
}

TEST(PassesTest, ParallelConcatBecomesABufferAndUpdates) {
  const Graph g = Rewritten("graphs/tf/parallel_concat.pbtxt");
  EXPECT_EQ(NodesOf(g), (std::vector<std::string>{
                            "a (Const)", "b (Const)", "pc/Internal/_0 (_ParallelConcatStart)",
                            "pc/Internal/_1 (_ParallelConcatUpdate)", "pc/Internal/_2 (_ParallelConcatUpdate)",
                            "pc (Identity)"}));
  EXPECT_EQ(g.Find("pc")->control_inputs.size(), 2u);
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

// A text GraphDef imported and run through the passes: the first error.
std::string PassError(const std::string& text) {
  StatusOr<TfGraphFile> file = ParseTfGraphBytes(text, "g.pbtxt", "");
  if (!file.ok()) return "parse: " + file.status().message();
  StatusOr<Graph> g = ImportGraphDef(*file, "g.pbtxt", GraphDefImportOptions());
  if (!g.ok()) return "import: " + g.status().message();
  const Status s = RunPrePlacementPasses(&*g, nullptr);
  return s.ok() ? "" : s.message();
}

const char kScalar[] =
    "node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor "
    "{ dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }\n";

TEST(LowerFunctionalOpsTest, AFunctionThatCallsItselfIsAnErrorNotAnEndlessGraph) {
  const std::string text = std::string(kScalar) +
                           "node { name: 'call' op: 'f' input: 'x' attr { key: '_lower_as_multi_device_function' "
                           "value { b: true } } }\n"
                           "library { function { signature { name: 'f' input_arg { name: 'a' type: DT_FLOAT } "
                           "output_arg { name: 'out' type: DT_FLOAT } } node_def { name: 'inner' op: 'f' input: 'a' "
                           "attr { key: '_lower_as_multi_device_function' value { b: true } } } ret { key: 'out' "
                           "value: 'inner:out:0' } } }\n";
  EXPECT_EQ(PassError(text), "g.pbtxt:2:8: node 'call/inner': function 'f' calls itself: inlining it would never end");
}

TEST(LowerFunctionalOpsTest, ABranchMissingFromTheLibraryIsNamed) {
  const std::string text =
      std::string(kScalar) +
      "node { name: 'p' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' value { tensor "
      "{ dtype: DT_BOOL tensor_shape {} bool_val: true } } } }\n"
      "node { name: 'c' op: 'StatelessIf' input: 'p' input: 'x' attr { key: 'Tcond' value { type: DT_BOOL } } attr { "
      "key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT } } } attr { "
      "key: 'then_branch' value { func { name: 't' } } } attr { key: 'else_branch' value { func { name: 'nope' } } } "
      "attr { key: '_lower_using_switch_merge' value { b: true } } }\n"
      "library { function { signature { name: 't' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'out' "
      "type: DT_FLOAT } } node_def { name: 'n' op: 'Neg' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } } ret "
      "{ key: 'out' value: 'n:y:0' } } }\n";
  EXPECT_EQ(PassError(text), "g.pbtxt:3:8: node 'c': the graph's library has no function 'nope'");
}

// TensorFlow's names and order for a lowered cond (graphs/tf/cond_v2_run:
// the Session's log of the same graph, 110 lines, is its golden).
TEST(LowerFunctionalOpsTest, ACondBecomesSwitchAndMergeWithItsBranchesInlined) {
  const Graph g = Rewritten("graphs/tf/cond_v2_run.pbtxt");
  const std::vector<std::string> nodes = NodesOf(g);
  auto at = [&](const std::string& node) { return std::find(nodes.begin(), nodes.end(), node) - nodes.begin(); };
  EXPECT_LT(at("cond/switch_pred/_2 (Switch)"), at("cond/output/_7 (Merge)"));
  EXPECT_LT(at("cond (IdentityN)"), at("Func/cond/then/_0/input_control_node/_27 (NoOp)"));
  EXPECT_LT(at("cond/then/_0/add_0 (AddV2)"), at("cond/then/_0 (IdentityN)"));
  EXPECT_LT(at("outer/else/_10/inner/then/_57/sub_0 (Sub)"), static_cast<long>(nodes.size()));
  for (const Node& n : g.nodes) EXPECT_TRUE(n.op != "If" && n.op != "StatelessIf" && CalledFunction(g, n).empty()) << n.name;
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

// A call whose function returns a resource, kept as a node: an Identity
// between each input and the call and on each edge out, named as
// TensorFlow's log of graphs/tf/isolate_run names them, after every other
// node; the call reads the first ones, its consumers the others.
TEST(PassesTest, ACallReturningAResourceIsKeptBetweenIdentities) {
  const Graph g = Rewritten("graphs/tf/isolate_run.pbtxt");
  const std::vector<std::string> nodes = NodesOf(g);
  ASSERT_GE(nodes.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(nodes.end() - 4, nodes.end()),
            (std::vector<std::string>{"v_PartitionedCall (Identity)", "x_PartitionedCall (Identity)",
                                      "PartitionedCall_read (Identity)", "PartitionedCall_add (Identity)"}));
  const Node& call = *g.Find("PartitionedCall");
  EXPECT_EQ(call.inputs, (std::vector<int>{g.Find("v_PartitionedCall")->id, g.Find("x_PartitionedCall")->id}));
  EXPECT_EQ(g.Find("read")->inputs[0], g.Find("PartitionedCall_read")->id);
  EXPECT_EQ(g.Find("PartitionedCall_add")->input(0).index, 1);
}

}  // namespace
}  // namespace tfrun
