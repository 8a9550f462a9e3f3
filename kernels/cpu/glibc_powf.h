// float pow as the C library computes it, eight at a time: glibc 2.28's
// powf (from Arm's optimized-routines, unchanged since), in the form its
// x86-64 build runs on a processor with FMA (__powf_fma: its fused
// multiply-adds where the compiler fused them, read from the disassembly).
// TensorFlow's LRNGrad calls std::pow once per element, and tfrun's
// LRNGrad spent most of its time there. Lanes outside powf's fast path
// (x not a positive normal number, |y log2 x| >= 126) take the library's
// own powf.
#pragma once

#include <cstdint>

namespace tfrun {
namespace cpu {

// out[i] = std::pow(x[i], y) for i < n, to the bit: the packet form where
// GlibcPowfPacketsMatch(), the C library's powf one by one elsewhere.
// `out` and `x` must not overlap.
void PowfLikeGlibc(const float* x, float y, float* out, int64_t n);

// Whether the packet form runs: the processor has AVX2 and FMA and, on
// values across powf's range and several exponents, the packet form gave
// this process's std::pow bits (checked once; another C library, or a
// glibc that changed its powf, fails it and keeps the library's).
bool GlibcPowfPacketsMatch();

namespace glibc_powf {
// The packet form (glibc_powf_avx2.cc; only where the processor has AVX2
// and FMA): out[i] for i < n - n % 8, and bit l of slow[i / 8] set where
// element i = 8 * (i / 8) + l left the fast path and must come from the
// library's powf instead.
void EightLanes(const float* x, float y, float* out, int64_t n, uint8_t* slow);
}  // namespace glibc_powf

}  // namespace cpu
}  // namespace tfrun
