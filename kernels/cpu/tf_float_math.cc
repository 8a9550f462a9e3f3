// Built with -ffp-contract=off: every a * b + c below rounds twice, as
// Eigen's pmadd does without FMA. std::min and std::max keep their first
// argument when either is NaN, as Eigen's AVX pmin/pmax do.
#include "kernels/cpu/tf_float_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <emmintrin.h>

#include "kernels/cpu/cpu_eigen.h"

namespace tfrun {
namespace cpu {
namespace {

constexpr int64_t kPacket = 8;  // AVX's floats per packet

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// cvttps2dq: truncation; NaN (and anything out of range) gives INT32_MIN.
int32_t TruncateToInt(float v) {
  return v == v && v > -2147483648.0f && v < 2147483648.0f ? static_cast<int32_t>(v) : INT32_MIN;
}

// 2^e as float bits, e already biased.
float PowerOfTwoBits(int32_t biased) { return FromBits(static_cast<uint32_t>(biased) << 23); }

// pldexp_fast: a * 2^m with the biased exponent clamped to [0, 255].
float LdexpFast(float a, float m) {
  return a * PowerOfTwoBits(TruncateToInt(std::min(std::max(m + 127.0f, 0.0f), 255.0f)));
}

// pldexp_generic: a * 2^m in four factors, for exponents a single factor
// cannot hold.
float LdexpGeneric(float a, float m) {
  const int32_t e = TruncateToInt(std::min(std::max(m, -278.0f), 278.0f));
  int32_t b = e >> 2;
  float out = a * PowerOfTwoBits(b + 127) * PowerOfTwoBits(b + 127) * PowerOfTwoBits(b + 127);
  b = e - 3 * b;
  return out * PowerOfTwoBits(b + 127);
}

// ptanh_float without FMA: a [9/8] rational on [-c, c].
float TanhRational(float a) {
  const float c = 7.90738964080810547f;
  const float x = std::max(std::min(a, c), -c);
  const float x2 = x * x;
  const float x3 = x2 * x;
  float p = 1.394553628e-8f;
  p = p * x2 + 2.102733560e-5f;
  p = p * x2 + 3.520756727e-3f;
  p = p * x2 + 1.340216100e-1f;
  float q = 8.015776984e-7f;
  q = q * x2 + 3.326951409e-4f;
  q = q * x2 + 2.597254514e-2f;
  q = q * x2 + 4.673548340e-1f;
  q = q * x2 + 1.0f;
  p = x3 * p + x;
  return p / q;
}

// scalar_logistic_op<float>::packetOp: exp(x/2) by Cephes' range reduction
// and a degree-5 polynomial, squared, then e / (1 + e).
float SigmoidPacket(float a) {
  const bool zero = a < -104.0f;
  float x = std::min(a, 16.6355324f);
  x = x * 0.5f;
  const float m = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = m * -0.693359375f + x;
  r = m * 2.12194440e-4f + r;
  const float r2 = r * r;
  const float p_even = r2 * 4.1898667812347412109375e-2f + 0.49999141693115234375f;
  const float p_odd = r2 * 8.33471305668354034423828125e-3f + 0.16666877269744873046875f;
  const float p_low = r + 1.0f;
  float p = r * p_odd + p_even;
  p = r2 * p + p_low;
  float e = LdexpFast(p, m);
  e = e * e;
  return zero ? 0.0f : e / (1.0f + e);
}

float SigmoidScalar(float a) {
  const float e = std::exp(std::min(a, 16.6355324f));
  return e / (1.0f + e);
}

// pexp_float: Cephes' range reduction and a degree-6 polynomial. Eigen
// picks the four-factor ldexp for a whole packet when any element has
// |x| > 87; for the others both give the same value, so the choice is
// made per element here.
float ExpPacket(float a) {
  const bool zero = a < -104.0f;
  const float x = std::min(a, 88.723f);
  const float m = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = m * -0.693359375f + x;
  r = m * 2.12194440e-4f + r;
  const float r2 = r * r;
  float p_even = r2 * 1.37449637986719608306884765625e-3f + 4.166965186595916748046875e-2f;
  const float p_odd = r2 * 8.36894474923610687255859375e-3f + 0.16666518151760101318359375f;
  p_even = r2 * p_even + 0.49999988079071044921875f;
  const float p_low = r + 1.0f;
  float y = r * p_odd + p_even;
  y = r2 * y + p_low;
  if (!(std::fabs(x) > 87.0f)) return std::max(LdexpFast(y, m), a);
  return zero ? 0.0f : std::max(LdexpGeneric(y, m), a);
}

// plog_float: frexp (pfrexp_generic), the mantissa moved to
// [sqrt(1/2), sqrt(2)) - 1, a [3/3] rational for log(1 + x), plus e ln 2.
float LogPacket(float a) {
  const float kNormalMin = 1.17549435e-38f;
  const bool denormal = std::fabs(a) < kNormalMin;
  const float normalized = denormal ? a * 16777216.0f : a;
  const float offset = denormal ? -150.0f : -126.0f;
  const uint32_t bits = Bits(normalized);
  const float biased = static_cast<float>((bits >> 23) & 0xff);
  const bool zero_or_not_finite = a == 0.0f || biased == 255.0f;
  const float mantissa = zero_or_not_finite ? a : FromBits((bits & 0x807fffffu) | 0x3f000000u);
  float e = zero_or_not_finite ? 0.0f : biased + offset;
  const bool below = mantissa < 0.707106781186547524f;
  float x = mantissa - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  x = x + (below ? mantissa : 0.0f);
  float p = 0.18256296349849254f;
  p = p * x + 1.0000000190281063f;
  p = p * x + 1.0000000190281136f;
  p = x * p;
  float q = 0.049616247954120038f;
  q = q * x + 0.59923249590823520f;
  q = q * x + 1.4999999999999927f;
  q = q * x + 1.0f;
  x = p / q;
  x = e * 0.693147182f + x;
  if (a == 0.0f) return -INFINITY;
  if (a < 0.0f || a != a) return FromBits(0xffffffffu);  // por with an all-ones mask
  return a == INFINITY ? INFINITY : x;
}

// Eigen's fast-math packet reciprocal and reciprocal square root
// (arch/AVX/MathFunctions.h): the processor's estimate (rcpps, rsqrtps;
// one element of the SSE form gives what one lane of the AVX form gives)
// refined by one Newton step (GenericPacketMathFunctions.h
// generic_reciprocal_newton_step, generic_rsqrt_newton_step), each product
// and sum rounded on its own as without FMA. The estimate is the
// processor's own: its bits differ between processor makers, and
// TensorFlow's with them.
float ReciprocalPacket(float a) {
  // x + x * (1 - a * x): measured against TensorFlow 2.21's Reciprocal,
  // where x * (2 - a * x) differed in 30 of 234 values.
  const float estimate = _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(a)));
  const float product = a * estimate;
  const float one_minus = 1.0f - product;
  const float step = estimate * one_minus;
  return one_minus == one_minus ? step + estimate : estimate;  // a is 0 or infinite: the estimate
}

float RsqrtPacket(float a) {
  const float estimate = _mm_cvtss_f32(_mm_rsqrt_ss(_mm_set_ss(a)));
  const float r2 = a * estimate;
  const float half_r = estimate * -0.5f;
  const float r2_estimate = r2 * estimate;
  const float h = r2_estimate + -1.0f;
  const float step = half_r * h;
  const float refined = step + estimate;
  return refined != refined ? estimate : refined;
}

float ReciprocalScalar(float a) { return 1.0f / a; }
float RsqrtScalar(float a) { return 1.0f / std::sqrt(a); }

float ExpScalar(float a) { return std::exp(a); }
float LogScalar(float a) { return std::log(a); }

// ---- The packet functions four at a time (SSE2), each step the one above,
// for the bits above: the scalar forms stay the reference (tf_float_math_test
// compares both over special and random bit patterns). ----

using V = __m128;
using VI = __m128i;

V Splat(float f) { return _mm_set1_ps(f); }
// mask ? a : b
V Select(V mask, V a, V b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }
// std::min(a, b) is (b < a) ? b : a, minps(b, a); std::max(a, b) is (a < b) ? b : a, maxps(b, a).
V Min(V a, V b) { return _mm_min_ps(b, a); }
V Max(V a, V b) { return _mm_max_ps(b, a); }
V Abs(V a) { return _mm_and_ps(a, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff))); }
// std::floor for |v| < 2^31; other lanes get a finite value the callers
// never let reach their result (see ExpPacket4).
V Floor(V v) {
  const V truncated = _mm_cvtepi32_ps(_mm_cvttps_epi32(v));
  return _mm_sub_ps(truncated, _mm_and_ps(_mm_cmpgt_ps(truncated, v), Splat(1.0f)));
}
V PowerOfTwoBits4(VI biased) { return _mm_castsi128_ps(_mm_slli_epi32(biased, 23)); }

