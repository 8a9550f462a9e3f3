// sgemm_avx2.h's GEMM with a 6 x 32 micro-tile of AVX-512 registers,
// for processors with AVX-512F (chosen at run time, matmul_avx2_generic.cc):
// the same blocks and, per element, the same fused multiply-adds in the
// same order as the AVX2 build, so the same bits at twice the lanes.
// Compiled with -mavx512f -mfma; the same rule as sgemm_avx2.cc: no
// library template code of its own (matmul_avx2.h).
#include "kernels/cpu/sgemm_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/base/host_memory.h"

namespace tfrun {
namespace avx512 {
using avx2::MatrixView;
namespace {

constexpr int kMr = 6;    // micro-tile rows: 12 accumulators + 2 B vectors + 1 broadcast of 32 zmm
constexpr int kNr = 32;   // micro-tile columns: two 16-float vectors
constexpr int64_t kKc = 512;  // sgemm_avx2.cc's: it decides each element's sums
constexpr int64_t kMc = 72;
constexpr int64_t kNc = 4064;  // a multiple of kNr

// c[0:rows, 0:cols] = (accumulate ? c : 0) + a_panel * b_panel over kc,
// sgemm_avx2.cc's MicroKernel sixteen lanes a vector.
void MicroKernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate, int rows,
                 int cols) {
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int i = 0; i < rows; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + cols - 1), _MM_HINT_T0);
  }
#pragma GCC unroll 8
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = _mm512_load_ps(b + 16);
    __m512 x = _mm512_set1_ps(a[0]);
    c00 = _mm512_fmadd_ps(x, b0, c00);
    c01 = _mm512_fmadd_ps(x, b1, c01);
    x = _mm512_set1_ps(a[1]);
    c10 = _mm512_fmadd_ps(x, b0, c10);
    c11 = _mm512_fmadd_ps(x, b1, c11);
    x = _mm512_set1_ps(a[2]);
    c20 = _mm512_fmadd_ps(x, b0, c20);
    c21 = _mm512_fmadd_ps(x, b1, c21);
    x = _mm512_set1_ps(a[3]);
    c30 = _mm512_fmadd_ps(x, b0, c30);
    c31 = _mm512_fmadd_ps(x, b1, c31);
    x = _mm512_set1_ps(a[4]);
    c40 = _mm512_fmadd_ps(x, b0, c40);
    c41 = _mm512_fmadd_ps(x, b1, c41);
    x = _mm512_set1_ps(a[5]);
    c50 = _mm512_fmadd_ps(x, b0, c50);
    c51 = _mm512_fmadd_ps(x, b1, c51);
    a += kMr;
    b += kNr;
  }
  const __m512 acc[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (rows == kMr && cols == kNr) {
    for (int i = 0; i < kMr; ++i) {
      float* row = c + i * ldc;
      __m512 v0 = acc[i][0], v1 = acc[i][1];
      if (accumulate) {
        v0 = _mm512_add_ps(v0, _mm512_loadu_ps(row));
        v1 = _mm512_add_ps(v1, _mm512_loadu_ps(row + 16));
      }
      _mm512_storeu_ps(row, v0);
      _mm512_storeu_ps(row + 16, v1);
    }
    return;
  }
  alignas(64) float tile[kMr * kNr];
  for (int i = 0; i < kMr; ++i) {
    _mm512_store_ps(tile + i * kNr, acc[i][0]);
    _mm512_store_ps(tile + i * kNr + 16, acc[i][1]);
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * kNr + j] : tile[i * kNr + j];
    }
  }
}

}  // namespace

#include "kernels/cpu/sgemm_blocked.inc"

}  // namespace avx512
}  // namespace tfrun
