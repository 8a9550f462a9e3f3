#include "core/graph_file/graph_builder.h"

#include <gtest/gtest.h>

#include "core/graph_file/yaml_texts_for_tests.h"

namespace tfrun {
namespace {

class GraphBuilderTest : public ::testing::Test {
 protected:
  // Adds a node of `op` named `name` whose entry is `entry`.
  StatusOr<int> Add(const std::string& name, const std::string& op, const std::string& entry) {
    Node node;
    node.name = name;
    node.op = op;
    const YamlNode e = texts_.Parse(entry);
    TFRUN_RETURN_IF_ERROR(builder_.ReadInputs(e, *FindOp(op), &node));
    if (op == "Const") {
      node.value = *Tensor::AllocateHost(DType::kFloat32, {2});
      node.shape = {2};
    }
    return builder_.Add(std::move(node), *FindOp(op), e);
  }
  Graph graph_;
  FieldReader fields_{"g.yaml"};
  std::vector<std::string> asked_;  // names DefinedLater was asked about
  GraphBuilder builder_{fields_, &graph_, [this](const std::string& name) {
                          asked_.push_back(name);
                          return name == "later";
                        }};
  YamlTexts texts_;
};

TEST_F(GraphBuilderTest, InputsResolveToEarlierNodesAndConsumersAreKept) {
  ASSERT_TRUE(Add("a", "Const", "{}").ok());
  ASSERT_TRUE(Add("b", "Const", "{}").ok());
  StatusOr<int> sum = Add("s", "AddN", "{inputs: [a, 'b:0', a]}");
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(graph_.nodes[*sum].inputs, (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(graph_.nodes[*sum].shape, Shape{2});
  EXPECT_EQ(graph_.nodes[0].consumers, (std::vector<int>{2, 2}));
  EXPECT_EQ(graph_.nodes[1].consumers, (std::vector<int>{2}));
  StatusOr<int> noop = Add("n", "NoOp", "{inputs: [s]}");
  EXPECT_EQ(graph_.nodes[*noop].control_inputs, (std::vector<int>{2}));
  EXPECT_TRUE(asked_.empty()) << "names given later are asked for only to word an error";
}

TEST_F(GraphBuilderTest, MissingLaterAndSelfInputsAndArity) {
  ASSERT_TRUE(Add("alpha", "Const", "{}").ok());
  EXPECT_EQ(Add("i", "Identity", "{inputs: [alpa]}").status().message(),
            "g.yaml:1:11: node 'i': input 'alpa' names no earlier node (did you mean 'alpha'?)");
  EXPECT_EQ(Add("i", "Identity", "{inputs: [later]}").status().message(),
            "g.yaml:1:11: node 'i': input 'later' is defined later; inputs must name earlier nodes");
  EXPECT_EQ(asked_, (std::vector<std::string>{"alpa", "later"}));
  EXPECT_EQ(Add("i", "Identity", "{inputs: [i]}").status().message(),
            "g.yaml:1:11: node 'i': a node cannot consume its own output (a cycle)");
  EXPECT_EQ(Add("m", "MatMul", "{inputs: [alpha]}").status().message(),
            "g.yaml:1:1: node 'm': MatMul takes 2 inputs, got 1");
  EXPECT_EQ(Add("m", "MatMul", "{inputs: [alpha, alpha]}").status().message(),
            "g.yaml:1:1: node 'm': Shape must be rank 2 but is rank 1 for '{{node m}} = MatMul[T=DT_FLOAT, "
            "grad_a=false, grad_b=false, transpose_a=false, transpose_b=false](alpha, alpha)' with input shapes: "
            "[2], [2].");
}

TEST_F(GraphBuilderTest, AVariablesNameReadsThroughItsRead) {
  ASSERT_TRUE(Add("v", "Const", "{}").ok());
  ASSERT_TRUE(Add("v/read", "Identity", "{inputs: [v]}").ok());
  builder_.ReadVariableThrough(0, 1);
  StatusOr<int> use = Add("u", "Identity", "{inputs: [v]}");
  EXPECT_EQ(graph_.nodes[*use].inputs, std::vector<int>{1});
}

}  // namespace
}  // namespace tfrun
