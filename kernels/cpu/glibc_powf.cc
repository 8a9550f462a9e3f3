#include "kernels/cpu/glibc_powf.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/base/float_bits.h"

namespace tfrun {
namespace cpu {
namespace {

// powf's zeroinfnan(y): y is 0, an infinity or a NaN (its special cases).
bool ZeroInfNan(float y) { return 2 * FloatBits(y) - 1 >= 2u * 0x7f800000 - 1; }

void Packets(const float* x, float y, float* out, int64_t n) {
  constexpr int64_t kChunk = 512;
  uint8_t slow[kChunk / 8];
  const int64_t whole = n / 8 * 8;  // the packets' elements
  for (int64_t at = 0; at < whole; at += kChunk) {
    const int64_t count = std::min(kChunk, whole - at);
    glibc_powf::EightLanes(x + at, y, out + at, count, slow);
    for (int64_t i = 0; i < count; ++i) {
      if (slow[i / 8] >> (i % 8) & 1) out[at + i] = std::pow(x[at + i], y);
    }
  }
  for (int64_t at = whole; at < n; ++at) out[at] = std::pow(x[at], y);
}

}  // namespace

bool GlibcPowfPacketsMatch() {
  static const bool match = [] {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return false;
    // Across the normal range, and densely where LRN's norms lie (from 1).
    std::vector<float> x;
    for (int e = -126; e <= 127; ++e) {
      for (float m : {1.0f, 1.0625f, 1.3f, 1.41421f, 1.5f, 1.7f, 1.999999f}) x.push_back(std::ldexp(m, e));
    }
    for (int i = 0; i < 4096; ++i) x.push_back(1.0f + static_cast<float>(i) * 0.00390625f + 1e-7f * i);
    x.push_back(0.0f);
    x.push_back(-2.0f);
    x.push_back(std::numeric_limits<float>::denorm_min());
    x.push_back(std::numeric_limits<float>::infinity());
    std::vector<float> got(x.size());
    for (float y : {-0.75f, -0.5f, -1.0f, 0.5f, 2.5f, -1.7f, 3.0f, 0.3f, -0.3333333f, 7.9f}) {
      Packets(x.data(), y, got.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        if (FloatBits(got[i]) != FloatBits(std::pow(x[i], y))) return false;
      }
    }
    return true;
  }();
  return match;
}

void PowfLikeGlibc(const float* x, float y, float* out, int64_t n) {
  if (ZeroInfNan(y) || !GlibcPowfPacketsMatch()) {
    for (int64_t i = 0; i < n; ++i) out[i] = std::pow(x[i], y);
    return;
  }
  Packets(x, y, out, n);
}

}  // namespace cpu
}  // namespace tfrun
