// Which nodes change what other nodes read (node_effects.h): the ops of a
// TF1 training step, one by one.
#include "core/runtime/node_effects.h"

#include <gtest/gtest.h>

#include "core/graph/graph_testing.h"

namespace tfrun {
namespace {

TEST(NodeEffectsTest, WritersOfVariablesQueuesAndStreams) {
  Graph g;
  const int v = AddOp(&g, "v", "VariableV2");
  const int x = AddOp(&g, "x", "Const");
  const int handle = AddOp(&g, "h", "VarHandleOp");
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "assign", "Assign", {v, x})]));  // a reference input
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "sub", "AssignSub", {v, x})]));
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "apply", "ApplyGradientDescent", {v, x, x})]));
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "scatter", "ScatterAdd", {v, x, x})]));
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "set", "AssignVariableOp", {handle, x})]));  // a handle
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "adam", "ResourceApplyAdam", {handle})]));
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "q", "FIFOQueueV2")]));  // stateful
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "print", "Print", {x, x})]));
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "assert", "Assert", {x, x})]));
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "inplace", "InplaceUpdate", {x, x, x})]));
  EXPECT_TRUE(ChangesSharedState(g, g.nodes[AddOp(&g, "made_up", "NotAnOpTensorFlowDefines", {x})]));
}

TEST(NodeEffectsTest, ReadersAndPureOps) {
  Graph g;
  const int v = AddOp(&g, "v", "VariableV2");
  const int x = AddOp(&g, "x", "Const");
  const int handle = AddOp(&g, "h", "VarHandleOp");
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[v]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[x]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[handle]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "read", "Identity", {v})]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "read_h", "ReadVariableOp", {handle})]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "init?", "IsVariableInitialized", {v})]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "init_h?", "VarIsInitializedOp", {handle})]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "rnd", "RandomUniform", {x})]));  // its own generator
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "mm", "MatMul", {x, x})]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "sum", "AddN", {x, x})]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "noop", "NoOp", {}, {x})]));
  EXPECT_FALSE(ChangesSharedState(g, g.nodes[AddOp(&g, "ph", "Placeholder")]));
}

}  // namespace
}  // namespace tfrun
