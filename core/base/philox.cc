#include "core/base/philox.h"

#include <cmath>
#include <cstring>
#include <random>

namespace tfrun {
namespace {

// The constants of the Philox paper, as philox_random.h has them.
constexpr uint32_t kW32A = 0x9E3779B9;
constexpr uint32_t kW32B = 0xBB67AE85;
constexpr uint32_t kM4x32A = 0xD2511F53;
constexpr uint32_t kM4x32B = 0xCD9E8D57;

PhiloxRandom::Block Round(const PhiloxRandom::Block& c, const PhiloxRandom::Key& k) {
  const uint64_t p0 = static_cast<uint64_t>(kM4x32A) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kM4x32B) * c[2];
  return {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
          static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
}

// One 32-bit value at a time from the 128-bit samples (SingleSampleAdapter).
class SingleSamples {
 public:
  explicit SingleSamples(PhiloxRandom* gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == 4) {
      block_ = gen_->Next();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  PhiloxRandom* gen_;
  PhiloxRandom::Block block_{};
  int used_ = 4;
};

// Box-Muller on two uniform values (BoxMullerFloat, BoxMullerDouble).
void BoxMuller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = Uint32ToFloat(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  // In double, then rounded, as C++ evaluates TensorFlow's `2.0f * M_PI * u`.
  const float v1 = static_cast<float>(2.0f * M_PI * Uint32ToFloat(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

void BoxMuller(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0, double* d1) {
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2 * M_PI * Uint64ToDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

// FillPhiloxRandomTask for a distribution that takes one sample per group
// of outputs: the groups in order, the last one cut short.
template <typename T, int kGroup, typename Draw>
void FillFixed(PhiloxRandom gen, T* out, int64_t n, Draw draw) {
  std::array<T, kGroup> group;
  for (int64_t at = 0; at < n; at += kGroup) {
    draw(gen.Next(), &group);
    std::memcpy(out + at, group.data(), sizeof(T) * static_cast<size_t>(std::min<int64_t>(kGroup, n - at)));
  }
}

// ... and for one that takes a variable number: group g starts 256 samples
// per output further into the stream.
template <typename T, int kGroup, typename Draw>
void FillVariable(PhiloxRandom base, T* out, int64_t n, Draw draw) {
  constexpr uint64_t kSkipPerGroup = kGroup * 256 / 4;
  std::array<T, kGroup> group;
  for (int64_t g = 0; g * kGroup < n; ++g) {
    PhiloxRandom gen = base;
    gen.Skip(static_cast<uint64_t>(g) * kSkipPerGroup);
    SingleSamples samples(&gen);
    draw(samples, &group);
    const int64_t at = g * kGroup;
    std::memcpy(out + at, group.data(), sizeof(T) * static_cast<size_t>(std::min<int64_t>(kGroup, n - at)));
  }
}

}  // namespace

PhiloxRandom::PhiloxRandom(uint64_t seed_lo, uint64_t seed_hi) {
  key_ = {static_cast<uint32_t>(seed_lo), static_cast<uint32_t>(seed_lo >> 32)};
  counter_[2] = static_cast<uint32_t>(seed_hi);
  counter_[3] = static_cast<uint32_t>(seed_hi >> 32);
}

PhiloxRandom::Block PhiloxRandom::Next() {
  Block c = counter_;
  Key k = key_;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kW32A;
      k[1] += kW32B;
    }
    c = Round(c, k);
  }
  Skip(1);
  return c;
}

void PhiloxRandom::Skip(uint64_t count) {
  const uint32_t lo = static_cast<uint32_t>(count);
  uint32_t hi = static_cast<uint32_t>(count >> 32);
  counter_[0] += lo;
  if (counter_[0] < lo) ++hi;
  counter_[1] += hi;
  if (counter_[1] < hi && ++counter_[2] == 0) ++counter_[3];
}

StatelessKeyCounter GenerateStatelessKey(uint64_t seed0, uint64_t seed1) {
  // stateless_random_ops_v2.cc, GenerateKey.
  const PhiloxRandom::Key fixed = {0x3ec8f720, 0x02461e29};
  const PhiloxRandom::Block seeds = {static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
                                     static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)};
  const PhiloxRandom::Block mix = PhiloxRandom(seeds, fixed).Next();
  return {{mix[0], mix[1]}, {0, 0, mix[2], mix[3]}};
}

KernelRandom::KernelRandom(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) {
    std::random_device device;
    auto draw64 = [&] { return (static_cast<uint64_t>(device()) << 32) | device(); };
    const uint64_t lo = draw64();
    generator_ = PhiloxRandom(lo, draw64());
    return;
  }
  generator_ = PhiloxRandom(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
}

PhiloxRandom KernelRandom::ReserveOutputs(int64_t outputs) {
  PhiloxRandom reserved = generator_;
  generator_.Skip(static_cast<uint64_t>(outputs) * 256);
  return reserved;
}

float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t mantissa = (static_cast<uint64_t>(x0 & 0xfffffu) << 32) | x1;
  const uint64_t bits = (uint64_t{1023} << 52) | mantissa;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

void FillUniform(PhiloxRandom gen, float* out, int64_t n) {
  FillFixed<float, 4>(gen, out, n, [](const PhiloxRandom::Block& s, std::array<float, 4>* g) {
    for (int i = 0; i < 4; ++i) (*g)[i] = Uint32ToFloat(s[i]);
  });
}

void FillUniform(PhiloxRandom gen, double* out, int64_t n) {
  FillFixed<double, 2>(gen, out, n, [](const PhiloxRandom::Block& s, std::array<double, 2>* g) {
    for (int i = 0; i < 2; ++i) (*g)[i] = Uint64ToDouble(s[2 * i], s[2 * i + 1]);
  });
}

void FillUniformInt(PhiloxRandom gen, int32_t* out, int64_t n, int32_t lo, int32_t hi) {
  const uint32_t range = static_cast<uint32_t>(hi) - static_cast<uint32_t>(lo);
  FillFixed<int32_t, 4>(gen, out, n, [&](const PhiloxRandom::Block& s, std::array<int32_t, 4>* g) {
    for (int i = 0; i < 4; ++i) (*g)[i] = static_cast<int32_t>(static_cast<uint32_t>(lo) + s[i] % range);
  });
}

void FillUniformInt(PhiloxRandom gen, int64_t* out, int64_t n, int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  FillFixed<int64_t, 2>(gen, out, n, [&](const PhiloxRandom::Block& s, std::array<int64_t, 2>* g) {
    for (int i = 0; i < 2; ++i) {
      const uint64_t bits = s[2 * i] | static_cast<uint64_t>(s[2 * i + 1]) << 32;
      (*g)[i] = static_cast<int64_t>(static_cast<uint64_t>(lo) + bits % range);
    }
  });
}

void FillStandardNormal(PhiloxRandom gen, float* out, int64_t n) {
  FillFixed<float, 4>(gen, out, n, [](const PhiloxRandom::Block& s, std::array<float, 4>* g) {
    BoxMuller(s[0], s[1], &(*g)[0], &(*g)[1]);
    BoxMuller(s[2], s[3], &(*g)[2], &(*g)[3]);
  });
}

void FillStandardNormal(PhiloxRandom gen, double* out, int64_t n) {
  FillFixed<double, 2>(gen, out, n, [](const PhiloxRandom::Block& s, std::array<double, 2>* g) {
    BoxMuller(s[0], s[1], s[2], s[3], &(*g)[0], &(*g)[1]);
  });
}

void FillTruncatedNormal(PhiloxRandom gen, float* out, int64_t n) {
  FillVariable<float, 4>(gen, out, n, [](SingleSamples& samples, std::array<float, 4>* g) {
    int index = 0;
    while (true) {
      const uint32_t x0 = samples();
      const uint32_t x1 = samples();
      float f[2];
      BoxMuller(x0, x1, &f[0], &f[1]);
      for (float v : f) {
        if (std::fabs(v) < 2.0f) {
          (*g)[index++] = v;
          if (index == 4) return;
        }
      }
    }
  });
}

void FillTruncatedNormal(PhiloxRandom gen, double* out, int64_t n) {
  FillVariable<double, 2>(gen, out, n, [](SingleSamples& samples, std::array<double, 2>* g) {
    int index = 0;
    while (true) {
      const uint32_t x0 = samples(), x1 = samples(), x2 = samples(), x3 = samples();
      double d[2];
      BoxMuller(x0, x1, x2, x3, &d[0], &d[1]);
      for (double v : d) {
        if (std::fabs(v) < 2.0) {
          (*g)[index++] = v;
          if (index == 2) return;
        }
      }
    }
  });
}

}  // namespace tfrun
