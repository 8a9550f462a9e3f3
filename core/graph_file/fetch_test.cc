#include "core/graph_file/fetch.h"

#include <gtest/gtest.h>

#include "core/graph_file/yaml_texts_for_tests.h"

namespace tfrun {
namespace {

// a, b consumed by s; n a NoOp nobody consumes; lone consumed by nobody.
Graph SmallGraph() {
  Graph g;
  g.path = "g.yaml";
  auto add = [&](const std::string& name, const std::string& op, std::vector<int> inputs, bool has_output = true) {
    Node n;
    n.name = name;
    n.op = op;
    n.num_outputs = has_output ? 1 : 0;
    (op == "NoOp" ? n.control_inputs : n.inputs) = std::move(inputs);
    g.Add(std::move(n));
  };
  add("a", "Const", {});
  add("b", "Const", {});
  add("s", "AddN", {0, 1});
  add("n", "NoOp", {2}, false);
  add("lone", "Const", {});
  return g;
}

class FetchTest : public ::testing::Test {
 protected:
  Status Read(const std::string& text) {
    graph_.fetch.clear();
    graph_.targets.clear();
    const YamlNode root = texts_.Parse(text);
    return ReadFetch(fields_, root["fetch"], root["targets"], &graph_);
  }
  Graph graph_ = SmallGraph();
  FieldReader fields_{"g.yaml"};
  YamlTexts texts_;
};

TEST_F(FetchTest, DefaultIsWhatNothingConsumesExceptNoOps) {
  EXPECT_EQ(NodesOf(DefaultFetch(graph_)), (std::vector<int>{4}));
  ASSERT_TRUE(Read("other: 1").ok());
  EXPECT_EQ(NodesOf(graph_.fetch), (std::vector<int>{4}));
}

TEST_F(FetchTest, ListedNamesInOrder) {
  ASSERT_TRUE(Read("fetch: [s, a, n]").ok());
  EXPECT_EQ(NodesOf(graph_.fetch), (std::vector<int>{2, 0, 3}));
  EXPECT_EQ(Read("fetch: [ss]").message(), "g.yaml:1:9: fetch 'ss' names no node (did you mean 's'?)");
  // sess.run([a, a]) and sess.run([]) are fine: a twice, or nothing.
  ASSERT_TRUE(Read("fetch: [a, a]").ok());
  EXPECT_EQ(NodesOf(graph_.fetch), (std::vector<int>{0, 0}));
  ASSERT_TRUE(Read("fetch: []").ok());
  EXPECT_TRUE(graph_.fetch.empty());
  EXPECT_EQ(Read("targets: [n, n]").message(), "g.yaml:1:14: 'n' is a target twice");
  EXPECT_EQ(Read("targets: []").message(), "g.yaml:1:10: targets is empty");
  EXPECT_EQ(Read("fetch: a").message(), "g.yaml:1:8: fetch must be a list of node names");
}

// sess.run(init) without print(): targets run first and print nothing, so
// without a fetch list nothing is fetched.
TEST_F(FetchTest, TargetsAreRunNotPrinted) {
  ASSERT_TRUE(Read("targets: [n]").ok());
  EXPECT_EQ(graph_.targets, std::vector<int>{3});
  EXPECT_TRUE(graph_.fetch.empty());
  ASSERT_TRUE(Read("targets: [n]\nfetch: [s]").ok());
  EXPECT_EQ(NodesOf(graph_.fetch), std::vector<int>{2});
  EXPECT_EQ(Read("targets: [n, n]").message(), "g.yaml:1:14: 'n' is a target twice");
  EXPECT_EQ(Read("targets: [x]").message(), "g.yaml:1:11: targets 'x' names no node (did you mean 'a'?)");
  EXPECT_EQ(Read("targets: []").message(), "g.yaml:1:10: targets is empty");
}

}  // namespace
}  // namespace tfrun
