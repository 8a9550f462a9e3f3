// The passes on graphs TensorFlow 2.21 wrote (graphs/tf/make_graphs.py),
// against what its Session did with them (graphs/tf/*.run.expected: the
// nodes it placed, by name and op).
#include <gtest/gtest.h>

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
