// TensorFlow 2.21's float32 Tanh, Sigmoid, Exp and Log on x86, to the bit.
//
// TensorFlow evaluates them with its own Eigen (newer than Debian's 3.4)
// built for AVX without FMA. Its tensor executor takes the elements in
// whole packets of 8 through Eigen's packet approximations
// (GenericPacketMathFunctions.h ptanh_float, pexp_float, plog_float;
// UnaryFunctors.h scalar_logistic_op<float>::packetOp) and the n % 8
// elements after the last whole packet through the scalar path: the same
// rational for tanh, glibc's expf and logf, and e / (1 + e) with e = expf(x)
// for the logistic. Threads split the range at multiples of 8, so the
// split never changes a value. Measured against TensorFlow 2.21 on 42,000
// values and every length 1 to 33 (DERIVATIONS.md); denormals are flushed
// as TensorFlow flushes them only when the caller runs under
// ScopedFlushDenormal (the executor does).
#pragma once

#include <cstdint>

namespace tfrun {
namespace cpu {

enum class TfFloatFunction { kTanh, kSigmoid, kExp, kLog, kReciprocal, kRsqrt };

// out[i] = f(in[i]) for i < n, as TensorFlow computes it (in == out allowed).
void ApplyTfFloatFunction(TfFloatFunction f, const float* in, float* out, int64_t n);

// The same for i in [begin, end) only, with the values the call over all n
// elements gives them (which take the packet path depends on n), on this
// thread: for a kernel that fuses the function into its own parallel pass.
void ApplyTfFloatFunctionPart(TfFloatFunction f, const float* in, float* out, int64_t begin, int64_t end,
                              int64_t n);

// ApplyTfFloatFunction one element at a time, single-threaded: the
// reference its packet code is tested against.
void ApplyTfFloatFunctionOneByOne(TfFloatFunction f, const float* in, float* out, int64_t n);

// LRNGrad's sums for one depth vector (LaunchLRNGrad, lrn_op.cc): for
// every k < depth, out[k] = the sum over j from k - radius to k + radius
// within [0, depth), ascending, of ((x[k] * scale[j]) / norm[j], plus
// power[j] where j == k) * grad[j], each operation rounded, from 0, with
// the j whose grad is zero left out, as TensorFlow's loop computes it.
// scale, norm, power and grad are indexed j + radius, depth + 2 * radius
// long; the caller fills their padding with grad 0 (any other values). In
// packets where the processor has them, each lane the scalar's bits.
void LrnGradientSums(const float* x, const float* scale, const float* norm, const float* power, const float* grad,
                     int64_t depth, int64_t radius, float* out);

// The packet code's lanes: 8 where the processor has AVX2, else 4 (SSE2).
int TfFloatPacketLanes();
// For tests: 4 runs the SSE2 forms on any processor; 0 restores the choice.
void SetTfFloatPacketLanesForTesting(int lanes);

}  // namespace cpu
}  // namespace tfrun
