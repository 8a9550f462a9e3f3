// MatMul for CPUs with AVX2 and FMA, used when the CPU has them (the binary
// stays portable: the generic Eigen build remains the fallback): float32
// through the packed Sgemm (sgemm_avx2.h), float64 through Eigen's product.
//
// Only the single-threaded GEMMs are built with -mavx2 (matmul_avx2.cc,
// sgemm_avx2.cc). Available() and the split across threads are built
// without it (matmul_avx2_generic.cc): the check must run on any CPU, and
// the inline library code that threads need (std::function, std::thread)
// must never come from an AVX2 object, where the linker could pick it for
// the whole program.
#pragma once

#include <cstdint>

#include "kernels/cpu/sgemm_avx2.h"

namespace tfrun {
namespace avx2 {

// True when this CPU runs AVX2 and FMA.
bool Available();

// out[m, n] = op(a) * op(b), row-major, op = transpose when the flag is set;
// `a` is a_rows x a_cols as stored, likewise `b`. Split across `threads`
// (0: one per core) when large.
void MatMulF32(const float* a, int64_t a_rows, int64_t a_cols, bool transpose_a, const float* b, int64_t b_rows,
               int64_t b_cols, bool transpose_b, float* out, int threads);
void MatMulF64(const double* a, int64_t a_rows, int64_t a_cols, bool transpose_a, const double* b, int64_t b_rows,
               int64_t b_cols, bool transpose_b, double* out, int threads);

// c[m, n] (row-major, row stride ldc) = a[m, k] * b[k, n] with Eigen's
// product, on this thread; the float64 counterpart of Sgemm.
void Dgemm(int64_t m, int64_t n, int64_t k, Strided<double> a, Strided<double> b, double* c, int64_t ldc);

}  // namespace avx2
}  // namespace tfrun
