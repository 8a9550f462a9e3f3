// TensorFlow's random numbers: the Philox4x32-10 generator and the
// distributions its stateful random ops draw with (RandomUniform,
// RandomStandardNormal, TruncatedNormal), as tensorflow/core/lib/random/
// (philox_random.h, random_distributions.h) and random_op_cpu.h define
// them, so a seeded graph draws the numbers TensorFlow's CPU kernels draw.
// Written from those definitions; the tests compare with TensorFlow 2.21's
// own output.
#pragma once

#include <array>
#include <cstdint>

namespace tfrun {

class PhiloxRandom {
 public:
  using Block = std::array<uint32_t, 4>;  // one 128-bit sample
  using Key = std::array<uint32_t, 2>;

  PhiloxRandom() = default;
  // A kernel's generator for its op's `seed` and `seed2` attrs
  // (GuardedPhiloxRandom, when either is non-zero).
  PhiloxRandom(uint64_t seed_lo, uint64_t seed_hi);
  // A generator at `counter` under `key`: what the stateless random ops
  // (StatelessRandomUniformV2 and kin) are given as inputs.
  PhiloxRandom(const Block& counter, const Key& key) : counter_(counter), key_(key) {}

  // The next 128-bit sample (ten rounds), advancing the counter by one.
  Block Next();
  // Skips `count` 128-bit samples.
  void Skip(uint64_t count);

 private:
  Block counter_{};
  Key key_{};
};

// The key and counter the stateless random ops draw with for a two-number
// seed (StatelessRandomGetKeyCounter, and the V1 stateless ops' own
// GenerateKey): the seeds scrambled by one Philox sample under a fixed key.
struct StatelessKeyCounter {
  PhiloxRandom::Key key;
  PhiloxRandom::Block counter;
};
StatelessKeyCounter GenerateStatelessKey(uint64_t seed0, uint64_t seed1);

// The generator a stateful random kernel keeps across runs
// (GuardedPhiloxRandom): each run reserves 256 samples per output, so a
// second run of the same node draws new numbers.
class KernelRandom {
 public:
  // Both seeds 0: TensorFlow seeds the generator nondeterministically.
  KernelRandom(int64_t seed, int64_t seed2);
  // The generator for a run that writes `outputs` values.
  PhiloxRandom ReserveOutputs(int64_t outputs);

 private:
  PhiloxRandom generator_;
};

// random_distributions.h's conversions: 23 (float) or 52 (double) random
// mantissa bits, in [0, 1).
float Uint32ToFloat(uint32_t x);
double Uint64ToDouble(uint32_t x0, uint32_t x1);

// FillPhiloxRandom with each distribution, from `gen` as reserved.
void FillUniform(PhiloxRandom gen, float* out, int64_t n);
void FillUniform(PhiloxRandom gen, double* out, int64_t n);
// RandomUniformInt's: lo + bits % (hi - lo), with 32 bits a value for
// int32 and two samples' 64 (the first the low half) for int64. lo < hi.
void FillUniformInt(PhiloxRandom gen, int32_t* out, int64_t n, int32_t lo, int32_t hi);
void FillUniformInt(PhiloxRandom gen, int64_t* out, int64_t n, int64_t lo, int64_t hi);
void FillStandardNormal(PhiloxRandom gen, float* out, int64_t n);
void FillStandardNormal(PhiloxRandom gen, double* out, int64_t n);
// Within two standard deviations: rejection, each group of outputs from a
// region of the stream of its own.
void FillTruncatedNormal(PhiloxRandom gen, float* out, int64_t n);
void FillTruncatedNormal(PhiloxRandom gen, double* out, int64_t n);

}  // namespace tfrun
