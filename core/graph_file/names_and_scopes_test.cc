#include "core/graph_file/names_and_scopes.h"

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <random>

#include "core/graph_file/yaml_texts_for_tests.h"

namespace tfrun {
namespace {

// Graph.unique_name as tensorflow/python/framework/ops.py writes it.
class OpsPyNamer {
 public:
  std::string Unique(const std::string& name) {
    std::string key = name;
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    int i = names_in_use_[key];
    names_in_use_[key] = i + 1;
    if (i == 0) return name;
    const std::string base_key = key;
    while (names_in_use_.count(key)) {
      key = base_key + "_" + std::to_string(i);
      ++i;
    }
    names_in_use_[key] = 1;
    return name + "_" + std::to_string(i - 1);
  }

 private:
  std::map<std::string, int> names_in_use_;
};

TEST(UniqueNamerTest, GivesWhatOpsPyGives) {
  std::mt19937 rng(7);
  const std::vector<std::string> bases = {"a", "A", "a_1", "a_2", "a_1_1", "Const", "const_3", "b"};
  for (int trial = 0; trial < 200; ++trial) {
    UniqueNamer ours;
    OpsPyNamer reference;
    for (int k = 0; k < 60; ++k) {
      const std::string name = bases[rng() % bases.size()];
      ASSERT_EQ(ours.Unique(name), reference.Unique(name)) << "trial " << trial << " call " << k;
    }
  }
}

TEST(UniqueNamerTest, ManyTakenSuffixesAreSkipped) {
  UniqueNamer ours;
  OpsPyNamer reference;
  for (int i = 1; i <= 500; ++i) ASSERT_EQ(ours.Unique("x_" + std::to_string(i)), reference.Unique("x_" + std::to_string(i)));
  for (int i = 0; i < 600; ++i) ASSERT_EQ(ours.Unique("x"), reference.Unique("x"));
  EXPECT_EQ(ours.Unique("x"), "x_1100");
}

TEST(NodeNameTest, TensorFlowsOpNameRule) {
  EXPECT_TRUE(IsValidNodeName("tower_1/a.b-c>d", false));
  EXPECT_TRUE(IsValidNodeName(".hidden", false));
  EXPECT_FALSE(IsValidNodeName("_x", false));
  EXPECT_TRUE(IsValidNodeName("_x", true));
  EXPECT_FALSE(IsValidNodeName("a b", false));
  EXPECT_FALSE(IsValidNodeName("", false));
}

class ScopeReaderTest : public ::testing::Test {
 protected:
  YamlNode Entry(const std::string& text) { return texts_.Parse(text); }
  FieldReader fields_{"g.yaml"};
  UniqueNamer namer_;
  ScopeReader scopes_{fields_, &namer_};
  Graph graph_;
  YamlTexts texts_;
};

TEST_F(ScopeReaderTest, ScopesMergeDevicesAndMakeTheirNamesUnique) {
  Scope outer;
  outer.device = *DeviceSpec::Parse("/job:localhost/device:GPU:1");
  outer.name_prefix = "tower/";
  StatusOr<Scope> inner = scopes_.Enter(Entry("{device: /replica:0, name_scope: s, nodes: []}"), outer, graph_);
  ASSERT_TRUE(inner.ok()) << inner.status().message();
  EXPECT_EQ(inner->device.ToString(), "/job:localhost/replica:0/device:GPU:1");
  EXPECT_EQ(inner->device_text, "/replica:0");
  EXPECT_EQ(inner->name_prefix, "tower/s/");
  EXPECT_EQ(scopes_.Enter(Entry("{name_scope: s, nodes: []}"), outer, graph_)->name_prefix, "tower/s_1/");
}

TEST_F(ScopeReaderTest, EmptyDeviceClearsAndErrorsNameTheNode) {
  Scope outer;
  outer.device = *DeviceSpec::Parse("/gpu:0");
  StatusOr<Scope> cleared = scopes_.ForNode(Entry("{device: ''}"), outer, "n", graph_);
  ASSERT_TRUE(cleared.ok());
  EXPECT_TRUE(cleared->device.empty());
  StatusOr<Scope> bad = scopes_.ForNode(Entry("{device: [1]}"), outer, "n", graph_);
  EXPECT_EQ(bad.status().message(), "g.yaml:1:10: node 'n': device must be a string such as /gpu:0");
  EXPECT_EQ(scopes_.Enter(Entry("{nodes: [], nmae_scope: x}"), outer, graph_).status().message(),
            "g.yaml:1:13: unknown key 'nmae_scope' in a scope (did you mean 'name_scope'?)");
}

// colocate_with: the block's node on the stack, the device stack reset
// inside it (an outer /gpu:1 is dropped, an inner device kept); a node the
// block colocates takes its groups and, when it has one, its device.
TEST_F(ScopeReaderTest, ColocateWithResetsTheDeviceStack) {
  Node v;
  v.name = "v";
  graph_.Add(v);
  Node w;
  w.name = "w";
  w.requested_device = *DeviceSpec::Parse("/cpu:2");
  w.colocation = {"v"};
  graph_.Add(w);
  Scope outer;
  outer.device = *DeviceSpec::Parse("/gpu:1");
  StatusOr<Scope> inner = scopes_.Enter(Entry("{colocate_with: v, device: /cpu:1, nodes: []}"), outer, graph_);
  ASSERT_TRUE(inner.ok()) << inner.status().message();
  EXPECT_EQ(inner->device.ToString(), "/device:CPU:1");
  EXPECT_EQ(inner->colocate_with, std::vector<int>{0});
  Node n;
  n.requested_device = inner->device;
  ApplyColocation(graph_, *inner, &n);
  EXPECT_EQ(n.colocation, std::vector<std::string>{"v"});
  EXPECT_EQ(n.requested_device.ToString(), "/device:CPU:1");  // v has no device: the block's own
  StatusOr<Scope> with_w = scopes_.ForNode(Entry("{colocate_with: w, device: /gpu:0}"), *inner, "m", graph_);
  ASSERT_TRUE(with_w.ok()) << with_w.status().message();
  Node m;
  m.requested_device = with_w->device;
  ApplyColocation(graph_, *with_w, &m);
  EXPECT_EQ(m.colocation, std::vector<std::string>{"v"});             // w's groups: loc:@v
  EXPECT_EQ(m.requested_device.ToString(), "/device:CPU:2");          // w's device wins
  EXPECT_EQ(scopes_.Enter(Entry("{colocate_with: nope, nodes: []}"), outer, graph_).status().message(),
            "g.yaml:1:17: colocate_with 'nope' names no earlier node");
}

}  // namespace
}  // namespace tfrun
