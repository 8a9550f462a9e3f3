#include "core/graph_file/tensor_literal.h"

#include <gtest/gtest.h>

#include "core/graph_file/yaml_texts_for_tests.h"

namespace tfrun {
namespace {

class TensorLiteralTest : public ::testing::Test {
 protected:
  // Reads the constant `entry` (a YAML mapping) with a byte budget.
  StatusOr<Node> Read(const std::string& entry, int64_t budget = 1 << 20) {
    if (!literals_ || budget != budget_) {
      literals_ = std::make_unique<TensorLiteralReader>(fields_, "testdata/npy/", budget);
      budget_ = budget;
    }
    Node node;
    Status s = literals_->Read(texts_.Parse(entry), "c", &node);
    if (!s.ok()) return s;
    return node;
  }
  std::vector<double> Values(const Node& n) {
    std::vector<double> v;
    for (int64_t i = 0; i < n.value.num_elements(); ++i) v.push_back(n.value.GetAsDouble(i));
    return v;
  }
  FieldReader fields_{"g.yaml"};
  std::unique_ptr<TensorLiteralReader> literals_;
  int64_t budget_ = 0;
  YamlTexts texts_;
};

TEST_F(TensorLiteralTest, FlatNestedAndFilledValues) {
  StatusOr<Node> flat = Read("{shape: [2, 2], value: [1, 2, 3, 4]}");
  ASSERT_TRUE(flat.ok()) << flat.status().message();
  EXPECT_EQ(flat->shape, (Shape{2, 2}));
  EXPECT_EQ(Values(*flat), (std::vector<double>{1, 2, 3, 4}));
  StatusOr<Node> nested = Read("{dtype: int64, value: [[1, 2, 3], [4, 5, 6]]}");
  EXPECT_EQ(nested->shape, (Shape{2, 3}));
  EXPECT_EQ(nested->dtype, DType::kInt64);
  StatusOr<Node> filled = Read("{shape: [3], value: 1.5}");
  EXPECT_EQ(Values(*filled), (std::vector<double>{1.5, 1.5, 1.5}));
  EXPECT_EQ(Values(*Read("{dtype: float16, shape: [2], fill: -2}")), (std::vector<double>{-2, -2}));
  EXPECT_EQ(Read("{value: 7}")->shape, Shape{});
}

TEST_F(TensorLiteralTest, RaggedMismatchedAndOutOfRangeValuesAreErrors) {
  EXPECT_EQ(Read("{value: [[1, 2], [3]]}").status().message(),
            "g.yaml:1:18: node 'c': value is ragged: a list of 1 where lists of 2 came before");
  EXPECT_EQ(Read("{shape: [3], value: [1, 2]}").status().message(),
            "g.yaml:1:21: node 'c': value has shape [2] (2 elements) but shape is [3] (3 elements)");
  EXPECT_EQ(Read("{dtype: int32, value: 2147483648}").status().message(),
            "g.yaml:1:23: node 'c': value 2147483648 does not fit int32");
  EXPECT_EQ(Read("{value: '1'}").status().message(), "g.yaml:1:9: node 'c': value '1' is a string, not a number");
  EXPECT_EQ(Read("{value: 1, fill: 2}").status().message(),
            "g.yaml:1:1: node 'c': give only one of value, fill, random or npy (got value, fill)");
}

TEST_F(TensorLiteralTest, RandomIsTheSameForASeedAndInRange) {
  const std::string entry = "{shape: [1000], random: {distribution: uniform, min: -1, max: 1, seed: 7}}";
  const std::vector<double> a = Values(*Read(entry));
  EXPECT_EQ(a, Values(*Read(entry)));
  for (double x : a) {
    EXPECT_GE(x, -1);
    EXPECT_LT(x, 1);
  }
  EXPECT_NE(a, Values(*Read("{shape: [1000], random: {distribution: uniform, min: -1, max: 1, seed: 8}}")));
  EXPECT_EQ(Read("{random: {distribution: normal, min: 0}}").status().message(),
            "g.yaml:1:10: node 'c': normal takes mean and stddev, not min or max");
}

TEST_F(TensorLiteralTest, NpyFilesAndTheByteBudget) {
  StatusOr<Node> loaded = Read("{npy: int64.npy}");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->dtype, DType::kInt64);
  EXPECT_EQ(Read("{dtype: float32, npy: int64.npy}").status().message(),
            "g.yaml:1:23: node 'c': int64.npy holds int64 but dtype is float32");
  // The budget counts every constant the reader has read.
  ASSERT_TRUE(Read("{shape: [100], fill: 1}", 800).ok());
  EXPECT_TRUE(Read("{shape: [100], fill: 1}", 800).ok());
  EXPECT_EQ(Read("{shape: [1], fill: 1}", 800).status().message(),
            "g.yaml:1:20: node 'c': constants would need more than 800 bytes (the tensor-bytes limit, "
            "--max-tensor-bytes)");
}

}  // namespace
}  // namespace tfrun
