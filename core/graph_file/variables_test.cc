#include "core/graph_file/variables.h"

#include <gtest/gtest.h>

#include "core/graph_file/yaml_texts_for_tests.h"

namespace tfrun {
namespace {

class VariablesTest : public ::testing::Test {
 protected:
  Status Expand(const std::string& entry, const std::string& device, const std::string& base) {
    Scope scope;
    if (!device.empty()) {
      scope.device = *DeviceSpec::Parse(device);
      scope.device_text = device;
    }
    return variables_.Expand(texts_.Parse(entry), scope, base).status();
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    for (const Node& n : graph_.nodes) lines.push_back(n.name + " " + n.op + " " + n.requested_device.ToString());
    return lines;
  }
  Graph graph_;
  FieldReader fields_{"g.yaml"};
  UniqueNamer namer_;
  GraphBuilder builder_{fields_, &graph_, [](const std::string&) { return false; }};
  TensorLiteralReader literals_{fields_, "", 1 << 20};
  VariableExpander variables_{&builder_, &namer_, &literals_};
  YamlTexts texts_;
};

TEST_F(VariablesTest, FourNodesColocatedAndOneInitializer) {
  ASSERT_TRUE(Expand("{shape: [2], value: [1, 2]}", "/gpu:0", "v").ok());
  ASSERT_TRUE(variables_.AddInitializer().ok());
  EXPECT_EQ(Lines(), (std::vector<std::string>{"v/initial_value Const /device:GPU:0", "v VariableV2 /device:GPU:0",
                                               "v/Assign Assign /device:GPU:0", "v/read Identity /device:GPU:0",
                                               "init NoOp /device:GPU:0"}));
  EXPECT_EQ(graph_.nodes[2].inputs, (std::vector<int>{1, 0}));
  EXPECT_EQ(graph_.nodes[4].control_inputs, std::vector<int>{2});
  for (int id : {1, 2, 3}) EXPECT_EQ(graph_.nodes[id].variable, "v");
  EXPECT_EQ(graph_.nodes[1].shape, Shape{2});
}

// control_flow_ops.group over two devices: one NoOp per device, in the
// devices' string order ("" < "/device:CPU:0" < "/device:GPU:0"), under
// the `init` name scope; `init` itself has no device. The TF 1.x blog's
// transcript shows init/NoOp (a_cpu) and init/NoOp_1 (a_gpu).
TEST_F(VariablesTest, InitializerGroupsTheAssignsByDevice) {
  ASSERT_TRUE(Expand("{value: 1}", "/gpu:0", "v").ok());
  ASSERT_TRUE(Expand("{value: 1}", "/cpu:0", "v").ok());
  ASSERT_TRUE(Expand("{value: 1}", "", "w").ok());
  ASSERT_TRUE(variables_.AddInitializer().ok());
  const std::vector<std::string> lines = Lines();
  EXPECT_EQ(std::vector<std::string>(lines.end() - 4, lines.end()),
            (std::vector<std::string>{"init/NoOp NoOp ", "init/NoOp_1 NoOp /device:CPU:0",
                                      "init/NoOp_2 NoOp /device:GPU:0", "init NoOp "}));
  EXPECT_EQ(graph_.nodes[4].name, "v_1/initial_value");
  const size_t n = graph_.nodes.size();
  EXPECT_EQ(graph_.nodes[n - 4].control_inputs, std::vector<int>{10});
  EXPECT_EQ(graph_.nodes[n - 3].control_inputs, std::vector<int>{6});
  EXPECT_EQ(graph_.nodes[n - 2].control_inputs, std::vector<int>{2});
  EXPECT_EQ(graph_.nodes.back().control_inputs,
            (std::vector<int>{static_cast<int>(n) - 4, static_cast<int>(n) - 3, static_cast<int>(n) - 2}));
  for (size_t i = n - 4; i < n; ++i) EXPECT_TRUE(graph_.nodes[i].graph_mode_only);
}

TEST_F(VariablesTest, NoVariablesNoInitializerAndDataErrorsNameTheVariable) {
  ASSERT_TRUE(variables_.AddInitializer().ok());
  EXPECT_TRUE(graph_.nodes.empty());
  EXPECT_EQ(Expand("{shape: [2], value: [1, 2, 3]}", "", "w").message(),
            "g.yaml:1:28: node 'w': value has more than the 2 elements its shape holds");
}

}  // namespace
}  // namespace tfrun
