#include "core/printing/float_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace tfrun {
namespace {

// The fast Dragonbox path must pick the same digits as Dragon4's exact
// search for float32 and float64, over random bit patterns and integers.
TEST(FloatFormatTest, DragonboxAgreesWithExactDragon4) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits64 = rng();
    double d;
    std::memcpy(&d, &bits64, sizeof d);
    uint32_t bits32 = static_cast<uint32_t>(rng());
    float f;
    std::memcpy(&f, &bits32, sizeof f);
    double integral = static_cast<double>(rng() >> (rng() % 64));
    for (double v : {std::fabs(d), integral}) {
      if (!std::isfinite(v)) continue;
      ASSERT_EQ(ShortestDigitsForTest(v, DType::kFloat64, true),
                ShortestDigitsForTest(v, DType::kFloat64, false))
          << v;
    }
    for (float v : {std::fabs(f), static_cast<float>(integral)}) {
      if (!std::isfinite(v)) continue;
      ASSERT_EQ(ShortestDigitsForTest(v, DType::kFloat32, true),
                ShortestDigitsForTest(v, DType::kFloat32, false))
          << v;
    }
  }
}

TEST(FloatFormatTest, ScalarStrModernAndLegacy) {
  EXPECT_EQ(FloatScalarStr(22.0, DType::kFloat32, false), "22.0");
  EXPECT_EQ(FloatScalarStr(22.0, DType::kFloat32, true), "22.0");
  EXPECT_EQ(FloatScalarStr(static_cast<float>(1.0 / 3), DType::kFloat32, false),
            "0.33333334");
  EXPECT_EQ(FloatScalarStr(static_cast<float>(1.0 / 3), DType::kFloat32, true),
            "0.333333");
  EXPECT_EQ(FloatScalarStr(1e-5, DType::kFloat64, false), "1e-05");
  EXPECT_EQ(FloatScalarStr(1e16, DType::kFloat64, false), "1e+16");
  EXPECT_EQ(FloatScalarStr(-0.0, DType::kFloat32, false), "-0.0");
  EXPECT_EQ(FloatScalarStr(NAN, DType::kFloat32, false), "nan");
  EXPECT_EQ(FloatScalarStr(-INFINITY, DType::kFloat32, true), "-inf");
}

}  // namespace
}  // namespace tfrun
