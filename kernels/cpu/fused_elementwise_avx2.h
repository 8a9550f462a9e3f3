// fused_elementwise.cc's loops eight lanes at a time, built for AVX2
// without fused multiply-add (-mavx2 -ffp-contract=off): the same bits as
// the generic build. Call only where the processor has AVX2.
#pragma once

#include <cstdint>

namespace tfrun {
namespace cpu {

// What a term computes: x + y, x - y or x * y.
enum class TermOp : char { kAdd, kSub, kMul };

}  // namespace cpu

namespace avx2 {

// fused_elementwise_loops.h's Combine and Descend.
void CombineLoop(cpu::TermOp op, const float* x, const float* sx, const float* y, const float* sy, int64_t len,
                 float* out);
void DescentLoop(float* var, const float* delta, float alpha, int64_t len);

}  // namespace avx2
}  // namespace tfrun
