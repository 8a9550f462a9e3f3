// tf_float_math.cc's packet functions eight lanes at a time, built for AVX2
// without fused multiply-add (-mavx2 -ffp-contract=off): each lane the
// four-lane form's bits (tf_float_packets.h). Call only where the
// processor has AVX2. No library templates: nothing inline from here may
// stand in for the generic build's (matmul_avx2.h says why).
#pragma once

#include <cstdint>

#include "kernels/cpu/tf_float_math.h"

namespace tfrun {
namespace avx2 {

// out[i] = f(in[i]) for i in [begin, end), end - begin a multiple of 8, by
// tf_float_packets.h's form of f (tanh, sigmoid, exp, log; the others have
// none and are left alone).
void ApplyTfFloatPackets(cpu::TfFloatFunction f, const float* in, float* out, int64_t begin, int64_t end);

// packets::LrnGradientSums eight lanes at a time (tf_float_math.h's
// LrnGradientSums says what it computes).
void LrnGradientSums(const float* x, const float* scale, const float* norm, const float* power, const float* grad,
                     int64_t radius, float* out, int64_t begin, int64_t end);

}  // namespace avx2
}  // namespace tfrun
