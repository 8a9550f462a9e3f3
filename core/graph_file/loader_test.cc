#include "core/graph_file/loader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

namespace tfrun {
namespace {

StatusOr<Graph> Load(const std::string& text) { return LoadGraphText(text, "g.yaml"); }

Graph MustLoad(const std::string& text) {
  StatusOr<Graph> g = Load(text);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? std::move(*g) : Graph();
}

std::string LoadError(const std::string& text, ConstructionErrors era = ConstructionErrors::kTf2) {
  LoadOptions options;
  options.construction_errors = era;
  StatusOr<Graph> g = LoadGraphText(text, "g.yaml", options);
  EXPECT_FALSE(g.ok());
  if (g.ok()) return "";
  EXPECT_EQ(g.status().kind(), ErrorKind::kBadInput);
  return g.status().message();
}

std::vector<std::string> Names(const Graph& g) {
  std::vector<std::string> names;
  for (const Node& n : g.nodes) names.push_back(n.name);
  return names;
}

TEST(LoaderNamingTest, DefaultNamesAreOpTypesMadeUnique) {
  Graph g = MustLoad(R"(nodes:
  - {op: Const, value: 1}
  - {op: Const, value: 2}
  - {op: Const, value: 3}
  - {op: AddN, inputs: [Const, Const_1, Const_2]})");
  EXPECT_EQ(Names(g), (std::vector<std::string>{"Const", "Const_1", "Const_2", "AddN"}));
}

TEST(LoaderNamingTest, ExplicitNamesSkipTakenSuffixesIgnoringCase) {
  // Graph.unique_name: a, a_1 (explicit) taken, so the next 'a' is a_2;
  // 'A' collides with 'a' case-insensitively and keeps its own case.
  Graph g = MustLoad(R"(nodes:
  - {name: a, op: Const, value: 1}
  - {name: a_1, op: Const, value: 1}
  - {name: a, op: Const, value: 1}
  - {name: A, op: Const, value: 1})");
  EXPECT_EQ(Names(g), (std::vector<std::string>{"a", "a_1", "a_2", "A_3"}));
}

TEST(LoaderNamingTest, NameScopesPrefixNestAndAreUnique) {
  Graph g = MustLoad(R"(nodes:
  - name_scope: tower
    nodes:
      - {op: Const, value: 1}
      - name_scope: inner
        nodes: [{op: Const, value: 2}]
  - name_scope: tower
    nodes: [{op: Const, value: 3}]
  - {name: tower, op: Const, value: 4})");
  EXPECT_EQ(Names(g), (std::vector<std::string>{"tower/Const", "tower/inner/Const", "tower_1/Const", "tower_2"}));
}

TEST(LoaderNamingTest, InvalidNameIsRejected) {
  EXPECT_NE(LoadError("nodes: [{name: 'a b', op: Const, value: 1}]").find("invalid node name 'a b'"),
            std::string::npos);
}

TEST(LoaderInputsTest, LaterMissingAndSuffixedInputs) {
  EXPECT_NE(LoadError(R"(nodes:
  - {op: Identity, inputs: [b]}
  - {name: b, op: Const, value: 1})").find("input 'b' is defined later"),
            std::string::npos);
  std::string e = LoadError(R"(nodes:
  - {name: alpha, op: Const, value: 1}
  - {op: Identity, inputs: [alpa]})");
  EXPECT_NE(e.find("g.yaml:3:29: node 'Identity': input 'alpa' names no earlier node (did you mean 'alpha'?)"),
            std::string::npos)
      << e;
  // A name written without its name scope points at the scoped node.
  e = LoadError(R"(nodes:
  - name_scope: tower_0
    nodes:
      - {name: xval, op: Const, value: 1.0}
  - {name: y, op: Identity, inputs: [xval]})");
  EXPECT_NE(e.find("input 'xval' names no earlier node (did you mean 'tower_0/xval'? it is in a name scope)"),
            std::string::npos)
      << e;
  Graph g = MustLoad(R"(nodes:
  - {name: a, op: Const, value: 1}
  - {op: Identity, inputs: ['a:0']})");
  EXPECT_EQ(g.nodes[1].inputs, std::vector<int>{0});
}

TEST(LoaderInputsTest, ArityIsChecked) {
  EXPECT_NE(LoadError(R"(nodes:
  - {name: a, op: Const, value: 1}
  - {op: MatMul, inputs: [a]})").find("MatMul takes 2 inputs, got 1"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: AddN}]").find("AddN takes at least 1 input"), std::string::npos);
}

TEST(LoaderDeviceTest, ScopesMergeFieldByFieldAndEmptyClears) {
  Graph g = MustLoad(R"(nodes:
  - device: /job:localhost/device:GPU:1
    nodes:
      - {name: a, op: Const, value: 1}
      - {name: b, op: Const, value: 1, device: /cpu:0}
      - {name: c, op: Const, value: 1, device: ''}
      - device: /replica:0
        nodes: [{name: d, op: Const, value: 1}])");
  EXPECT_EQ(g.nodes[0].requested_device.ToString(), "/job:localhost/device:GPU:1");
  EXPECT_EQ(g.nodes[1].requested_device.ToString(), "/job:localhost/device:CPU:0");
  EXPECT_EQ(g.nodes[2].requested_device.ToString(), "");
  EXPECT_EQ(g.nodes[3].requested_device.ToString(), "/job:localhost/replica:0/device:GPU:1");
  EXPECT_NE(LoadError("nodes: [{op: Const, value: 1, device: /gpu:x}]").find("invalid device string '/gpu:x'"),
            std::string::npos);
}

TEST(LoaderValueTest, FlatNestedScalarFillAndShapeInference) {
  Graph g = MustLoad(R"(nodes:
  - {name: flat, op: Const, shape: [2, 2], value: [1, 2, 3, 4]}
  - {name: nested, op: Const, value: [[1, 2], [3, 4]]}
  - {name: filled, op: Const, shape: [2, 3], value: 1.5}
  - {name: fill, op: Const, shape: [3], fill: -2}
  - {name: scalar, op: Const, value: 7}
  - {name: empty, op: Const, shape: [0, 3], value: []}
  - {name: specials, op: Const, value: [.nan, -.inf, inf, -0.0]})");
  EXPECT_EQ(g.nodes[0].shape, (Shape{2, 2}));
  EXPECT_EQ(g.nodes[1].shape, (Shape{2, 2}));
  EXPECT_EQ(g.nodes[1].value.data<float>()[3], 4.0f);
  EXPECT_EQ(g.nodes[2].value.data<float>()[5], 1.5f);
  EXPECT_EQ(g.nodes[3].value.data<float>()[2], -2.0f);
  EXPECT_EQ(g.nodes[4].shape, Shape{});
  EXPECT_EQ(g.nodes[5].value.num_elements(), 0);
  const float* s = g.nodes[6].value.data<float>();
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_EQ(s[1], -INFINITY);
  EXPECT_EQ(s[2], INFINITY);
  EXPECT_TRUE(std::signbit(s[3]));
}

TEST(LoaderValueTest, EveryDTypeParses) {
  Graph g = MustLoad(R"(nodes:
  - {op: Const, dtype: float32, value: [0.1]}
  - {op: Const, dtype: float64, value: [0.1]}
  - {op: Const, dtype: float16, value: [0.1]}
  - {op: Const, dtype: bfloat16, value: [0.1]}
  - {op: Const, dtype: int32, value: [-2147483648, 2147483647]}
  - {op: Const, dtype: int64, value: [-9223372036854775808, 9223372036854775807]}
  - {op: Const, dtype: bool, value: [true, false]})");
  EXPECT_EQ(g.nodes[0].value.data<float>()[0], 0.1f);
  EXPECT_EQ(g.nodes[1].value.data<double>()[0], 0.1);
  EXPECT_EQ(static_cast<float>(g.nodes[2].value.data<Eigen::half>()[0]), static_cast<float>(Eigen::half(0.1f)));
  EXPECT_EQ(g.nodes[3].value.dtype(), DType::kBFloat16);
  EXPECT_EQ(g.nodes[4].value.data<int32_t>()[0], INT32_MIN);
  EXPECT_EQ(g.nodes[5].value.data<int64_t>()[1], INT64_MAX);
  EXPECT_TRUE(g.nodes[6].value.data<bool>()[0]);
}

TEST(LoaderValueTest, BadValuesAreRejectedWithLocation) {
  EXPECT_NE(LoadError("nodes: [{op: Const, dtype: int32, value: [2147483648]}]").find("does not fit int32"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: [1e309]}]").find("value 1e309 does not fit float32"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: [1e39]}]").find("does not fit float32"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, dtype: float16, value: [70000]}]").find("does not fit float16"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, dtype: int32, value: [1.5]}]").find("not an integer"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: [abc]}]").find("value 'abc' is not a number"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: ['1']}]").find("is a string, not a number"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, shape: [3], value: [1, 2]}]").find("value has shape [2]"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, shape: [1], value: [1, 2]}]").find("more than the 1 elements"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: [[1, 2], [3]]}]").find("ragged"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: [[1, 2], 3]}]").find("ragged"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: [[1], [[3]]]}]").find("ragged"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const}]").find("needs its data"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, value: 1, fill: 1}]").find("only one of"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, shape: [-1], value: 1}]").find("non-negative"), std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, shape: [1,1,1,1,1,1,1,1,1], value: 1}]").find("maximum rank 8"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, shape: [4294967296, 4294967296], value: 1}]").find("more elements"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, shape: [1000000000, 1000], fill: 1}]").find("tensor-bytes limit"),
            std::string::npos);
}

