// float32/float64 MatMul built for AVX2+FMA, used when the CPU has them
// (the binary stays portable: the generic Eigen build remains the fallback):
// float32 through the packed Sgemm (sgemm_avx2.h), float64 through Eigen.
#pragma once

#include <cstdint>

namespace tfrun {
namespace avx2 {

// True when this CPU runs AVX2 and FMA.
bool Available();

// out[m, n] = op(a) * op(b), row-major, op = transpose when the flag is set;
// `a` is a_rows x a_cols as stored, likewise `b`.
void MatMulF32(const float* a, int64_t a_rows, int64_t a_cols, bool transpose_a, const float* b, int64_t b_rows,
               int64_t b_cols, bool transpose_b, float* out, int threads);
void MatMulF64(const double* a, int64_t a_rows, int64_t a_cols, bool transpose_a, const double* b, int64_t b_rows,
               int64_t b_cols, bool transpose_b, double* out, int threads);

}  // namespace avx2
}  // namespace tfrun
