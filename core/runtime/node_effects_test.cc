// Which nodes change what other nodes read (node_effects.h): the ops of a
// TF1 training step, one by one.
#include "core/runtime/node_effects.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// A node that only writes reference variables names them; one that also
// changes other state, or reaches its variable through another node, or
// by a handle, names none (it runs alone).
TEST(NodeEffectsTest, WrittenReferenceVariables) {
  Graph g;
  const int v = AddOp(&g, "v", "VariableV2");
  const int m = AddOp(&g, "m", "VariableV2");
  const int x = AddOp(&g, "x", "Const");
  const int read = AddOp(&g, "read", "Identity", {v});
  const int handle = AddOp(&g, "h", "VarHandleOp");
  const auto written = [&](const std::string& op, std::vector<int> inputs) {
    return WrittenReferenceVariables(g, g.nodes[AddOp(&g, op + "_node", op, std::move(inputs))]);
  };
  EXPECT_EQ(written("ApplyGradientDescent", {v, x, x}), std::vector<int>{v});
  EXPECT_EQ(written("AssignAdd", {v, x}), std::vector<int>{v});
  EXPECT_TRUE(written("Assign", {v, x}).empty());  // stores a new buffer in the variables' map
  EXPECT_EQ(written("ScatterAdd", {v, x, x}), std::vector<int>{v});
  EXPECT_EQ(written("ApplyMomentum", {v, m, x, x, x}), (std::vector<int>{v, m}));
  EXPECT_EQ(written("ApplyAdam", {v, m, m, x, x, x, x, x, x, x}), (std::vector<int>{v, m}));
  EXPECT_TRUE(written("ApplyGradientDescent", {read, x, x}).empty());  // not a variable's node
  EXPECT_TRUE(written("ResourceApplyGradientDescent", {handle, x, x}).empty());
  EXPECT_TRUE(written("Print", {x, x}).empty());
  EXPECT_TRUE(written("MatMul", {read, x}).empty());  // writes nothing
}

// The nodes that may hold a variable's buffer: its readers, and the
// readers of those that may output it (Identity, Reshape, a reduction),
// not past a node that makes fresh outputs (MatMul), nor along control
// edges.
TEST(NodeEffectsTest, VariableBufferHolders) {
  Graph g;
  const int v = AddOp(&g, "v", "VariableV2");
  const int x = AddOp(&g, "x", "Const");
  const int read = AddOp(&g, "read", "Identity", {v});
  const int product = AddOp(&g, "product", "MatMul", {read, x});
  const int after_product = AddOp(&g, "after_product", "Relu", {product});
  const int reshape = AddOp(&g, "reshape", "Reshape", {read, x});
  const int sum = AddOp(&g, "sum", "Sum", {reshape, x});  // its input itself over dimensions of size 1
  const int after_sum = AddOp(&g, "after_sum", "Mul", {sum, x});
  const int update = AddOp(&g, "update", "ApplyGradientDescent", {v, x, after_product});
  const int after_update = AddOp(&g, "after_update", "Identity", {update});
  AddOp(&g, "controlled", "Relu", {x}, {read});
  AddOp(&g, "unrelated", "Identity", {x});
  EXPECT_EQ(VariableBufferHolders(g, v), (std::vector<int>{read, product, reshape, sum, after_sum, update, after_update}));
  EXPECT_TRUE(MakesFreshOutputs(g.nodes[product]));
  EXPECT_TRUE(MakesFreshOutputs(g.nodes[after_sum]));
  EXPECT_FALSE(MakesFreshOutputs(g.nodes[sum]));
  EXPECT_FALSE(MakesFreshOutputs(g.nodes[read]));
  EXPECT_FALSE(MakesFreshOutputs(g.nodes[update]));
}

}  // namespace
}  // namespace tfrun