TEST(LoaderValueTest, RandomIsReproducibleAndSeeded) {
  const char* text = R"(nodes:
  - {op: Const, shape: [1000], random: {distribution: uniform, min: -1, max: 1, seed: 7}}
  - {op: Const, shape: [1000], random: {distribution: normal, mean: 0, stddev: 1, seed: 7}}
  - {op: Const, shape: [1000], random: {distribution: uniform, min: -1, max: 1, seed: 8}}
  - {op: Const, dtype: int32, shape: [1000], random: {min: 0, max: 10, seed: 1}})";
  Graph a = MustLoad(text), b = MustLoad(text);
  double mean = 0, var = 0;
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    float u = a.nodes[0].value.data<float>()[i];
    EXPECT_EQ(u, b.nodes[0].value.data<float>()[i]);
    EXPECT_GE(u, -1.0f);
    EXPECT_LT(u, 1.0f);
    differ += u != a.nodes[2].value.data<float>()[i];
    float z = a.nodes[1].value.data<float>()[i];
    mean += z / 1000;
    var += z * z / 1000;
    int32_t k = a.nodes[3].value.data<int32_t>()[i];
    EXPECT_GE(k, 0);
    EXPECT_LT(k, 10);
  }
  EXPECT_GT(differ, 990);
  EXPECT_NEAR(mean, 0, 0.1);
  EXPECT_NEAR(var, 1, 0.15);
}

