// A packed float32 GEMM for AVX2+FMA CPUs (the BLIS/GotoBLAS design: B
// packed into kc x 16 panels that stay in L1, A into 6 x kc panels from L2,
// a 6x16 register-tile micro-kernel). It reaches OpenBLAS's speed where
// Eigen's contraction stopped 7% short (bench/RESULTS.md). Compiled with
// -mavx2 -mfma; call only when avx2::Available().
#pragma once

#include <cstdint>

namespace tfrun {
namespace avx2 {

// A strided matrix view: element (i, j) is data[i * row_stride +
// j * col_stride], so a transpose is a view with the strides swapped.
template <typename T>
struct Strided {
  const T* data;
  int64_t row_stride;
  int64_t col_stride;
};
using MatrixView = Strided<float>;

// c[m, n] (row-major, row stride ldc) = a[m, k] * b[k, n], on this thread.
// Each element sums over k in order within 512-wide blocks, with FMA.
void Sgemm(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, float* c, int64_t ldc);

}  // namespace avx2
}  // namespace tfrun
