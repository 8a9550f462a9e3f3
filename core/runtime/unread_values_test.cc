// Which values a run leaves unread, by Grappler's rule (unread_values.h):
// a gradient tuple's dead end, its inputs in turn, and what stays.
#include "core/runtime/unread_values.h"

#include <gtest/gtest.h>

#include "core/graph/graph_testing.h"

namespace tfrun {
namespace {

std::vector<bool> MayBecomeNoOps(const Graph& g) {
  std::vector<bool> may;
  for (const Node& node : g.nodes) may.push_back(MayBecomeNoOp(g, node));
  return may;
}

TEST(UnreadValuesTest, WhatGrapplerMayMakeANoOp) {
  Graph g;
  const int v = AddOp(&g, "v", "VariableV2");
  const int read = AddOp(&g, "v/read", "Identity", {v});
  const int x = AddOp(&g, "x", "Const");
  const int id = AddOp(&g, "id", "Identity", {x});
  const int mm = AddOp(&g, "mm", "MatMul", {x, read});
  const int ph = AddOp(&g, "ph", "Placeholder");
  const int rnd = AddOp(&g, "rnd", "RandomUniform", {x});
  const int assign = AddOp(&g, "assign", "Assign", {v, x});
  const int check = AddOp(&g, "check", "CheckNumerics", {x});
  const int noop = AddOp(&g, "noop", "NoOp");
  const int unknown = AddOp(&g, "unknown", "NotAnOpTensorFlowDefines", {x});
  const int enqueue_size = AddOp(&g, "size", "QueueSizeV2", {x});
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[v]));        // stateful
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[read]));     // an Identity of a variable
  EXPECT_TRUE(MayBecomeNoOp(g, g.nodes[x]));
  EXPECT_TRUE(MayBecomeNoOp(g, g.nodes[id]));
  EXPECT_TRUE(MayBecomeNoOp(g, g.nodes[mm]));
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[ph]));       // keeps the graph feedable
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[rnd]));      // stateful: its draws advance
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[assign]));   // a reference input
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[check]));    // never rewritten
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[noop]));     // no outputs
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[unknown]));  // no OpDef
  EXPECT_FALSE(MayBecomeNoOp(g, g.nodes[enqueue_size]));  // a queue op
}

// conv1's gradient as tf.gradients writes it: the input's gradient reaches
// the train op only through the tuple's control edges, so it and the chain
// that only it reads stay unread; the filter's gradient is read.
TEST(UnreadValuesTest, AGradientTuplesDeadEnd) {
  Graph g;
  const int images = AddOp(&g, "images", "Const");
  const int grad = AddOp(&g, "grad", "Const");
  const int shape = AddOp(&g, "shape", "Shape", {images});
  const int input_grad = AddOp(&g, "input_grad", "Conv2DBackpropInput", {shape, grad, grad});
  const int square = AddOp(&g, "square", "Square", {input_grad});
  const int filter_grad = AddOp(&g, "filter_grad", "Conv2DBackpropFilter", {images, shape, grad});
  const int group = AddOp(&g, "group_deps", "NoOp", {}, {square, filter_grad});
  const int dep = AddOp(&g, "control_dependency", "Identity", {square}, {group});
  const int dep1 = AddOp(&g, "control_dependency_1", "Identity", {filter_grad}, {group});
  const int v = AddOp(&g, "v", "VariableV2");
  const int apply = AddOp(&g, "apply", "ApplyGradientDescent", {v, grad, dep1});
  const int train = AddOp(&g, "train", "NoOp", {}, {apply});
  std::vector<bool> runs(g.nodes.size(), true);
  runs[dep] = false;  // nothing the run needs reads it
  std::vector<bool> preserved(g.nodes.size(), false);
  preserved[train] = true;
  const std::vector<bool> unread = UnreadValues(g, runs, preserved, MayBecomeNoOps(g), {});
  std::vector<int> got;
  for (size_t i = 0; i < unread.size(); ++i) {
    if (unread[i]) got.push_back(static_cast<int>(i));
  }
  EXPECT_EQ(got, (std::vector<int>{input_grad, square}));

  // Fetched, the square is read, and so is what it reads.
  preserved[square] = true;
  const std::vector<bool> fetched = UnreadValues(g, runs, preserved, MayBecomeNoOps(g), {});
  EXPECT_FALSE(fetched[square]);
  EXPECT_FALSE(fetched[input_grad]);

  // A feed of the shape cuts the edges that read it: nothing reads `images`
  // through it, yet the filter's gradient reads `images` itself.
  preserved[square] = false;
  const std::vector<bool> fed = UnreadValues(g, runs, preserved, MayBecomeNoOps(g), {{shape, 0}});
  EXPECT_FALSE(fed[images]);
  EXPECT_FALSE(fed[filter_grad]);
}

TEST(UnreadValuesTest, AStatefulReaderKeepsItsInputsRead) {
  Graph g;
  const int x = AddOp(&g, "x", "Const");
  const int sq = AddOp(&g, "sq", "Square", {x});
  const int print = AddOp(&g, "print", "Print", {sq, sq});  // stateful
  const int done = AddOp(&g, "done", "NoOp", {}, {print});
  std::vector<bool> runs(g.nodes.size(), true);
  std::vector<bool> preserved(g.nodes.size(), false);
  preserved[done] = true;
  const std::vector<bool> unread = UnreadValues(g, runs, preserved, MayBecomeNoOps(g), {});
  EXPECT_FALSE(unread[x]);
  EXPECT_FALSE(unread[sq]);
  EXPECT_FALSE(unread[print]);
}

}  // namespace
}  // namespace tfrun