// docs/graph-format.md promises the same `random` numbers on every machine,
// compiler and thread count. These literals come from tools/random_pins.py,
// which computes the documented formula in Python, apart from tfrun's C++;
// the tensors are large enough to be filled by several threads where there
// are cores (ParallelFor gives each at least 2^18 elements). Indices 1 and 8
// of seed 7 fall in the normal's lower and upper tails (the log path).
TEST(LoaderValueTest, RandomValuesArePinnedToTheFormula) {
  Graph g = MustLoad(R"(nodes:
  - {op: Const, shape: [1048576], random: {distribution: uniform, min: -1, max: 1, seed: 7}}
  - {op: Const, shape: [1048576], random: {distribution: normal, mean: 0, stddev: 1, seed: 7}}
  - {op: Const, dtype: float64, shape: [1048576], random: {distribution: normal, mean: 10, stddev: 2, seed: 3}}
  - {op: Const, dtype: int32, shape: [1048576], random: {min: 0, max: 10, seed: 1}})");
  const std::vector<std::pair<int, float>> uniform = {
      {0, -0.49478158354759216f}, {1, -0.9663148522377014f},      {8, 0.968051016330719f},
      {999, 0.22050638496875763f}, {600001, -0.07854536175727844f}, {1048575, -0.5321723222732544f}};
  const std::vector<std::pair<int, float>> normal = {
      {0, -0.6663014888763428f},  {1, -2.1238081455230713f},     {8, 2.1450355052948f},
      {999, 0.27997899055480957f}, {600001, -0.0986015573143959f}, {1048575, -0.7260181307792664f}};
  const std::vector<std::pair<int, double>> normal64 = {{0, 14.48087742040388},   {1, 9.473021260632546},
                                                        {8, 11.810024570384563}, {999, 10.220402002235158},
                                                        {600001, 8.980642364977685}, {1048575, 8.185561771768755}};
  const std::vector<std::pair<int, int32_t>> integers = {{0, 3}, {1, 3}, {8, 4}, {999, 8}, {600001, 1}, {1048575, 3}};
  for (const auto& [i, v] : uniform) EXPECT_EQ(g.nodes[0].value.data<float>()[i], v) << "uniform[" << i << "]";
  for (const auto& [i, v] : normal) EXPECT_EQ(g.nodes[1].value.data<float>()[i], v) << "normal[" << i << "]";
  for (const auto& [i, v] : normal64) EXPECT_EQ(g.nodes[2].value.data<double>()[i], v) << "normal64[" << i << "]";
  for (const auto& [i, v] : integers) EXPECT_EQ(g.nodes[3].value.data<int32_t>()[i], v) << "int32[" << i << "]";
}

TEST(LoaderShapeTest, MatMulShapesAndErrorsFollowTensorFlow) {
  Graph g = MustLoad(R"(nodes:
  - {name: a, op: Const, shape: [2, 3], value: 1}
  - {name: b, op: Const, shape: [2, 3], value: 1}
  - {op: MatMul, inputs: [a, b], transpose_b: true})");
  EXPECT_EQ(g.nodes[2].shape, (Shape{2, 2}));
  std::string e = LoadError(R"(nodes:
  - {name: a, op: Const, shape: [2, 3], value: 1}
  - {name: b, op: Const, shape: [2, 2], value: 1}
  - {op: MatMul, inputs: [a, b]})");
  // TensorFlow 2.21's text; TF 1.x named the node "'MatMul' (op: 'MatMul')".
  EXPECT_EQ(e, "g.yaml:4:5: node 'MatMul': Dimensions must be equal, but are 3 and 2 for '{{node MatMul}} = "
               "MatMul[T=DT_FLOAT, grad_a=false, grad_b=false, transpose_a=false, transpose_b=false](a, b)' with "
               "input shapes: [2,3], [2,2].");
  e = LoadError(R"(nodes:
  - {name: a, op: Const, shape: [2, 3], value: 1}
  - {name: b, op: Const, shape: [2, 2], value: 1}
  - {op: MatMul, inputs: [a, b]})",
                ConstructionErrors::kTf1);
  EXPECT_EQ(e, "g.yaml:4:5: node 'MatMul': Dimensions must be equal, but are 3 and 2 for 'MatMul' (op: 'MatMul') "
               "with input shapes: [2,3], [2,2].");
  EXPECT_NE(LoadError(R"(nodes:
  - {name: a, op: Const, shape: [3], value: 1}
  - {op: MatMul, inputs: [a, a]})").find("Shape must be rank 2 but is rank 1"),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: a, op: Const, shape: [2, 2], value: 1}
  - {name: b, op: Const, dtype: int32, shape: [2, 2], value: 1}
  - {op: MatMul, inputs: [a, b]})").find("has type int32 that does not match type float32"),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: a, op: Const, dtype: bool, shape: [2, 2], value: true}
  - {op: MatMul, inputs: [a, a]})").find("DataType bool not in list of allowed values"),
            std::string::npos);
}

TEST(LoaderShapeTest, ElementwiseAddNCastAndNoOp) {
  Graph g = MustLoad(R"(nodes:
  - {name: v, op: Const, shape: [3], value: 1}
  - {name: s, op: Const, value: 2}
  - {name: add, op: Add, inputs: [v, s]}
  - {name: mul, op: Mul, inputs: [s, v]}
  - {name: sum, op: AddN, inputs: [v, add, mul]}
  - {name: cast, op: Cast, inputs: [sum], DstT: int64}
  - {name: done, op: NoOp, inputs: [cast]})");
  EXPECT_EQ(g.nodes[2].shape, Shape{3});
  EXPECT_EQ(g.nodes[3].shape, Shape{3});
  EXPECT_EQ(g.nodes[5].dtype, DType::kInt64);
  EXPECT_FALSE(g.nodes[6].has_output());
  EXPECT_EQ(g.nodes[6].control_inputs, std::vector<int>{5});
  EXPECT_NE(LoadError(R"(nodes:
  - {name: v, op: Const, shape: [3], value: 1}
  - {name: w, op: Const, shape: [2], value: 1}
  - {op: Sub, inputs: [v, w]})").find("Dimensions must be equal, but are 3 and 2 for '{{node Sub}} = "
                                       "Sub[T=DT_FLOAT](v, w)' with input shapes: [3], [2]."),
            std::string::npos);
  // AddN merges from its last input down (math_ops.cc).
  EXPECT_NE(LoadError(R"(nodes:
  - {name: v, op: Const, shape: [3], value: 1}
  - {name: w, op: Const, shape: [2], value: 1}
  - {op: AddN, inputs: [v, v, w]})").find("Dimension 0 in both shapes must be equal, but are 3 and 2. Shapes are "
                                          "[3] and [2].\n\tFrom merging shape 1 with other shapes. for "
                                          "'{{node AddN}} = AddN[N=3, T=DT_FLOAT](v, v, w)'"),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: v, op: Const, shape: [3], value: 1}
  - {name: w, op: Const, shape: [3, 2], value: 1}
  - {op: AddN, inputs: [v, v, v, w]})").find("Shapes must be equal rank, but are 1 and 2\n\tFrom merging shape 2 "
                                             "with other shapes."),
            std::string::npos);
  // Broadcast as TensorFlow does: aligned from the right, 1s stretch.
  Graph b = MustLoad(R"(nodes:
  - {name: v, op: Const, shape: [2, 1, 3], value: 1}
  - {name: w, op: Const, shape: [4, 1], value: 1}
  - {op: Add, inputs: [v, w]})");
  EXPECT_EQ(b.nodes[2].shape, (Shape{2, 4, 3}));
  EXPECT_NE(LoadError(R"(nodes:
  - {name: v, op: Const, shape: [2, 3], value: 1}
  - {name: w, op: Const, shape: [2], value: 1}
  - {op: Mul, inputs: [v, w]})").find("Dimensions must be equal, but are 3 and 2 for '{{node Mul}} = "
                                      "Mul[T=DT_FLOAT](v, w)' with input shapes: [2,3], [2]."),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: v, op: Const, value: 1}
  - {op: Cast, inputs: [v]})").find("Cast needs DstT"),
            std::string::npos);
}

