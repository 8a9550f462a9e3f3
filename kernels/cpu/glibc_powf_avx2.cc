// glibc_powf.h's packet form, built with -mavx2 -mfma -ffp-contract=off: the
// fused multiply-adds are __powf_fma's, explicit, and nothing else fuses.
// Called only where the processor has AVX2 and FMA. No library headers
// but the intrinsics: nothing inline from here may stand in for the
// generic build's (matmul_avx2.h says why).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/glibc_powf.h"

namespace tfrun {
namespace cpu {
namespace glibc_powf {

// glibc's __powf_log2_data and __exp2f_data (Arm's optimized-routines,
// MIT licensed), as this machine's libm holds them.
alignas(64) const double kLog2Table[16][2] = {  // {invc, logc}
    {0x1.661ec79f8f3bep+0, -0x1.efec65b963019p-2}, {0x1.571ed4aaf883dp+0, -0x1.b0b6832d4fca4p-2},
    {0x1.49539f0f010bp+0, -0x1.7418b0a1fb77bp-2},  {0x1.3c995b0b80385p+0, -0x1.39de91a6dcf7bp-2},
    {0x1.30d190c8864a5p+0, -0x1.01d9bf3f2b631p-2}, {0x1.25e227b0b8eap+0, -0x1.97c1d1b3b7afp-3},
    {0x1.1bb4a4a1a343fp+0, -0x1.2f9e393af3c9fp-3}, {0x1.12358f08ae5bap+0, -0x1.960cbbf788d5cp-4},
    {0x1.0953f419900a7p+0, -0x1.a6f9db6475fcep-5}, {0x1p+0, 0x0p+0},
    {0x1.e608cfd9a47acp-1, 0x1.338ca9f24f53dp-4},  {0x1.ca4b31f026aap-1, 0x1.476a9543891bap-3},
    {0x1.b2036576afce6p-1, 0x1.e840b4ac4e4d2p-3},  {0x1.9c2d163a1aa2dp-1, 0x1.40645f0c6651cp-2},
    {0x1.886e6037841edp-1, 0x1.88e9c2c1b9ff8p-2},  {0x1.767dcf5534862p-1, 0x1.ce0a44eb17bccp-2},
};
constexpr double kLog2Poly[5] = {0x1.27616c9496e0bp-2, -0x1.71969a075c67ap-2, 0x1.ec70a6ca7baddp-2,
                                 -0x1.7154748bef6c8p-1, 0x1.71547652ab82bp+0};
alignas(64) const int64_t kExp2Table[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr double kExp2Shift = 0x1.8p+47;  // 0x1.8p52 / 32
constexpr double kExp2Poly[3] = {0x1.c6af84b912394p-5, 0x1.ebfce50fac4f3p-3, 0x1.62e42ff0c52d6p-1};

// Four lanes of powf's fast path: x's bits `ix` (positive normal numbers)
// and y as double. *slow gets the lanes whose |y log2 x| >= 126, which
// powf takes to its overflow and underflow checks.
__m128 FourLanes(__m128i ix, __m256d y, __m128i* slow) {
  // log2_inline
  const __m128i tmp = _mm_sub_epi32(ix, _mm_set1_epi32(0x3f330000));
  const __m128i i = _mm_and_si128(_mm_srli_epi32(tmp, 19), _mm_set1_epi32(15));
  const __m128i top = _mm_and_si128(tmp, _mm_set1_epi32(static_cast<int>(0xff800000u)));
  const __m128i iz = _mm_sub_epi32(ix, top);
  const __m128i k = _mm_srai_epi32(top, 23);
  const __m128i at = _mm_slli_epi32(i, 1);
  const __m256d invc = _mm256_i32gather_pd(&kLog2Table[0][0], at, 8);
  const __m256d logc = _mm256_i32gather_pd(&kLog2Table[0][1], at, 8);
  const __m256d z = _mm256_cvtps_pd(_mm_castsi128_ps(iz));
  const __m256d r = _mm256_fmadd_pd(z, invc, _mm256_set1_pd(-1.0));
  const __m256d y0 = _mm256_add_pd(_mm256_cvtepi32_pd(k), logc);
  const __m256d r2 = _mm256_mul_pd(r, r);
  __m256d v = _mm256_fmadd_pd(r, _mm256_set1_pd(kLog2Poly[0]), _mm256_set1_pd(kLog2Poly[1]));
  const __m256d p = _mm256_fmadd_pd(r, _mm256_set1_pd(kLog2Poly[2]), _mm256_set1_pd(kLog2Poly[3]));
  const __m256d r4 = _mm256_mul_pd(r2, r2);
  __m256d q = _mm256_fmadd_pd(r, _mm256_set1_pd(kLog2Poly[4]), y0);
  q = _mm256_fmadd_pd(r2, p, q);
  const __m256d logx = _mm256_fmadd_pd(v, r4, q);
  const __m256d ylogx = _mm256_mul_pd(y, logx);
  // (asuint64 (ylogx) >> 47 & 0xffff) >= asuint64 (126.0) >> 47
  const __m256i top16 = _mm256_and_si256(_mm256_srli_epi64(_mm256_castpd_si256(ylogx), 47), _mm256_set1_epi64x(0xffff));
  const __m256i big = _mm256_cmpgt_epi64(top16, _mm256_set1_epi64x(0x80be));
  // Each 64-bit lane's low half as one 32-bit lane.
  *slow = _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(big, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
  // exp2_inline
  const __m256d shift = _mm256_set1_pd(kExp2Shift);
  __m256d kd = _mm256_add_pd(ylogx, shift);
  const __m256i ki = _mm256_castpd_si256(kd);
  kd = _mm256_sub_pd(kd, shift);
  const __m256d rr = _mm256_sub_pd(ylogx, kd);
  const __m256i index = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
  __m256i t = _mm256_i64gather_epi64(reinterpret_cast<const long long*>(kExp2Table), index, 8);
  t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
  const __m256d s = _mm256_castsi256_pd(t);
  const __m256d zz = _mm256_fmadd_pd(rr, _mm256_set1_pd(kExp2Poly[0]), _mm256_set1_pd(kExp2Poly[1]));
  const __m256d rr2 = _mm256_mul_pd(rr, rr);
  __m256d e = _mm256_fmadd_pd(rr, _mm256_set1_pd(kExp2Poly[2]), _mm256_set1_pd(1.0));
  e = _mm256_fmadd_pd(zz, rr2, e);
  e = _mm256_mul_pd(e, s);
  return _mm256_cvtpd_ps(e);
}

void EightLanes(const float* x, float y, float* out, int64_t n, uint8_t* slow) {
  const __m256d yd = _mm256_set1_pd(static_cast<double>(y));
  for (int64_t at = 0; at + 8 <= n; at += 8) {
    const __m256i ix = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + at));
    // ix - 0x00800000 >= 0x7f800000 - 0x00800000, unsigned: not a positive normal.
    const __m256i shifted = _mm256_sub_epi32(ix, _mm256_set1_epi32(0x00800000));
    const __m256i special = _mm256_cmpgt_epi32(_mm256_xor_si256(shifted, _mm256_set1_epi32(INT32_MIN)),
                                               _mm256_set1_epi32(static_cast<int>(0x7effffffu ^ 0x80000000u)));
    __m128i slow_low, slow_high;
    const __m128 low = FourLanes(_mm256_castsi256_si128(ix), yd, &slow_low);
    const __m128 high = FourLanes(_mm256_extracti128_si256(ix, 1), yd, &slow_high);
    _mm256_storeu_ps(out + at, _mm256_set_m128(high, low));
    const __m256i all_slow = _mm256_or_si256(special, _mm256_set_m128i(slow_high, slow_low));
    slow[at / 8] = static_cast<uint8_t>(_mm256_movemask_ps(_mm256_castsi256_ps(all_slow)));
  }
  _mm256_zeroupper();
}

}  // namespace glibc_powf
}  // namespace cpu
}  // namespace tfrun
