#include "kernels/cpu/tf_float_math_avx2.h"

#include <immintrin.h>

#include "kernels/cpu/tf_float_packets.h"

namespace tfrun {
namespace avx2 {
namespace {

// tf_float_math.cc's Sse, lane for lane: the comparisons are the
// predicates cmpltps, cmpgtps, cmpeqps and cmpunordps encode.
struct Avx2 {
  using V = __m256;
  using VI = __m256i;
  static constexpr int kLanes = 8;
  static V Splat(float f) { return _mm256_set1_ps(f); }
  static VI SplatI(int i) { return _mm256_set1_epi32(i); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Min(V a, V b) { return _mm256_min_ps(b, a); }
  static V Max(V a, V b) { return _mm256_max_ps(b, a); }
  static V And(V a, V b) { return _mm256_and_ps(a, b); }
  static V Or(V a, V b) { return _mm256_or_ps(a, b); }
  static V AndNot(V mask, V a) { return _mm256_andnot_ps(mask, a); }
  static V Select(V mask, V a, V b) { return _mm256_or_ps(_mm256_and_ps(mask, a), _mm256_andnot_ps(mask, b)); }
  static V Less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OS); }
  static V Greater(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OS); }
  static V Equal(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static V Unordered(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
  static V Abs(V a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
  static VI Truncate(V a) { return _mm256_cvttps_epi32(a); }
  static V ToFloat(VI a) { return _mm256_cvtepi32_ps(a); }
  static V BitsToFloat(VI a) { return _mm256_castsi256_ps(a); }
  static VI FloatToBits(V a) { return _mm256_castps_si256(a); }
  static VI ShiftLeft23(VI a) { return _mm256_slli_epi32(a, 23); }
  static VI ShiftRightLogical23(VI a) { return _mm256_srli_epi32(a, 23); }
  static VI ShiftRightArithmetic2(VI a) { return _mm256_srai_epi32(a, 2); }
  static VI AddI(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static VI SubI(VI a, VI b) { return _mm256_sub_epi32(a, b); }
  static VI AndI(VI a, VI b) { return _mm256_and_si256(a, b); }
  static VI OrI(VI a, VI b) { return _mm256_or_si256(a, b); }
};

}  // namespace

void ApplyTfFloatPackets(cpu::TfFloatFunction f, const float* in, float* out, int64_t begin, int64_t end) {
  using cpu::TfFloatFunction;
  namespace packets = cpu::packets;
  switch (f) {
    case TfFloatFunction::kTanh: return packets::ApplyPackets<Avx2, packets::Tanh<Avx2>>(in, out, begin, end);
    case TfFloatFunction::kSigmoid: return packets::ApplyPackets<Avx2, packets::Sigmoid<Avx2>>(in, out, begin, end);
    case TfFloatFunction::kExp: return packets::ApplyPackets<Avx2, packets::Exp<Avx2>>(in, out, begin, end);
    case TfFloatFunction::kLog: return packets::ApplyPackets<Avx2, packets::Log<Avx2>>(in, out, begin, end);
    case TfFloatFunction::kReciprocal:
    case TfFloatFunction::kRsqrt: return;
  }
}

void LrnGradientSums(const float* x, const float* scale, const float* norm, const float* power, const float* grad,
                     int64_t radius, float* out, int64_t begin, int64_t end) {
  cpu::packets::LrnGradientSums<Avx2>(x, scale, norm, power, grad, radius, out, begin, end);
}

}  // namespace avx2
}  // namespace tfrun