// op_def_library.py's type errors, argument by argument (texts from
// TensorFlow 2.21's tf.compat.v1 graph mode).
TEST(LoaderTypeTest, TypeErrorsNameTensorFlowsArguments) {
  EXPECT_NE(LoadError(R"(nodes:
  - {name: i, op: Const, dtype: int32, value: 1}
  - {name: f, op: Const, dtype: float64, value: 1}
  - {op: AddN, inputs: [i, i, f]})").find("node 'AddN': Tensors in list passed to 'inputs' of 'AddN' Op have types "
                                          "[int32, int32, float64] that don't all match."),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: t, op: Const, dtype: bool, value: true}
  - {op: AddN, inputs: [t]})").find("Value passed to parameter 'inputs' has DataType bool not in list of allowed "
                                    "values: float32, float64, int32, uint8, int16, int8, complex64, int64, qint8, "
                                    "quint8, qint32, bfloat16, qint16, quint16, uint16, complex128, float16, uint32, "
                                    "uint64, variant"),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: x, op: Const, shape: [1, 2], value: 1}
  - {name: b, op: Const, dtype: int32, shape: [2], value: 1}
  - {op: BiasAdd, inputs: [x, b]})").find("node 'BiasAdd': bias: Tensor conversion requested dtype float32 for "
                                          "Tensor with dtype int32: <tf.Tensor 'b:0' shape=(2,) dtype=int32>"),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: t, op: Const, dtype: bool, value: true}
  - {op: Relu, inputs: [t]})").find("Value passed to parameter 'features' has DataType bool not in list of allowed "
                                    "values: float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, "
                                    "float16, uint32, uint64, qint8"),
            std::string::npos);
  // tf.matmul of bfloat16 and another type builds SparseMatMul.
  EXPECT_NE(LoadError(R"(nodes:
  - {name: a, op: Const, dtype: bfloat16, shape: [1, 1], value: 1}
  - {name: b, op: Const, dtype: float64, shape: [1, 1], value: 1}
  - {op: MatMul, inputs: [a, b]})").find("Value passed to parameter 'b' has DataType float64 not in list of allowed "
                                         "values: float32, bfloat16"),
            std::string::npos);
  // bfloat16 with float32 is a SparseMatMul, a float32 product; its shape
  // errors name it (TF 2.21's text).
  Graph sparse = MustLoad(R"(nodes:
  - {name: a, op: Const, dtype: bfloat16, shape: [2, 3], value: 1}
  - {name: b, op: Const, shape: [3, 1], value: 1}
  - {op: MatMul, inputs: [a, b]})");
  EXPECT_EQ(sparse.nodes[2].op, "SparseMatMul");
  EXPECT_EQ(sparse.nodes[2].name, "MatMul");
  EXPECT_EQ(sparse.nodes[2].dtype, DType::kFloat32);
  EXPECT_EQ(sparse.nodes[2].shape, (Shape{2, 1}));
  EXPECT_NE(LoadError(R"(nodes:
  - {name: a, op: Const, dtype: bfloat16, shape: [2, 3], value: 1}
  - {name: b, op: Const, value: 1}
  - {op: MatMul, inputs: [a, b]})").find("Shape must be rank 2 but is rank 0 for '{{node MatMul}} = "
                                         "SparseMatMul[Ta=DT_BFLOAT16, Tb=DT_FLOAT, a_is_sparse=false, "
                                         "b_is_sparse=false, transpose_a=false, transpose_b=false](a, b)' with "
                                         "input shapes: [2,3], []."),
            std::string::npos);
  EXPECT_NE(LoadError(R"(nodes:
  - {name: a, op: Const, dtype: int32, shape: [1, 1], value: 1}
  - {name: b, op: Const, dtype: int64, shape: [1, 1], value: 1}
  - {op: Sub, inputs: [a, b]})").find("Input 'y' of 'Sub' Op has type int64 that does not match type int32 of "
                                      "argument 'x'."),
            std::string::npos);
}

TEST(LoaderVariableTest, ExpandsAsTf1VariableWithInit) {
  Graph g = MustLoad(R"(nodes:
  - device: /gpu:0
    nodes:
      - {name: v, op: Variable, dtype: int32, value: 5}
  - {op: Identity, inputs: [v]})");
  EXPECT_EQ(Names(g), (std::vector<std::string>{"v/initial_value", "v", "v/Assign", "v/read", "Identity", "init"}));
  EXPECT_EQ(g.nodes[1].op, "VariableV2");
  EXPECT_EQ(g.nodes[2].op, "Assign");
  EXPECT_EQ(g.nodes[3].op, "Identity");
  EXPECT_EQ(g.nodes[4].inputs, std::vector<int>{3});  // 'v' means v/read
  EXPECT_EQ(g.nodes[5].op, "NoOp");
  EXPECT_EQ(g.nodes[5].control_inputs, std::vector<int>{2});
  EXPECT_EQ(g.nodes[2].requested_device.ToString(), "/device:GPU:0");
  EXPECT_EQ(g.nodes[5].requested_device.ToString(), "/device:GPU:0");  // as TF 2.21 does
  EXPECT_EQ(NodesOf(g.fetch), std::vector<int>{4});  // NoOps are not fetched by default
}

