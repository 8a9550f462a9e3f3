#include "core/base/random.h"

#include <cmath>

namespace tfrun {
namespace {

// SplitMix64's finaliser: a strong 64-bit mix of (seed, index).
uint64_t Mix(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + index * 0xD1B54A32D192ED03ull +
               0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

double UniformUnit(uint64_t seed, uint64_t index) {
  return static_cast<double>(Mix(seed, index) >> 11) * 0x1.0p-53;
}

double PortableLog(double x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
  // s = (m-1)/(m+1), |s| < 0.1716, summed to s^41 (error < 1e-32).
  int e = 0;
  double m = std::frexp(x, &e);  // exact: m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2;
    --e;
  }
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  double term = s, sum = 0;
  for (int k = 1; k <= 41; k += 2) {
    sum += term / k;
    term *= s2;
  }
  constexpr double kLn2 = 0.693147180559945309417232121458;
  return 2 * sum + e * kLn2;
}

double StandardNormal(uint64_t seed, uint64_t index) {
  // (0, 1): never 0, so the tails stay finite.
  double p = (static_cast<double>(Mix(seed, index) >> 11) + 0.5) * 0x1.0p-53;
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549671010429643e+00,
                                 4.374664141464968e+00, 2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (p < kLow || p > 1 - kLow) {
    const bool upper = p > 1 - kLow;
    const double q = std::sqrt(-2 * PortableLog(upper ? 1 - p : p));
    const double x =
        (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    return upper ? -x : x;
  }
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
         q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

}  // namespace tfrun
