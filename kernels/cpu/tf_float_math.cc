// Built with -ffp-contract=off: every a * b + c below rounds twice, as
// Eigen's pmadd does without FMA. std::min and std::max keep their first
// argument when either is NaN, as Eigen's AVX pmin/pmax do.
#include "kernels/cpu/tf_float_math.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include <emmintrin.h>

#include "core/base/float_bits.h"
#include "core/base/parallel.h"
#include "kernels/cpu/cpu_eigen.h"
#include "kernels/cpu/tf_float_math_avx2.h"
#include "kernels/cpu/tf_float_packets.h"

namespace tfrun {
namespace cpu {
namespace {

constexpr int64_t kPacket = 8;  // AVX's floats per packet

float FromBits(uint32_t bits) { return FloatFromBits(bits); }
uint32_t Bits(float f) { return FloatBits(f); }

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

// ---- The packet functions (tf_float_packets.h), four lanes at a time
// with SSE2, eight with AVX2 where the processor has it: the scalar forms
// above stay the reference (tf_float_math_test compares them over special
// and random bit patterns). ----

struct Sse {
  using V = __m128;
  using VI = __m128i;
  static constexpr int kLanes = 4;
  static V Splat(float f) { return _mm_set1_ps(f); }
  static VI SplatI(int i) { return _mm_set1_epi32(i); }
  static V Load(const float* p) { return _mm_loadu_ps(p); }
  static void Store(float* p, V v) { _mm_storeu_ps(p, v); }
  static V Add(V a, V b) { return _mm_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm_div_ps(a, b); }
  // std::min(a, b) is (b < a) ? b : a, minps(b, a); std::max(a, b) is (a < b) ? b : a, maxps(b, a).
  static V Min(V a, V b) { return _mm_min_ps(b, a); }
  static V Max(V a, V b) { return _mm_max_ps(b, a); }
  static V And(V a, V b) { return _mm_and_ps(a, b); }
  static V Or(V a, V b) { return _mm_or_ps(a, b); }
  static V AndNot(V mask, V a) { return _mm_andnot_ps(mask, a); }
  static V Select(V mask, V a, V b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }  // mask ? a : b
  static V Less(V a, V b) { return _mm_cmplt_ps(a, b); }
  static V Greater(V a, V b) { return _mm_cmpgt_ps(a, b); }
  static V Equal(V a, V b) { return _mm_cmpeq_ps(a, b); }
  static V Unordered(V a, V b) { return _mm_cmpunord_ps(a, b); }
  static V Abs(V a) { return _mm_and_ps(a, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff))); }
  static VI Truncate(V a) { return _mm_cvttps_epi32(a); }
  static V ToFloat(VI a) { return _mm_cvtepi32_ps(a); }
  static V BitsToFloat(VI a) { return _mm_castsi128_ps(a); }
  static VI FloatToBits(V a) { return _mm_castps_si128(a); }
  static VI ShiftLeft23(VI a) { return _mm_slli_epi32(a, 23); }
  static VI ShiftRightLogical23(VI a) { return _mm_srli_epi32(a, 23); }
  static VI ShiftRightArithmetic2(VI a) { return _mm_srai_epi32(a, 2); }
  static VI AddI(VI a, VI b) { return _mm_add_epi32(a, b); }
  static VI SubI(VI a, VI b) { return _mm_sub_epi32(a, b); }
  static VI AndI(VI a, VI b) { return _mm_and_si128(a, b); }
  static VI OrI(VI a, VI b) { return _mm_or_si128(a, b); }
};

std::atomic<int> g_lanes_for_testing{0};

// Whether the eight-lane forms run (tf_float_math_avx2.cc).
bool EightLanes() { return TfFloatPacketLanes() == 8; }

// Scalar functions' packet forms; nullptr: none (the scalar runs).
template <float (*Scalar)(float)>
constexpr Sse::V (*kPacket4)(Sse::V) = nullptr;
template <>
constexpr Sse::V (*kPacket4<TanhRational>)(Sse::V) = packets::Tanh<Sse>;
template <>
constexpr Sse::V (*kPacket4<SigmoidPacket>)(Sse::V) = packets::Sigmoid<Sse>;
template <>
constexpr Sse::V (*kPacket4<ExpPacket>)(Sse::V) = packets::Exp<Sse>;
template <>
constexpr Sse::V (*kPacket4<LogPacket>)(Sse::V) = packets::Log<Sse>;

template <float (*Packet)(float), float (*Scalar)(float)>
void Apply(TfFloatFunction f, const float* in, float* out, int64_t begin, int64_t end, int64_t whole,
           bool one_by_one) {
  const int64_t packed = std::min(end, whole);
  int64_t i = begin;
  if constexpr (kPacket4<Packet> != nullptr) {
    if (!one_by_one) {
      if (EightLanes() && packed - i >= 8) {
        const int64_t stop = i + (packed - i) / 8 * 8;
        avx2::ApplyTfFloatPackets(f, in, out, i, stop);
        i = stop;
      }
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
      return Apply<TanhRational, TanhRational>(f, in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kSigmoid:
      return Apply<SigmoidPacket, SigmoidScalar>(f, in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kExp: return Apply<ExpPacket, ExpScalar>(f, in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kLog: return Apply<LogPacket, LogScalar>(f, in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kReciprocal:
      return Apply<ReciprocalPacket, ReciprocalScalar>(f, in, out, begin, end, whole, one_by_one);
    case TfFloatFunction::kRsqrt: return Apply<RsqrtPacket, RsqrtScalar>(f, in, out, begin, end, whole, one_by_one);
  }
}

}  // namespace

int TfFloatPacketLanes() {
  const int widest = ProcessorHasAvx2() ? 8 : 4;
  const int forced = g_lanes_for_testing.load(std::memory_order_relaxed);
  return forced > 0 ? std::min(forced, widest) : widest;
}

void SetTfFloatPacketLanesForTesting(int lanes) { g_lanes_for_testing.store(lanes); }

void ApplyTfFloatFunctionPart(TfFloatFunction f, const float* in, float* out, int64_t begin, int64_t end,
                              int64_t n) {
  ApplyPart(f, in, out, begin, end, n, false);
}

void ApplyTfFloatFunctionOneByOne(TfFloatFunction f, const float* in, float* out, int64_t n) {
  ApplyPart(f, in, out, 0, n, n, true);
}

void LrnGradientSums(const float* x, const float* scale, const float* norm, const float* power, const float* grad,
                     int64_t depth, int64_t radius, float* out) {
  int64_t k = 0;
  if (EightLanes() && depth >= 8) {
    k = depth / 8 * 8;
    avx2::LrnGradientSums(x, scale, norm, power, grad, radius, out, 0, k);
  }
  if (depth - k >= 4) {
    const int64_t stop = k + (depth - k) / 4 * 4;
    packets::LrnGradientSums<Sse>(x, scale, norm, power, grad, radius, out, k, stop);
    k = stop;
  }
  for (; k < depth; ++k) {
    float sum = 0.0f;
    for (int64_t d = 0; d <= 2 * radius; ++d) {
      const int64_t at = k + d;
      if (grad[at] == 0.0f) continue;
      float term = (x[k] * scale[at]) / norm[at];
      if (d == radius) term += power[at];
      sum += term * grad[at];
    }
    out[k] = sum;
  }
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