// Each node's NodeDef properties are what TensorFlow 2.21 builds for the
// program the file stands for (its NodeDefs' attrs and op._input_types /
// _output_types, printed by TensorFlow for this program; Consts aside).
TEST(LoaderPropertiesTest, EveryNodeCarriesTheNodeDefTensorFlowBuilds) {
  Graph g = MustLoad(R"(nodes:
  - {name: a, op: Const, value: [[1.0, 2.0]]}
  - {name: v, op: Variable, value: [[3.0], [4.0]]}
  - {name: m, op: MatMul, inputs: [a, v]}
  - {name: s, op: AddN, inputs: [m, m]}
  - {name: p, op: Placeholder, dtype: int32, shape: [null, 2]}
  - {name: sp, op: Split, inputs: [p], num_split: 2, axis: 1}
  - {name: c, op: Cast, inputs: [p], DstT: float32})");
  EXPECT_EQ(g.source, GraphSource::kGraphFile);
  auto attrs = [&](const std::string& name) {
    std::vector<std::string> out;
    for (const auto& [key, value] : g.PropertiesOf(*g.Find(name))->attrs) {
      out.push_back(key + "=" + fmt::format("{}", fmt::join(value.items, ",")));
    }
    return out;
  };
  using Strings = std::vector<std::string>;
  EXPECT_EQ(attrs("v"), (Strings{"container=", "dtype=FLOAT", "shape=(2x1)", "shared_name="}));
  EXPECT_EQ(attrs("v/Assign"), (Strings{"T=FLOAT", "_class=loc:@v", "use_locking=true", "validate_shape=true"}));
  EXPECT_EQ(attrs("v/read"), (Strings{"T=FLOAT", "_class=loc:@v"}));
  EXPECT_EQ(attrs("m"), (Strings{"T=FLOAT", "grad_a=false", "grad_b=false", "transpose_a=false", "transpose_b=false"}));
  EXPECT_EQ(attrs("s"), (Strings{"N=2", "T=FLOAT"}));
  EXPECT_EQ(attrs("p"), (Strings{"dtype=INT32", "shape=(-1x2)"}));
  EXPECT_EQ(attrs("sp"), (Strings{"T=INT32", "num_split=2"}));
  EXPECT_EQ(attrs("c"), (Strings{"DstT=FLOAT", "SrcT=INT32", "Truncate=false"}));
  const NodeProperties& assign = *g.PropertiesOf(*g.Find("v/Assign"));
  EXPECT_EQ(assign.input_types, (Strings{"FLOAT_REF", "FLOAT"}));
  EXPECT_EQ(assign.output_types, (Strings{"FLOAT_REF"}));
  EXPECT_EQ(g.PropertiesOf(*g.Find("v"))->output_types, (Strings{"FLOAT_REF"}));
  EXPECT_EQ(g.PropertiesOf(*g.Find("sp"))->input_types, (Strings{"INT32", "INT32"}));
  EXPECT_EQ(g.PropertiesOf(*g.Find("sp"))->output_types, (Strings{"INT32", "INT32"}));
  EXPECT_EQ(g.PropertiesOf(*g.Find("init"))->output_types, Strings{});
}

TEST(LoaderFileTest, TopLevelErrors) {
  EXPECT_NE(LoadError("").find("empty graph file"), std::string::npos);
  EXPECT_NE(LoadError("version: 2\nnodes: []").find("unsupported version '2'"), std::string::npos);
  EXPECT_NE(LoadError("nodse: []").find("unknown key 'nodse' in the graph file (did you mean 'nodes'?)"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, shpe: [1], value: 1}]").find("(did you mean 'shape'?)"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: MatMull}]").find("unknown op 'MatMull' (did you mean 'MatMul'?)"),
            std::string::npos);
  EXPECT_NE(LoadError("nodes: [{op: Const, dtype: float33, value: 1}]").find("unknown dtype 'float33'"),
            std::string::npos);
  std::string e = LoadError("nodes: [\n  {op: Const, value: 1\n");
  EXPECT_NE(e.find("g.yaml:"), std::string::npos);
  EXPECT_NE(e.find("YAML syntax error"), std::string::npos);
  EXPECT_NE(LoadError("config: {allow_soft_placement: maybe}\nnodes: [{op: Const, value: 1}]")
                .find("allow_soft_placement must be true or false"),
            std::string::npos);
  EXPECT_NE(LoadError(std::string("nodes: [{op: Const, value: 1, name: \"\xff\"}]")).find("invalid UTF-8"),
            std::string::npos);
}

TEST(LoaderKerasTest, ReadsTheProgram) {
  Graph g = MustLoad(R"(config: {log_device_placement: true}
keras:
  strategy: {MirroredStrategy: GPU}
  input_shape: [3]
  layers:
    - {Dense: 4}
    - {Dense: {units: 2, use_bias: false}}
  compile: {loss: mae, optimizer: {Adam: {learning_rate: 0.01}}})");
  EXPECT_TRUE(g.keras.present);
  EXPECT_TRUE(g.nodes.empty());
  EXPECT_TRUE(g.config.log_device_placement);
  EXPECT_EQ(g.keras.strategy_device_type, "GPU");
  EXPECT_EQ(g.keras.input_shape, std::vector<int64_t>({3}));
  ASSERT_EQ(g.keras.layers.size(), 2u);
  EXPECT_EQ(g.keras.layers[0].units, 4);
  EXPECT_TRUE(g.keras.layers[0].use_bias);
  EXPECT_EQ(g.keras.layers[1].units, 2);
  EXPECT_FALSE(g.keras.layers[1].use_bias);
  EXPECT_EQ(g.keras.loss, "mae");
  EXPECT_EQ(g.keras.optimizer, "Adam");
  EXPECT_EQ(MustLoad("keras: {strategy: {MirroredStrategy: CPU}, input_shape: [1], layers: [{Dense: 1}], "
                     "compile: {loss: mse, optimizer: SGD}}")
                .keras.optimizer,
            "SGD");
}

