// Which nodes a run defers into the node that reads them
// (elementwise_fusion.h): the gradient chain of tf_cnn_benchmarks'
// parameter-server update, and each condition that keeps a node out.
#include "core/runtime/elementwise_fusion.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph_testing.h"

namespace tfrun {
namespace {

// Each node's place in run order: its id.
std::vector<int> InIdOrder(size_t n) {
  std::vector<int> position(n);
  for (size_t k = 0; k < n; ++k) position[k] = static_cast<int>(k);
  return position;
}

// weight decay's Mul of the weight, the towers' AddNs, the average's Mul,
// then ApplyGradientDescent (tf_cnn_benchmarks, --variable_update
// parameter_server, one weight).
struct Chain {
  Graph g;
  int v, read, scale, lr, x, tower0, tower1, decay, tower_sum, both, average, apply;
  Chain() {
    v = AddOp(&g, "v", "VariableV2");
    read = AddOp(&g, "v/read", "Identity", {v});
    scale = AddOp(&g, "scale", "Const");
    lr = AddOp(&g, "lr", "Const");
    x = AddOp(&g, "x", "Placeholder");
    tower0 = AddOp(&g, "tower0/MatMul_1", "MatMul", {x, read});
    tower1 = AddOp(&g, "tower1/MatMul_1", "MatMul", {x, read});
    decay = AddOp(&g, "tower1/L2Loss_grad/mul", "Mul", {read, scale});
    tower_sum = AddOp(&g, "tower1/AddN", "AddN", {decay, tower1});
    both = AddOp(&g, "AddN", "AddN", {tower0, tower_sum});
    average = AddOp(&g, "Mul", "Mul", {scale, both});
    apply = AddOp(&g, "apply", "ApplyGradientDescent", {v, lr, average});
  }
  std::vector<FusionRole> Plan(std::vector<int> preserved_ids = {}, std::set<std::pair<int, int>> fed = {},
                               std::vector<int> device_of = {}, std::vector<bool> fuses = {}) const {
    const size_t n = g.nodes.size();
    std::vector<bool> runs(n, true), preserved(n, false);
    for (int id : preserved_ids) preserved[id] = true;
    if (device_of.empty()) device_of.assign(n, 0);
    if (fuses.empty()) fuses.assign(n, true);
    return PlanElementwiseFusion(g, runs, preserved, fed, device_of, fuses, InIdOrder(n));
  }
};

std::vector<std::string> WithRole(const Graph& g, const std::vector<FusionRole>& roles, FusionRole role) {
  std::vector<std::string> names;
  for (const Node& node : g.nodes) {
    if (roles[node.id] == role) names.push_back(node.name);
  }
  return names;
}

using Names = std::vector<std::string>;

TEST(ElementwiseFusionTest, AGradientChainIsComputedByItsVariablesUpdate) {
  const Chain c;
  const std::vector<FusionRole> roles = c.Plan({c.apply});
  EXPECT_EQ(WithRole(c.g, roles, FusionRole::kDeferred),
            (Names{"tower1/L2Loss_grad/mul", "tower1/AddN", "AddN", "Mul"}));
  EXPECT_EQ(WithRole(c.g, roles, FusionRole::kRoot), (Names{"apply"}));
}

// A fetched node keeps its value: it becomes the root of what it reads.
// The weight decay's read of the variable may wait for it: the variable's
// writer reads the root's value (through the average).
TEST(ElementwiseFusionTest, AFetchedNodeIsARootOfWhatItReads) {
  const Chain c;
  const std::vector<FusionRole> roles = c.Plan({c.apply, c.both});
  EXPECT_EQ(WithRole(c.g, roles, FusionRole::kDeferred), (Names{"tower1/L2Loss_grad/mul", "tower1/AddN", "Mul"}));
  EXPECT_EQ(WithRole(c.g, roles, FusionRole::kRoot), (Names{"AddN", "apply"}));
}

// Replicated towers: the summed gradient is read by each tower's update;
// the weight decay's read of a variable waits for it, as every writer of
// the variable reads the sum.
TEST(ElementwiseFusionTest, ASumReadByEveryWriterOfItsVariableReadsItLate) {
  Graph g;
  const int v0 = AddOp(&g, "v0", "VariableV2");
  const int v1 = AddOp(&g, "v1", "VariableV2");
  const int read1 = AddOp(&g, "v1/read", "Identity", {v1});
  const int scale = AddOp(&g, "scale", "Const");
  const int x = AddOp(&g, "x", "Placeholder");
  const int tower0 = AddOp(&g, "tower0/MatMul_1", "MatMul", {x, x});
  const int tower1 = AddOp(&g, "tower1/MatMul_1", "MatMul", {x, read1});
  const int decay = AddOp(&g, "tower1/L2Loss_grad/mul", "Mul", {read1, scale});
  const int tower_sum = AddOp(&g, "tower1/AddN", "AddN", {decay, tower1});
  const int both = AddOp(&g, "AddN", "AddN", {tower0, tower_sum});
  AddOp(&g, "apply0", "ApplyGradientDescent", {v0, scale, both});
  AddOp(&g, "apply1", "ApplyGradientDescent", {v1, scale, both});
  const size_t n = g.nodes.size();
  const std::vector<FusionRole> roles = PlanElementwiseFusion(g, std::vector<bool>(n, true),
                                                              std::vector<bool>(n, false), {},
                                                              std::vector<int>(n, 0), std::vector<bool>(n, true),
                                                              InIdOrder(n));
  EXPECT_EQ(WithRole(g, roles, FusionRole::kDeferred), (Names{"tower1/L2Loss_grad/mul", "tower1/AddN"}));
  EXPECT_EQ(WithRole(g, roles, FusionRole::kRoot), (Names{"AddN"}));
}

// Another writer of the variable after the reader in run order that does
// not wait for the root may run before it: the variable's reader computes
// its value in its own place.
TEST(ElementwiseFusionTest, AVariableWrittenElsewhereIsReadInPlace) {
  Chain c;
  const int writer = AddOp(&c.g, "v/AssignAdd", "AssignAdd", {c.v, c.x});
  (void)writer;
  const std::vector<FusionRole> roles = c.Plan({c.apply, writer});
  EXPECT_EQ(WithRole(c.g, roles, FusionRole::kDeferred), (Names{"tower1/AddN", "AddN", "Mul"}));
  EXPECT_EQ(WithRole(c.g, roles, FusionRole::kRoot), (Names{"apply"}));
}

TEST(ElementwiseFusionTest, NodesThatStayOutOfAFusedPass) {
  const auto deferred = [](const Graph& g, const std::vector<bool>& runs, std::vector<int> device_of = {},
                           std::vector<bool> fuses = {}, std::set<std::pair<int, int>> fed = {}) {
    const size_t n = g.nodes.size();
    if (device_of.empty()) device_of.assign(n, 0);
    if (fuses.empty()) fuses.assign(n, true);
    return WithRole(g, PlanElementwiseFusion(g, runs, std::vector<bool>(n, false), fed, device_of, fuses, InIdOrder(n)),
                    FusionRole::kDeferred);
  };
  Graph g;
  const int x = AddOp(&g, "x", "Const");
  const int a = AddOp(&g, "a", "Square", {x});
  const int b = AddOp(&g, "b", "Neg", {x});
  const int two_readers = AddOp(&g, "two_readers", "Mul", {a, b});
  AddOp(&g, "r1", "Add", {two_readers, a});
  AddOp(&g, "r2", "Sub", {two_readers, b});
  const int three = AddOp(&g, "three", "AddN", {a, b, a});  // its order depends on the buffer it takes
  AddOp(&g, "r3", "Mul", {three, a});
  const int controlled = AddOp(&g, "controlled", "Mul", {a, b}, {x});  // runs later still after x
  AddOp(&g, "r4", "Mul", {controlled, a});
  const int doubled = AddOp(&g, "doubled", "Add", {a, b});
  AddOp(&g, "r5", "Mul", {doubled, doubled});  // read twice by its reader
  const int by_control = AddOp(&g, "by_control", "Add", {a, b});
  AddOp(&g, "r6", "NoOp", {}, {by_control});
  const int into_matmul = AddOp(&g, "into_matmul", "Add", {a, b});
  AddOp(&g, "r7", "MatMul", {into_matmul, a});
  const int wide = AddOp(&g, "wide", "Add", {a, b});
  g.nodes[wide].dtype = DType::kFloat64;
  const int r8 = AddOp(&g, "r8", "Add", {wide, a});
  g.nodes[r8].dtype = DType::kFloat64;
  const int ph = AddOp(&g, "ph", "Placeholder");
  const int unkept = AddOp(&g, "unkept", "Add", {ph, a});  // kept once fed
  AddOp(&g, "r9", "Mul", {unkept, a});
  const int reshaped = AddOp(&g, "reshaped", "Reshape", {a, x});
  const int through = AddOp(&g, "through_reshape", "Add", {reshaped, a});
  AddOp(&g, "r10", "Mul", {through, a});
  const int fine = AddOp(&g, "fine", "Add", {a, b});
  const int root = AddOp(&g, "root", "Mul", {fine, x});
  const size_t n = g.nodes.size();
  std::vector<bool> runs(n, true);
  EXPECT_EQ(deferred(g, runs), (Names{"controlled", "fine"}));

  std::vector<bool> root_idle = runs;
  root_idle[root] = false;
  EXPECT_EQ(deferred(g, root_idle), (Names{"controlled"}));
  std::vector<int> device_of(n, 0);
  device_of[root] = 1;
  EXPECT_EQ(deferred(g, runs, device_of), (Names{"controlled"}));
  std::vector<bool> fuses(n, true);
  fuses[fine] = false;
  EXPECT_EQ(deferred(g, runs, {}, fuses), (Names{"controlled"}));
  EXPECT_EQ(deferred(g, runs, {}, {}, {{fine, 0}}), (Names{"controlled"}));
  // A fed value never changes.
  EXPECT_EQ(deferred(g, runs, {}, {}, {{ph, 0}}), (Names{"controlled", "unkept", "fine"}));
}

// CIFAR-10's moving averages: avg -= (avg - w) * (1 - decay), after w's
// update in run order. The difference reads w at the AssignSub's run: the
// update that wrote w ran before the difference's place, so before that.
// An update after it in run order keeps the difference in its place.
TEST(ElementwiseFusionTest, AMovingAverageIsComputedByItsAssignSub) {
  Graph g;
  const int w = AddOp(&g, "w", "VariableV2");
  const int w_read = AddOp(&g, "w/read", "Identity", {w});
  const int avg = AddOp(&g, "avg", "VariableV2");
  const int avg_read = AddOp(&g, "avg/read", "Identity", {avg});
  const int x = AddOp(&g, "x", "Const");
  const int grad = AddOp(&g, "grad", "MatMul", {x, w_read});
  const int update = AddOp(&g, "update_w", "ApplyGradientDescent", {w, x, grad});
  const int difference = AddOp(&g, "sub_1", "Sub", {avg_read, w_read});
  const int scaled = AddOp(&g, "mul", "Mul", {difference, x});
  AddOp(&g, "AssignMovingAvg", "AssignSub", {avg, scaled});
  const size_t n = g.nodes.size();
  const auto plan = [&](const std::vector<int>& position) {
    return PlanElementwiseFusion(g, std::vector<bool>(n, true), std::vector<bool>(n, false), {},
                                 std::vector<int>(n, 0), std::vector<bool>(n, true), position);
  };
  std::vector<FusionRole> roles = plan(InIdOrder(n));
  EXPECT_EQ(WithRole(g, roles, FusionRole::kDeferred), (Names{"sub_1", "mul"}));
  EXPECT_EQ(WithRole(g, roles, FusionRole::kRoot), (Names{"AssignMovingAvg"}));
  std::vector<int> update_later = InIdOrder(n);
  std::swap(update_later[update], update_later[scaled]);  // the update between the difference and its root
  roles = plan(update_later);
  EXPECT_EQ(WithRole(g, roles, FusionRole::kDeferred), (Names{"mul"}));
}

}  // namespace
}  // namespace tfrun
