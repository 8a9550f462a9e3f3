#include "core/graph_file/yaml_fields.h"

#include <gtest/gtest.h>

#include "core/graph_file/yaml_texts_for_tests.h"

namespace tfrun {
namespace {

class YamlFieldsTest : public ::testing::Test {
 protected:
  YamlNode Yaml(const std::string& text) { return texts_.Parse(text); }
  FieldReader fields_{"g.yaml"};
  YamlTexts texts_;
};

TEST_F(YamlFieldsTest, KeysAreCheckedInFileOrder) {
  const std::vector<std::string> allowed = {"name", "op"};
  EXPECT_TRUE(fields_.CheckKeys(Yaml("{name: a, op: b}"), allowed, "a node").ok());
  EXPECT_EQ(fields_.CheckKeys(Yaml("{name: a, nmae: b}"), allowed, "a node").message(),
            "g.yaml:1:11: unknown key 'nmae' in a node (did you mean 'name'?)");
  EXPECT_EQ(fields_.CheckKeys(Yaml("{op: a, op: b, zzz: c}"), allowed, "a node").message(),
            "g.yaml:1:9: key 'op' appears twice in a node");
  EXPECT_EQ(fields_.CheckKeys(Yaml("{[x]: 1}"), allowed, "a node").message(),
            "g.yaml:1:2: a node keys must be strings");
}

TEST_F(YamlFieldsTest, ScalarsOfEachTypeAndQuotedOnesRefused) {
  bool b = false;
  EXPECT_TRUE(fields_.ReadBool(Yaml("True"), "flag", &b).ok());
  EXPECT_TRUE(b);
  EXPECT_EQ(fields_.ReadBool(Yaml("'true'"), "flag", &b, "n").message(),
            "g.yaml:1:1: node 'n': flag must be true or false");
  int64_t i = 0;
  EXPECT_TRUE(fields_.ReadInt(Yaml("-12"), "k", -20, 20, &i).ok());
  EXPECT_EQ(i, -12);
  EXPECT_EQ(fields_.ReadInt(Yaml("21"), "k", -20, 20, &i).message(), "g.yaml:1:1: k must be an integer from -20 to 20");
  EXPECT_FALSE(fields_.ReadInt(Yaml("1.0"), "k", -20, 20, &i).ok());
  double d = 0;
  EXPECT_TRUE(fields_.ReadDouble(Yaml("2.5e3"), "x", &d).ok());
  EXPECT_EQ(d, 2500);
  EXPECT_EQ(fields_.ReadDouble(Yaml("inf"), "x", &d).message(), "g.yaml:1:1: x must be a finite number");
}

TEST_F(YamlFieldsTest, DTypesAndShapes) {
  EXPECT_EQ(*fields_.ReadDType(Yaml("bfloat16"), "n"), DType::kBFloat16);
  EXPECT_EQ(fields_.ReadDType(Yaml("flaot32"), "n").status().message(),
            "g.yaml:1:1: node 'n': unknown dtype 'flaot32', did you mean 'float32'? (one of float32, float64, "
            "float16, bfloat16, int32, int64, bool, string, uint8, uint64)");
  Shape shape;
  EXPECT_TRUE(fields_.ReadShape(Yaml("[2, 0, 3]"), "n", &shape).ok());
  EXPECT_EQ(shape, (Shape{2, 0, 3}));
  shape.clear();
  EXPECT_EQ(fields_.ReadShape(Yaml("[2, -1]"), "n", &shape).message(),
            "g.yaml:1:5: node 'n': dimension '-1' is not a non-negative 64-bit integer");
  shape.clear();
  EXPECT_EQ(fields_.ReadShape(Yaml("[1, 1, 1, 1, 1, 1, 1, 1, 1]"), "n", &shape).message(),
            "g.yaml:1:1: node 'n': rank 9 exceeds the maximum rank 8");
  shape.clear();
  EXPECT_EQ(fields_.ReadShape(Yaml("[4294967296, 4294967296]"), "n", &shape).message(),
            "g.yaml:1:1: node 'n': shape [4294967296,4294967296] has more elements than fit in 64 bits");
}

}  // namespace
}  // namespace tfrun