TEST(LoaderKerasTest, ErrorsNameTheField) {
  const std::string good = "strategy: {MirroredStrategy: GPU}, input_shape: [1], layers: [{Dense: 1}], "
                           "compile: {loss: mse, optimizer: SGD}";
  auto keras = [](const std::string& body) { return LoadError("keras: {" + body + "}"); };
  EXPECT_EQ(LoadError("keras: {" + good + "}\nnodes: [{op: NoOp}]"),
            "g.yaml:2:8: a Keras program (keras:) has no 'nodes'");
  EXPECT_EQ(keras("strategy: {MirroredStrategy: GPU}"), "g.yaml:1:8: keras needs input_shape");
  EXPECT_EQ(keras("strategy: {OneDeviceStrategy: GPU}, input_shape: [1], layers: [{Dense: 1}], "
                  "compile: {loss: mse, optimizer: SGD}"),
            "g.yaml:1:19: strategy 'OneDeviceStrategy': tfrun runs Keras programs under MirroredStrategy");
  EXPECT_EQ(keras("strategy: {MirroredStrategy: TPU}, input_shape: [1], layers: [{Dense: 1}], "
                  "compile: {loss: mse, optimizer: SGD}"),
            "g.yaml:1:38: MirroredStrategy mirrors over the logical devices of a type: one of GPU, CPU, XLA_CPU, "
            "XLA_GPU");
  EXPECT_NE(keras(good + ", layers2: []").find("unknown key 'layers2' in keras (did you mean 'layers'?)"),
            std::string::npos);
  EXPECT_NE(keras("strategy: {MirroredStrategy: GPU}, input_shape: [1], layers: [{Conv2D: 1}], "
                  "compile: {loss: mse, optimizer: SGD}")
                .find("layer 'Conv2D': tfrun builds Dense layers"),
            std::string::npos);
  EXPECT_NE(keras("strategy: {MirroredStrategy: GPU}, input_shape: [1], layers: [{Dense: 0}], "
                  "compile: {loss: mse, optimizer: SGD}")
                .find("units"),
            std::string::npos);
  EXPECT_NE(keras("strategy: {MirroredStrategy: GPU}, input_shape: [2, 2], layers: [{Dense: 1}], "
                  "compile: {loss: mse, optimizer: SGD}")
                .find("input_shape has one dimension"),
            std::string::npos);
  EXPECT_NE(keras("strategy: {MirroredStrategy: GPU}, input_shape: [1], layers: [{Dense: 1}], "
                  "compile: {loss: hinge, optimizer: SGD}")
                .find("compile needs a loss: one of mse, mae, mean_squared_error, mean_absolute_error"),
            std::string::npos);
  EXPECT_NE(keras("strategy: {MirroredStrategy: GPU}, input_shape: [1], layers: [{Dense: 1}], "
                  "compile: {loss: mse, optimizer: {RMSprop: {}}}")
                .find("optimizer 'RMSprop': one of SGD, Adam"),
            std::string::npos);
  EXPECT_NE(keras("strategy: {MirroredStrategy: GPU}, input_shape: [1], layers: [{Dense: 1}], "
                  "compile: {loss: mse, optimizer: {SGD: {learning_rate: fast}}}")
                .find("learning_rate"),
            std::string::npos);
  EXPECT_EQ(LoadError("keras: [1]"), "g.yaml:1:8: keras is a mapping with strategy, input_shape, layers and compile");
}

TEST(LoaderFetchTest, DefaultExplicitUnknownAndDuplicate) {
  const std::string nodes = R"(nodes:
  - {name: a, op: Const, value: 1}
  - {name: b, op: Identity, inputs: [a]}
  - {name: c, op: Const, value: 2}
)";
  Graph g = MustLoad(nodes);
  EXPECT_EQ(NodesOf(g.fetch), (std::vector<int>{1, 2}));
  EXPECT_EQ(NodesOf(MustLoad(nodes + "fetch: [a]").fetch), std::vector<int>{0});
  EXPECT_NE(LoadError(nodes + "fetch: [d]").find("fetch 'd' names no node"), std::string::npos);
  EXPECT_EQ(NodesOf(MustLoad(nodes + "fetch: [a, a]").fetch), (std::vector<int>{0, 0}));
}

TEST(LoaderConfigTest, ReadsEveryField) {
  Graph g = MustLoad(R"(config:
  log_device_placement: true
  allow_soft_placement: true
  visible_device_list: "1,2"
  allow_growth: true
  per_process_gpu_memory_fraction: 0.5
  virtual_devices: [[1024, 1024]]
  tensor_float_32: false
  intra_op_parallelism_threads: 2
  inter_op_parallelism_threads: 1
nodes: [{op: Const, value: 1}])");
  EXPECT_TRUE(g.config.log_device_placement);
  EXPECT_TRUE(g.config.allow_soft_placement);
  EXPECT_EQ(g.config.visible_device_list, "1,2");
  EXPECT_TRUE(g.config.allow_growth);
  EXPECT_EQ(g.config.per_process_gpu_memory_fraction, 0.5);
  EXPECT_EQ(g.config.virtual_devices, (std::vector<std::vector<double>>{{1024, 1024}}));
  EXPECT_FALSE(g.config.tensor_float_32);
  EXPECT_EQ(g.config.intra_op_parallelism_threads, 2);
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

// for_each_device over `gpus` logical GPUs (the lister a run passes).
StatusOr<Graph> LoadOnGpus(const std::string& text, int gpus) {
  return LoadGraphText(text, "g.yaml", LoadOptions(), [gpus](const GraphConfig&, std::string_view type) {
    std::vector<int> ids;
    for (int i = 0; i < (type == "GPU" ? gpus : 1); ++i) ids.push_back(i);
    return StatusOr<std::vector<int>>(ids);
  });
}

constexpr const char* kReplicated = R"(nodes:
  - {name: w, op: Const, value: [[1.0]]}
  - for_each_device: GPU
    nodes:
      - {name: a, op: Const, value: [[2.0]]}
      - {name: c, op: MatMul, inputs: [a, w]}
      - {name: v, op: Variable, value: [[3.0]]}
      - {op: MatMul, inputs: [c, v]}
  - {name: total, op: AddN, inputs: [MatMul, c], device: /cpu:0})";

