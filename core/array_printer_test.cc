// Compares NumpyStr with what NumPy itself printed for thousands of arrays
// (testdata/printer/numpy_cases.txt, written by tools/gen_print_cases.py).
#include "core/array_printer.h"

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

std::vector<PrintCase> LoadCases() {
  std::ifstream in("testdata/printer/numpy_cases.txt", std::ios::binary);
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

TEST(ArrayPrinterTest, MatchesNumpyOnGeneratedCases) {
  std::vector<PrintCase> cases = LoadCases();
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
    std::string got = NumpyStr(*t, options);
    if (got != c.expected && ++failures <= 10) {
      ADD_FAILURE() << c.dtype_name << " legacy=" << c.legacy << " shape "
                    << ShapeDebugString(c.shape) << "\nexpected:\n"
                    << c.expected << "\ngot:\n" << got;
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases.size() << " cases";
}

}  // namespace
}  // namespace tfrun