V LdexpFast4(V a, V m) {
  const V clamped = Min(Max(_mm_add_ps(m, Splat(127.0f)), Splat(0.0f)), Splat(255.0f));
  return _mm_mul_ps(a, PowerOfTwoBits4(_mm_cvttps_epi32(clamped)));
}

V LdexpGeneric4(V a, V m) {
  const VI e = _mm_cvttps_epi32(Min(Max(m, Splat(-278.0f)), Splat(278.0f)));
  VI b = _mm_srai_epi32(e, 2);
  const V factor = PowerOfTwoBits4(_mm_add_epi32(b, _mm_set1_epi32(127)));
  V out = _mm_mul_ps(_mm_mul_ps(_mm_mul_ps(a, factor), factor), factor);
  b = _mm_sub_epi32(e, _mm_add_epi32(_mm_add_epi32(b, b), b));
  return _mm_mul_ps(out, PowerOfTwoBits4(_mm_add_epi32(b, _mm_set1_epi32(127))));
}

V MulAdd(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }  // rounded twice

V TanhRational4(V a) {
  const float c = 7.90738964080810547f;
  const V x = Max(Min(a, Splat(c)), Splat(-c));
  const V x2 = _mm_mul_ps(x, x);
  const V x3 = _mm_mul_ps(x2, x);
  V p = Splat(1.394553628e-8f);
  p = MulAdd(p, x2, Splat(2.102733560e-5f));
  p = MulAdd(p, x2, Splat(3.520756727e-3f));
  p = MulAdd(p, x2, Splat(1.340216100e-1f));
  V q = Splat(8.015776984e-7f);
  q = MulAdd(q, x2, Splat(3.326951409e-4f));
  q = MulAdd(q, x2, Splat(2.597254514e-2f));
  q = MulAdd(q, x2, Splat(4.673548340e-1f));
  q = MulAdd(q, x2, Splat(1.0f));
  p = MulAdd(x3, p, x);
  return _mm_div_ps(p, q);
}