TEST(LoaderReplicationTest, CopiesPerDeviceNamedAsRepeatedNodesAndListedAfter) {
  StatusOr<Graph> g = LoadOnGpus(kReplicated, 2);
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (const char* name : {"a", "c", "v", "MatMul", "a_1", "c_1", "v_1", "MatMul_1"}) {
    EXPECT_NE(g->Find(name), nullptr) << name;
  }
  // Inside the scope a name is the current copy, on that copy's device.
  EXPECT_EQ(g->nodes[g->Find("c_1")->inputs[0]].name, "a_1");
  EXPECT_EQ(g->nodes[g->Find("c_1")->inputs[1]].name, "w");
  EXPECT_EQ(g->nodes[g->Find("MatMul_1")->inputs[1]].name, "v_1/read");
  EXPECT_EQ(g->Find("c_1")->requested_device.ToString(), "/device:GPU:1");
  EXPECT_EQ(g->Find("c_1")->requested_device_text, "/device:GPU:1");
  // After it, the list of every copy, in device order.
  std::vector<std::string> inputs;
  for (int in : g->Find("total")->inputs) inputs.push_back(g->nodes[in].name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"MatMul", "MatMul_1", "c", "c_1"}));
}

TEST(LoaderReplicationTest, ScopesAndDevicesMergeAndNamesRebind) {
  StatusOr<Graph> g = LoadOnGpus(R"(nodes:
  - device: /job:localhost
    nodes:
      - for_each_device: gpu
        name_scope: tower
        nodes:
          - {name: x, op: Const, value: 1.0}
  - {name: s, op: AddN, inputs: [tower/x]}
  - {name: tower/x, op: Const, value: 2.0}
  - {name: t, op: Identity, inputs: [tower/x]})", 3);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(Names(*g), (std::vector<std::string>{"tower/x", "tower_1/x", "tower_2/x", "s", "tower/x_1", "t"}));
  EXPECT_EQ(g->Find("tower_2/x")->requested_device.ToString(), "/job:localhost/device:GPU:2");
  EXPECT_EQ(g->Find("s")->inputs.size(), 3u);
  // A later node of that name rebinds it, as a Python assignment does.
  EXPECT_EQ(g->nodes[g->Find("t")->inputs[0]].name, "tower/x_1");
}

TEST(LoaderReplicationTest, NoDeviceOfTheTypeMakesNoCopiesAndUsingThemSaysWhy) {
  StatusOr<Graph> g = LoadOnGpus(kReplicated, 0);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "g.yaml:9:38: node 'total': input 'MatMul' stands for the copies of a for_each_device: GPU scope, and "
            "there is no GPU device");
  StatusOr<Graph> cpu = LoadOnGpus(R"(nodes:
  - for_each_device: CPU
    nodes: [{name: a, op: Const, value: 1.0}]
  - {op: AddN, inputs: [a]})", 0);
  ASSERT_TRUE(cpu.ok()) << cpu.status().message();
  EXPECT_EQ(cpu->Find("a")->requested_device.ToString(), "/device:CPU:0");
}

// With no device to copy to, the names a for_each_device scope writes are
// collected without reading it: a scope bomb inside once took 2^60 steps
// there. The entry budget (2 x --max-nodes) bounds that walk too.
TEST(LoaderReplicationTest, AScopeBombInsideAnEmptyLoopEnds) {
  std::string text = "nodes:\n  - for_each_device: GPU\n    nodes:\n      - &s0 {nodes: []}\n";
  for (int i = 1; i <= 60; ++i) text += fmt::format("      - &s{} {{nodes: [*s{}, *s{}]}}\n", i, i - 1, i - 1);
  text += "  - {name: n, op: NoOp}\n";
  LoadOptions limits;
  limits.max_nodes = 1000;
  StatusOr<Graph> g = LoadGraphText(text, "g.yaml", limits, [](const GraphConfig&, std::string_view) {
    return StatusOr<std::vector<int>>(std::vector<int>{});
  });
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(Names(*g), std::vector<std::string>{"n"});
}

// --max-nodes bounds the nodes' outputs too: each is a slot the executor
// keeps, and 300 Splits of 10^6 slices (a 15 KB file) took 7 GB and a
// minute before failing.
TEST(LoaderLimitsTest, OutputsCountAgainstTheNodeLimit) {
  std::string text = "nodes:\n  - {name: x, op: Placeholder, shape: [null]}\n";
  for (int i = 0; i < 3; ++i) text += fmt::format("  - {{name: s{}, op: Split, inputs: [x], num_split: 400, axis: 0}}\n", i);
  LoadOptions limits;
  limits.max_nodes = 1000;
  StatusOr<Graph> g = LoadGraphText(text, "g.yaml", limits);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "g.yaml:5:5: more than 1000 node outputs (the node-count limit, --max-nodes, bounds the outputs too)");
  limits.max_nodes = 1201;
  EXPECT_TRUE(LoadGraphText(text, "g.yaml", limits).ok());
}

