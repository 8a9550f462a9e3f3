// Compares NumpyStr with what NumPy itself printed for thousands of arrays
// (testdata/printer/numpy_cases.txt, written by tools/gen_print_cases.py).
#include "core/printing/array_printer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace tfrun {
namespace {

struct PrintCase {
  std::string dtype_name;
  bool legacy = false;
  Shape shape;
  std::string data;  // raw little-endian bytes
  std::string expected;
};

std::vector<PrintCase> LoadCases(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<PrintCase> cases;
  std::string word;
  while (in >> word) {
    EXPECT_EQ(word, "case");
    PrintCase c;
    int legacy = 0, rank = 0;
    in >> c.dtype_name >> legacy >> rank;
    c.legacy = legacy != 0;
    for (int i = 0; i < rank; ++i) {
      int64_t d;
      in >> d;
      c.shape.push_back(d);
    }
    std::string hex;
    in >> word;
    EXPECT_EQ(word, "data");
    std::getline(in, hex);
    for (size_t i = 1; i + 1 < hex.size(); i += 2) {
      c.data += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    size_t n = 0;
    in >> word >> n;
    EXPECT_EQ(word, "expect");
    in.get();  // newline
    c.expected.resize(n);
    in.read(c.expected.data(), n);
    in.get();
    cases.push_back(std::move(c));
  }
  return cases;
}

// numpy_cases.txt is NumPy 1.24's output, numpy2_cases.txt NumPy 2.4's
// (TensorFlow 2.21's), both written by tools/gen_print_cases.py.
class ArrayPrinterCasesTest : public ::testing::TestWithParam<bool> {};

TEST_P(ArrayPrinterCasesTest, MatchesNumpyOnGeneratedCases) {
  const bool numpy2 = GetParam();
  std::vector<PrintCase> cases =
      LoadCases(numpy2 ? "testdata/printer/numpy2_cases.txt" : "testdata/printer/numpy_cases.txt");
  ASSERT_GT(cases.size(), 1000u);
  int failures = 0;
  for (const PrintCase& c : cases) {
    std::optional<DType> dtype = ParseDType(c.dtype_name);
    ASSERT_TRUE(dtype.has_value()) << c.dtype_name;
    StatusOr<Tensor> t = Tensor::AllocateHost(*dtype, c.shape);
    ASSERT_TRUE(t.ok());
    ASSERT_EQ(t->num_bytes(), c.data.size());
    if (!c.data.empty()) std::memcpy(t->raw(), c.data.data(), c.data.size());
    NumpyPrintOptions options;
    options.legacy_113 = c.legacy;
    options.numpy2 = numpy2;
    std::string got = NumpyStr(*t, options);
    if (got != c.expected && ++failures <= 10) {
      ADD_FAILURE() << c.dtype_name << " numpy2=" << numpy2 << " legacy=" << c.legacy << " shape "
                    << ShapeDebugString(c.shape) << "\nexpected:\n"
                    << c.expected << "\ngot:\n" << got;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
}

INSTANTIATE_TEST_SUITE_P(NumpyVersions, ArrayPrinterCasesTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "numpy2" : "numpy1"; });

// Expected texts are what Python 3 and NumPy 2.4 printed for the same bytes
// (repr(b'...'); print of the object arrays TensorFlow returns for strings).
TEST(ArrayPrinterTest, BytesAsPythonAndNumpyPrintThem) {
  EXPECT_EQ(PythonBytesRepr("Hello ,this is the server1!"), "b'Hello ,this is the server1!'");
  EXPECT_EQ(PythonBytesRepr("x'y\""), "b'x\\'y\"'");
  EXPECT_EQ(PythonBytesRepr("x'y"), "b\"x'y\"");
  EXPECT_EQ(PythonBytesRepr(std::string("\0\x7f\t", 3)), "b'\\x00\\x7f\\t'");
  EXPECT_EQ(PythonBytesRepr("\xc3\xa9\n\"\\"), "b'\\xc3\\xa9\\n\"\\\\'");

  StatusOr<Tensor> grid = Tensor::FromStrings({2, 2}, {"a", "bcd", "x'y", "\xc3\xa9\n\""});
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(NumpyStr(*grid, {}), "[[b'a' b'bcd']\n [b\"x'y\" b'\\xc3\\xa9\\n\"']]");
  EXPECT_EQ(EagerTensorStr(*grid),
            "tf.Tensor(\n[[b'a' b'bcd']\n [b\"x'y\" b'\\xc3\\xa9\\n\"']], shape=(2, 2), dtype=string)");
  StatusOr<Tensor> row = Tensor::FromStrings({12}, std::vector<std::string>(12, "abcdefghij"));
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(NumpyStr(*row, {}),
            "[b'abcdefghij' b'abcdefghij' b'abcdefghij' b'abcdefghij' b'abcdefghij'\n"
            " b'abcdefghij' b'abcdefghij' b'abcdefghij' b'abcdefghij' b'abcdefghij'\n"
            " b'abcdefghij' b'abcdefghij']");
  StatusOr<Tensor> scalar = Tensor::FromStrings({}, {"s"});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(EagerVariableStr("Variable", *scalar), "<tf.Variable 'Variable:0' shape=() dtype=string, numpy=b's'>");
  EXPECT_EQ(NumpyRepr(*row).substr(0, 20), "array([b'abcdefghij'");
  // repr(t) of an eager tensor, as a printed tuple of results shows it
  // (graphs/tf/call_pair.run is TensorFlow's print of such a tuple).
  EXPECT_EQ(EagerTensorRepr(*scalar), "<tf.Tensor: shape=(), dtype=string, numpy=b's'>");
  EXPECT_EQ(EagerTensorRepr(*grid).rfind("<tf.Tensor: shape=(2, 2), dtype=string, numpy=\narray([[b'a', b", 0), 0u);
}

}  // namespace
}  // namespace tfrun