V SigmoidPacket4(V a) {
  const V zero = _mm_cmplt_ps(a, Splat(-104.0f));
  V x = Min(a, Splat(16.6355324f));
  x = _mm_mul_ps(x, Splat(0.5f));
  // For a lane below -104, m is whatever Floor gives: the lane's result is 0.
  const V m = Floor(MulAdd(x, Splat(1.44269504088896341f), Splat(0.5f)));
  V r = MulAdd(m, Splat(-0.693359375f), x);
  r = MulAdd(m, Splat(2.12194440e-4f), r);
  const V r2 = _mm_mul_ps(r, r);
  const V p_even = MulAdd(r2, Splat(4.1898667812347412109375e-2f), Splat(0.49999141693115234375f));
  const V p_odd = MulAdd(r2, Splat(8.33471305668354034423828125e-3f), Splat(0.16666877269744873046875f));
  const V p_low = _mm_add_ps(r, Splat(1.0f));
  V p = MulAdd(r, p_odd, p_even);
  p = MulAdd(r2, p, p_low);
  V e = LdexpFast4(p, m);
  e = _mm_mul_ps(e, e);
  return _mm_andnot_ps(zero, _mm_div_ps(e, _mm_add_ps(Splat(1.0f), e)));
}

V ExpPacket4(V a) {
  const V zero = _mm_cmplt_ps(a, Splat(-104.0f));
  const V x = Min(a, Splat(88.723f));
  // Floor is exact for every x above -104; below it the lane is 0 either way.
  const V m = Floor(MulAdd(x, Splat(1.44269504088896341f), Splat(0.5f)));
  V r = MulAdd(m, Splat(-0.693359375f), x);
  r = MulAdd(m, Splat(2.12194440e-4f), r);
  const V r2 = _mm_mul_ps(r, r);
  V p_even = MulAdd(r2, Splat(1.37449637986719608306884765625e-3f), Splat(4.166965186595916748046875e-2f));
  const V p_odd = MulAdd(r2, Splat(8.36894474923610687255859375e-3f), Splat(0.16666518151760101318359375f));
  p_even = MulAdd(r2, p_even, Splat(0.49999988079071044921875f));
  const V p_low = _mm_add_ps(r, Splat(1.0f));
  V y = MulAdd(r, p_odd, p_even);
  y = MulAdd(r2, y, p_low);
  const V large = _mm_cmpgt_ps(Abs(x), Splat(87.0f));
  const V fast = Max(LdexpFast4(y, m), a);
  const V generic = _mm_andnot_ps(zero, Max(LdexpGeneric4(y, m), a));
  return Select(large, generic, fast);
}

