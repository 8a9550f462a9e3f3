// The packet forms of tf_float_math.cc's scalar functions, written once
// over a vector type: SSE2's four lanes (tf_float_math.cc) and AVX2's eight
// (tf_float_math_avx2.cc, chosen at run time). Each step is the scalar
// function's step, rounded on its own (both files are built with
// -ffp-contract=off and without FMA), so a lane gives the scalar form's
// bits however many lanes there are (tf_float_math_test compares them).
//
// `S` gives the vector types V (floats) and VI (int32s) and the operations
// below, each one instruction of its instruction set. Templates only: an
// instantiation is its S's own, so the AVX2 build shares no code with the
// SSE one (matmul_avx2.h says why that matters). Include no library header
// here.
#pragma once

namespace tfrun {
namespace cpu {
namespace packets {

template <class S>
typename S::V MulAdd(typename S::V a, typename S::V b, typename S::V c) {
  return S::Add(S::Mul(a, b), c);  // rounded twice
}

// std::floor for |v| < 2^31; other lanes get a finite value the callers
// never let reach their result (see Exp).
template <class S>
typename S::V Floor(typename S::V v) {
  const typename S::V truncated = S::ToFloat(S::Truncate(v));
  return S::Sub(truncated, S::And(S::Greater(truncated, v), S::Splat(1.0f)));
}

// 2^e as float bits, e already biased.
template <class S>
typename S::V PowerOfTwoBits(typename S::VI biased) {
  return S::BitsToFloat(S::ShiftLeft23(biased));
}

// pldexp_fast: a * 2^m with the biased exponent clamped to [0, 255].
template <class S>
typename S::V LdexpFast(typename S::V a, typename S::V m) {
  const typename S::V clamped = S::Min(S::Max(S::Add(m, S::Splat(127.0f)), S::Splat(0.0f)), S::Splat(255.0f));
  return S::Mul(a, PowerOfTwoBits<S>(S::Truncate(clamped)));
}

// pldexp_generic: a * 2^m in four factors.
template <class S>
typename S::V LdexpGeneric(typename S::V a, typename S::V m) {
  using VI = typename S::VI;
  const VI e = S::Truncate(S::Min(S::Max(m, S::Splat(-278.0f)), S::Splat(278.0f)));
  VI b = S::ShiftRightArithmetic2(e);
  const typename S::V factor = PowerOfTwoBits<S>(S::AddI(b, S::SplatI(127)));
  typename S::V out = S::Mul(S::Mul(S::Mul(a, factor), factor), factor);
  b = S::SubI(e, S::AddI(S::AddI(b, b), b));
  return S::Mul(out, PowerOfTwoBits<S>(S::AddI(b, S::SplatI(127))));
}

// ptanh_float without FMA: a [9/8] rational on [-c, c].
template <class S>
typename S::V Tanh(typename S::V a) {
  using V = typename S::V;
  const float c = 7.90738964080810547f;
  const V x = S::Max(S::Min(a, S::Splat(c)), S::Splat(-c));
  const V x2 = S::Mul(x, x);
  const V x3 = S::Mul(x2, x);
  V p = S::Splat(1.394553628e-8f);
  p = MulAdd<S>(p, x2, S::Splat(2.102733560e-5f));
  p = MulAdd<S>(p, x2, S::Splat(3.520756727e-3f));
  p = MulAdd<S>(p, x2, S::Splat(1.340216100e-1f));
  V q = S::Splat(8.015776984e-7f);
  q = MulAdd<S>(q, x2, S::Splat(3.326951409e-4f));
  q = MulAdd<S>(q, x2, S::Splat(2.597254514e-2f));
  q = MulAdd<S>(q, x2, S::Splat(4.673548340e-1f));
  q = MulAdd<S>(q, x2, S::Splat(1.0f));
  p = MulAdd<S>(x3, p, x);
  return S::Div(p, q);
}

// scalar_logistic_op<float>::packetOp: exp(x/2) squared, then e / (1 + e).
template <class S>
typename S::V Sigmoid(typename S::V a) {
  using V = typename S::V;
  const V zero = S::Less(a, S::Splat(-104.0f));
  V x = S::Min(a, S::Splat(16.6355324f));
  x = S::Mul(x, S::Splat(0.5f));
  // For a lane below -104, m is whatever Floor gives: the lane's result is 0.
  const V m = Floor<S>(MulAdd<S>(x, S::Splat(1.44269504088896341f), S::Splat(0.5f)));
  V r = MulAdd<S>(m, S::Splat(-0.693359375f), x);
  r = MulAdd<S>(m, S::Splat(2.12194440e-4f), r);
  const V r2 = S::Mul(r, r);
  const V p_even = MulAdd<S>(r2, S::Splat(4.1898667812347412109375e-2f), S::Splat(0.49999141693115234375f));
  const V p_odd = MulAdd<S>(r2, S::Splat(8.33471305668354034423828125e-3f), S::Splat(0.16666877269744873046875f));
  const V p_low = S::Add(r, S::Splat(1.0f));
  V p = MulAdd<S>(r, p_odd, p_even);
  p = MulAdd<S>(r2, p, p_low);
  V e = LdexpFast<S>(p, m);
  e = S::Mul(e, e);
  return S::AndNot(zero, S::Div(e, S::Add(S::Splat(1.0f), e)));
}

// pexp_float: Cephes' range reduction and a degree-6 polynomial; the
// four-factor ldexp per lane where |x| > 87 (Eigen picks it per packet,
// which gives every other lane the same value).
template <class S>
typename S::V Exp(typename S::V a) {
  using V = typename S::V;
  const V zero = S::Less(a, S::Splat(-104.0f));
  const V x = S::Min(a, S::Splat(88.723f));
  // Floor is exact for every x above -104; below it the lane is 0 either way.
  const V m = Floor<S>(MulAdd<S>(x, S::Splat(1.44269504088896341f), S::Splat(0.5f)));
  V r = MulAdd<S>(m, S::Splat(-0.693359375f), x);
  r = MulAdd<S>(m, S::Splat(2.12194440e-4f), r);
  const V r2 = S::Mul(r, r);
  V p_even = MulAdd<S>(r2, S::Splat(1.37449637986719608306884765625e-3f), S::Splat(4.166965186595916748046875e-2f));
  const V p_odd = MulAdd<S>(r2, S::Splat(8.36894474923610687255859375e-3f), S::Splat(0.16666518151760101318359375f));
  p_even = MulAdd<S>(r2, p_even, S::Splat(0.49999988079071044921875f));
  const V p_low = S::Add(r, S::Splat(1.0f));
  V y = MulAdd<S>(r, p_odd, p_even);
  y = MulAdd<S>(r2, y, p_low);
  const V large = S::Greater(S::Abs(x), S::Splat(87.0f));
  const V fast = S::Max(LdexpFast<S>(y, m), a);
  const V generic = S::AndNot(zero, S::Max(LdexpGeneric<S>(y, m), a));
  return S::Select(large, generic, fast);
}

// plog_float: frexp, the mantissa moved to [sqrt(1/2), sqrt(2)) - 1, a
// [3/3] rational for log(1 + x), plus e ln 2.
template <class S>
typename S::V Log(typename S::V a) {
  using V = typename S::V;
  using VI = typename S::VI;
  const V denormal = S::Less(S::Abs(a), S::Splat(1.17549435e-38f));
  const V normalized = S::Select(denormal, S::Mul(a, S::Splat(16777216.0f)), a);
  const V offset = S::Select(denormal, S::Splat(-150.0f), S::Splat(-126.0f));
  const VI bits = S::FloatToBits(normalized);
  const V biased = S::ToFloat(S::AndI(S::ShiftRightLogical23(bits), S::SplatI(0xff)));
  const V zero_or_not_finite = S::Or(S::Equal(a, S::Splat(0.0f)), S::Equal(biased, S::Splat(255.0f)));
  const V fraction = S::BitsToFloat(
      S::OrI(S::AndI(bits, S::SplatI(static_cast<int>(0x807fffffu))), S::SplatI(0x3f000000)));
  const V mantissa = S::Select(zero_or_not_finite, a, fraction);
  V e = S::Select(zero_or_not_finite, S::Splat(0.0f), S::Add(biased, offset));
  const V below = S::Less(mantissa, S::Splat(0.707106781186547524f));
  V x = S::Sub(mantissa, S::Splat(1.0f));
  e = S::Sub(e, S::And(below, S::Splat(1.0f)));
  x = S::Add(x, S::And(below, mantissa));
  V p = S::Splat(0.18256296349849254f);
  p = MulAdd<S>(p, x, S::Splat(1.0000000190281063f));
  p = MulAdd<S>(p, x, S::Splat(1.0000000190281136f));
  p = S::Mul(x, p);
  V q = S::Splat(0.049616247954120038f);
  q = MulAdd<S>(q, x, S::Splat(0.59923249590823520f));
  q = MulAdd<S>(q, x, S::Splat(1.4999999999999927f));
  q = MulAdd<S>(q, x, S::Splat(1.0f));
  x = S::Div(p, q);
  x = MulAdd<S>(e, S::Splat(0.693147182f), x);
  const V infinity = S::Splat(__builtin_inff());
  x = S::Select(S::Equal(a, infinity), infinity, x);
  const V nan = S::Or(S::Less(a, S::Splat(0.0f)), S::Unordered(a, a));
  x = S::Or(x, nan);  // por with an all-ones mask
  return S::Select(S::Equal(a, S::Splat(0.0f)), S::Splat(-__builtin_inff()), x);
}

// Packets of S's lanes over [begin, end) (end - begin a multiple of the
// lane count): `Packet` one of the functions above.
template <class S, typename S::V (*Packet)(typename S::V)>
void ApplyPackets(const float* in, float* out, long begin, long end) {
  for (long i = begin; i < end; i += S::kLanes) S::Store(out + i, Packet(S::Load(in + i)));
}

// LaunchLRNGrad's sums (lrn_op.cc) for outputs k in [begin, end), end -
// begin a multiple of S::kLanes: out[k] is the sum, over j from k - radius
// to k + radius in ascending order, of ((x[k] * scale[j]) / norm[j] (+
// power[j] where j == k)) * grad[j], each step rounded, from 0, leaving out
// every j whose grad is zero (TensorFlow skips them). The j-indexed arrays
// are padded by `radius` on both sides (j's value at index j + radius),
// their padding's grad 0. A left-out term adds +0 here: the sum starts at
// +0 and so is never -0, and s + 0 is s.
template <class S>
void LrnGradientSums(const float* x, const float* scale, const float* norm, const float* power, const float* grad,
                     long radius, float* out, long begin, long end) {
  using V = typename S::V;
  const V zero = S::Splat(0.0f);
  for (long k = begin; k < end; k += S::kLanes) {
    const V xk = S::Load(x + k);
    V sum = zero;
    for (long d = 0; d <= 2 * radius; ++d) {  // j = k - radius + d, at index k + d
      const long at = k + d;
      V term = S::Div(S::Mul(xk, S::Load(scale + at)), S::Load(norm + at));
      if (d == radius) term = S::Add(term, S::Load(power + at));
      const V g = S::Load(grad + at);
      term = S::Mul(term, g);
      sum = S::Add(sum, S::AndNot(S::Equal(g, zero), term));
    }
    S::Store(out + k, sum);
  }
}

}  // namespace packets
}  // namespace cpu
}  // namespace tfrun