// A string scalar filling a shape costs its packed bytes, counted against
// --max-tensor-bytes before anything is allocated.
TEST(LoaderLimitsTest, StringConstantsCountTheirBytes) {
  LoadOptions limits;
  limits.max_tensor_bytes = 1000;
  StatusOr<Graph> small = LoadGraphText("nodes:\n  - {name: s, op: Const, dtype: string, shape: [10], value: abcdefghij}\n",
                                        "g.yaml", limits);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->Find("s")->value.num_bytes(), 11 * 8 + 100u);
  EXPECT_EQ(small->Find("s")->value.StringAt(9), "abcdefghij");
  StatusOr<Graph> big = LoadGraphText("nodes:\n  - {name: s, op: Const, dtype: string, shape: [100], value: abcdefghij}\n",
                                      "g.yaml", limits);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("--max-tensor-bytes"), std::string::npos) << big.status().message();
}

TEST(LoaderReplicationTest, BadScopes) {
  EXPECT_EQ(LoadOnGpus("nodes:\n  - {for_each_device: TPU, nodes: [{op: NoOp}]}", 1).status().message(),
            "g.yaml:2:23: for_each_device must be GPU or CPU (got 'TPU')");
  EXPECT_EQ(LoadOnGpus("nodes:\n  - {for_each_device: GPU}", 1).status().message(),
            "g.yaml:2:5: a for_each_device scope needs 'nodes'");
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

TEST(LoaderInputsTest, PlaceholderShapesMayLeaveDimensionsOrTheRankUnknown) {
  Graph g = MustLoad(R"(nodes:
  - {name: x, op: Placeholder, shape: [null, 3]}
  - {name: s, op: Placeholder, dtype: int32, shape: []}
  - {name: any, op: Placeholder, dtype: float64}
  - {name: w, op: Const, shape: [3, 2], value: 1}
  - {name: y, op: MatMul, inputs: [x, w]}
  - {name: r, op: Relu, inputs: [y]}
  - {name: c, op: Cast, DstT: float32, inputs: [any]})");
  EXPECT_EQ(g.Find("x")->shape, (Shape{kUnknownDim, 3}));
  EXPECT_FALSE(g.Find("x")->unknown_rank);
  EXPECT_EQ(g.Find("s")->shape, Shape{});
  EXPECT_FALSE(g.Find("s")->unknown_rank);
  EXPECT_TRUE(g.Find("any")->unknown_rank);
  EXPECT_EQ(g.Find("any")->dtype, DType::kFloat64);
  EXPECT_EQ(g.Find("r")->shape, (Shape{kUnknownDim, 2}));  // ? carried through MatMul and Relu
  EXPECT_TRUE(g.Find("c")->unknown_rank);
  EXPECT_EQ(ShapeDebugString(g.Find("y")->shape), "[?,2]");
  EXPECT_EQ(ShapeTupleString(g.Find("x")->shape, false, "None"), "(None, 3)");
  EXPECT_EQ(ShapeTupleString({}, true), "<unknown>");
}

TEST(LoaderInputsTest, SplitAndConcatExpandAsTheirPythonBuildsThem) {
  Graph g = MustLoad(R"(nodes:
  - {name: x, op: Placeholder, shape: [null, 4]}
  - {op: Split, num_split: 2, axis: 1, inputs: [x]}
  - {op: Split, num_split: 2, inputs: [x]}
  - {op: ConcatV2, axis: 0, inputs: ["split_1:1", split_1]}
  - {name: one, op: ConcatV2, axis: 1, inputs: [concat]}
  - {name: t, op: Identity, inputs: [one]})");
  EXPECT_EQ(Names(g), (std::vector<std::string>{"x", "split/split_dim", "split", "split_1/split_dim", "split_1",
                                                 "concat/axis", "concat", "one/concat_dim", "one/one", "t"}));
  const Node& split = *g.Find("split");
  EXPECT_EQ(split.num_outputs, 2);
  EXPECT_EQ(split.inputs, (std::vector<int>{1, 0}));  // split_dim first
  EXPECT_EQ(split.shape, (Shape{kUnknownDim, 2}));
  EXPECT_EQ(g.Find("split/split_dim")->value.data<int32_t>()[0], 1);
  const Node& concat = *g.Find("concat");
  EXPECT_EQ(concat.inputs, (std::vector<int>{4, 4, 5}));  // the axis last
  EXPECT_EQ(concat.input(0).index, 1);                    // split_1:1
  EXPECT_EQ(concat.input(1).index, 0);
  EXPECT_EQ(concat.shape, (Shape{kUnknownDim, 4}));
  // tf.concat of one value is an Identity the written name stands for.
  EXPECT_EQ(g.Find("one/one")->op, "Identity");
  EXPECT_EQ(g.nodes[g.Find("t")->inputs[0]].name, "one/one");
  EXPECT_EQ(g.Find("one")->name, "one/one");
}

TEST(LoaderInputsTest, ConcatAddsKnownSizesAndMergesTheOthers) {
  Graph g = MustLoad(R"(nodes:
  - {name: a, op: Placeholder, shape: [null, 3]}
  - {name: b, op: Const, shape: [2, 3], value: 0}
  - {name: along0, op: ConcatV2, axis: 0, inputs: [a, b]}
  - {name: along1, op: ConcatV2, axis: -1, inputs: [a, b]}
  - {name: c, op: Placeholder})");
  EXPECT_EQ(g.Find("along0")->shape, (Shape{kUnknownDim, 3}));
  EXPECT_EQ(g.Find("along1")->shape, (Shape{2, 6}));  // the ? of a merged with b's 2
}

TEST(LoaderInputsTest, NumSplitByDeviceCountAndTheCopyIndexInNames) {
  StatusOr<Graph> g = LoadOnGpus(R"(nodes:
  - {name: x, op: Placeholder, shape: [null, 2]}
  - {name: split, op: Split, num_split: gpu, inputs: [x]}
  - for_each_device: GPU
    nodes:
      - {name: part, op: Identity, inputs: ["split:{i}"]})", 3);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->Find("split")->num_outputs, 3);
  EXPECT_EQ(g->Find("part_2")->input(0).index, 2);
  EXPECT_EQ(g->Find("part_1")->input(0).index, 1);
  EXPECT_EQ(g->Find("part")->input_index, std::vector<int>{});  // output 0 needs no index list
}

}  // namespace
}  // namespace tfrun