V LogPacket4(V a) {
  const V denormal = _mm_cmplt_ps(Abs(a), Splat(1.17549435e-38f));
  const V normalized = Select(denormal, _mm_mul_ps(a, Splat(16777216.0f)), a);
  const V offset = Select(denormal, Splat(-150.0f), Splat(-126.0f));
  const VI bits = _mm_castps_si128(normalized);
  const V biased = _mm_cvtepi32_ps(_mm_and_si128(_mm_srli_epi32(bits, 23), _mm_set1_epi32(0xff)));
  const V zero_or_not_finite = _mm_or_ps(_mm_cmpeq_ps(a, Splat(0.0f)), _mm_cmpeq_ps(biased, Splat(255.0f)));
  const V fraction = _mm_castsi128_ps(_mm_or_si128(_mm_and_si128(bits, _mm_set1_epi32(static_cast<int>(0x807fffffu))),
                                                   _mm_set1_epi32(0x3f000000)));
  const V mantissa = Select(zero_or_not_finite, a, fraction);
  V e = Select(zero_or_not_finite, Splat(0.0f), _mm_add_ps(biased, offset));
  const V below = _mm_cmplt_ps(mantissa, Splat(0.707106781186547524f));
  V x = _mm_sub_ps(mantissa, Splat(1.0f));
  e = _mm_sub_ps(e, _mm_and_ps(below, Splat(1.0f)));
  x = _mm_add_ps(x, _mm_and_ps(below, mantissa));
  V p = Splat(0.18256296349849254f);
  p = MulAdd(p, x, Splat(1.0000000190281063f));
  p = MulAdd(p, x, Splat(1.0000000190281136f));
  p = _mm_mul_ps(x, p);
  V q = Splat(0.049616247954120038f);
  q = MulAdd(q, x, Splat(0.59923249590823520f));
  q = MulAdd(q, x, Splat(1.4999999999999927f));
  q = MulAdd(q, x, Splat(1.0f));
  x = _mm_div_ps(p, q);
  x = MulAdd(e, Splat(0.693147182f), x);
  const V infinity = Splat(INFINITY);
  x = Select(_mm_cmpeq_ps(a, infinity), infinity, x);
  const V nan = _mm_or_ps(_mm_cmplt_ps(a, Splat(0.0f)), _mm_cmpunord_ps(a, a));
  x = _mm_or_ps(x, nan);  // por with an all-ones mask
  return Select(_mm_cmpeq_ps(a, Splat(0.0f)), Splat(-INFINITY), x);
}

// Scalar functions' four-at-a-time forms; nullptr: none (the scalar runs).
template <float (*Packet)(float)>
constexpr V (*kPacket4)(V) = nullptr;
template <>
constexpr V (*kPacket4<TanhRational>)(V) = TanhRational4;
template <>
constexpr V (*kPacket4<SigmoidPacket>)(V) = SigmoidPacket4;
template <>
constexpr V (*kPacket4<ExpPacket>)(V) = ExpPacket4;
template <>
constexpr V (*kPacket4<LogPacket>)(V) = LogPacket4;

template <float (*Packet)(float), float (*Scalar)(float)>
void Apply(const float* in, float* out, int64_t begin, int64_t end, int64_t whole, bool one_by_one) {
  const int64_t packed = std::min(end, whole);
  int64_t i = begin;
  if constexpr (kPacket4<Packet> != nullptr) {
    if (!one_by_one) {
      for (; i + 4 <= packed; i += 4) _mm_storeu_ps(out + i, kPacket4<Packet>(_mm_loadu_ps(in + i)));
    }
  }
  for (; i < packed; ++i) out[i] = Packet(in[i]);
  for (i = std::max(begin, whole); i < end; ++i) out[i] = Scalar(in[i]);
}

void ApplyPart(TfFloatFunction f, const float* in, float* out, int64_t begin, int64_t end, int64_t n,
               bool one_by_one) {
  const int64_t whole = n - n % kPacket;  // elements in whole packets
  switch (f) {
    case TfFloatFunction::kTanh:
      return Apply<TanhRational, TanhRational>(in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kSigmoid:
      return Apply<SigmoidPacket, SigmoidScalar>(in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kExp: return Apply<ExpPacket, ExpScalar>(in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kLog: return Apply<LogPacket, LogScalar>(in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kReciprocal:
      return Apply<ReciprocalPacket, ReciprocalScalar>(in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kRsqrt: return Apply<RsqrtPacket, RsqrtScalar>(in, out, begin, end, whole, one_by_one);
  }
}

}  // namespace

void ApplyTfFloatFunctionPart(TfFloatFunction f, const float* in, float* out, int64_t begin, int64_t end,
                              int64_t n) {
  ApplyPart(f, in, out, begin, end, n, false);
}

void ApplyTfFloatFunctionOneByOne(TfFloatFunction f, const float* in, float* out, int64_t n) {
  ApplyPart(f, in, out, 0, n, n, true);
}

void ApplyTfFloatFunction(TfFloatFunction f, const float* in, float* out, int64_t n) {
  auto range = [&](int64_t begin, int64_t end) { ApplyTfFloatFunctionPart(f, in, out, begin, end, n); };
  if (n < kParallelElements) {
    range(0, n);
    return;
  }
  MultiThreadedSection section;
  PoolDevice().parallelFor(
      n, Eigen::TensorOpCost(sizeof(float), sizeof(float), 20),
      [](Eigen::Index size) { return (size + kPacket - 1) / kPacket * kPacket; },
      [&](Eigen::Index begin, Eigen::Index end) { range(begin, end); });
}

}  // namespace cpu
}  // namespace tfrun
