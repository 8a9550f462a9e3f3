// The graph's rewrite operations, as passes use them: names from one
// counter, edges moved with their consumer lists kept sorted, removal that
// keeps ids until Compact renumbers in order.
#include "core/graph/graph.h"

#include <gtest/gtest.h>

#include "core/graph/graph_testing.h"

namespace tfrun {
namespace {

TEST(GraphTest, NewNameCountsAcrossTheGraph) {
  Graph g;
  EXPECT_EQ(g.NewName("acc/Internal"), "acc/Internal/_0");
  EXPECT_EQ(g.NewName("pc/Internal"), "pc/Internal/_1");
}

TEST(GraphTest, NodeClassesComeFromTheOp) {
  Graph g;
  EXPECT_EQ(g.nodes[AddOp(&g, "s", "RefSwitch")].cls, NodeClass::kSwitch);
  EXPECT_EQ(g.nodes[AddOp(&g, "i", "RefIdentity")].cls, NodeClass::kIdentity);
  EXPECT_EQ(g.nodes[AddOp(&g, "n", "Neg")].cls, NodeClass::kOther);
  EXPECT_TRUE(g.HasControlFlow());
}

TEST(GraphTest, ReplaceUsesRemoveAndCompact) {
  Graph g;
  const int a = AddOp(&g, "a", "Const");
  const int old = AddOp(&g, "old", "Neg", {a});
  const int user = AddOp(&g, "user", "Neg", {old});
  const int after = AddOp(&g, "after", "NoOp", {}, {old});
  const int replacement = AddOp(&g, "old", "Abs", {a});  // takes the old node's name
  g.ReplaceUses(old, replacement);
  g.Remove(old);
  EXPECT_EQ(g.nodes[user].inputs, std::vector<int>{replacement});
  EXPECT_EQ(g.nodes[after].control_inputs, std::vector<int>{replacement});
  EXPECT_EQ(g.nodes[replacement].consumers, (std::vector<int>{user, after}));
  EXPECT_EQ(g.nodes[a].consumers, std::vector<int>{replacement});
  EXPECT_TRUE(g.nodes[old].removed);
  EXPECT_EQ(g.nodes.size(), 5u);  // ids stay while passes run
  g.fetch = {{replacement, 0}};
  g.Compact();
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[1].name, "user");
  EXPECT_EQ(g.nodes[3].name, "old");
  EXPECT_EQ(g.nodes[3].op, "Abs");
  EXPECT_EQ(g.nodes[1].inputs, std::vector<int>{3});
  EXPECT_EQ(g.nodes[3].consumers, (std::vector<int>{1, 2}));
  EXPECT_EQ(g.fetch[0].node, 3);
  EXPECT_EQ(g.Find("old")->id, 3);
}

TEST(GraphTest, ABackEdgeJoinsItsMergeAfterBothExist) {
  Graph g;
  const int enter = AddOp(&g, "enter", "Enter");
  const int merge = AddOp(&g, "merge", "Merge", {enter, -1});
  const int next = AddOp(&g, "next", "NextIteration", {merge});
  g.SetInput(merge, 1, {next, 0});
  EXPECT_EQ(g.nodes[merge].inputs, (std::vector<int>{enter, next}));
  EXPECT_TRUE(g.IsBackEdge(g.nodes[merge], 1));
  EXPECT_FALSE(g.IsBackEdge(g.nodes[merge], 0));
  EXPECT_EQ(g.nodes[next].consumers, std::vector<int>{merge});
}

}  // namespace
}  // namespace tfrun
