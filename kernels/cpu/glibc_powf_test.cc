#include "kernels/cpu/glibc_powf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/base/float_bits.h"

namespace tfrun {
namespace cpu {
namespace {

// Where the processor has AVX2 and FMA, glibc's powf is the form the
// packets compute: were it not (another powf), LRNGrad would quietly take
// the slow path, and this says so.
TEST(GlibcPowfTest, PacketsRunWhereTheProcessorHasAvx2AndFma) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    GTEST_SKIP() << "the processor lacks AVX2 or FMA: the library's powf runs";
  }
  EXPECT_TRUE(GlibcPowfPacketsMatch());
}

// Every lane the library's bits: random bit patterns (every sign, NaNs,
// infinities, subnormals, zeros) and LRN's norms from 1 up, at exponents
// that keep y log2 x small and that overflow or underflow, at every length
// 0 to 40 (the packets' tails).
TEST(GlibcPowfTest, EveryElementIsTheLibrarysPowf) {
  std::vector<float> x;
  uint32_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    x.push_back(FloatFromBits(state));
  }
  for (int i = 0; i < 20000; ++i) x.push_back(1.0f + 0.37f * static_cast<float>(i));
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::max()}) {
    x.push_back(v);
  }
  std::vector<float> got(x.size());
  for (float y : {-0.75f, -0.5f, 0.5f, 1.0f, 2.0f, -3.3f, 150.0f, -150.0f, 0.0f, -0.0f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE(y);
    PowfLikeGlibc(x.data(), y, got.data(), static_cast<int64_t>(x.size()));
    int differ = 0;
    for (size_t i = 0; i < x.size(); ++i) differ += FloatBits(got[i]) != FloatBits(std::pow(x[i], y));
    EXPECT_EQ(differ, 0);
  }
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> out(n + 1, -7.0f);
    PowfLikeGlibc(x.data() + 20000, -0.75f, out.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(FloatBits(out[i]), FloatBits(std::pow(x[20000 + i], -0.75f))) << n << " " << i;
    EXPECT_EQ(out[n], -7.0f) << "wrote past the end at length " << n;
  }
}

}  // namespace
}  // namespace cpu
}  // namespace tfrun
