#include "kernels/cpu/sgemm_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/base/host_memory.h"

namespace tfrun {
namespace avx2 {
namespace {

constexpr int kMr = 6;    // micro-tile rows: 12 accumulators + 2 B vectors + 1 broadcast = 15 of 16 ymm
constexpr int kNr = 16;   // micro-tile columns: two 8-float vectors
// Block sizes measured on the 2-core EPYC of bench/RESULTS.md (32 KiB L1d,
// 512 KiB L2 per core): a 512 x 72 A block is 144 KiB of L2, a 512 x 16 B
// panel 32 KiB; a longer kc halves the passes over C at 2048.
constexpr int64_t kKc = 512;
constexpr int64_t kMc = 72;   // a multiple of kMr
constexpr int64_t kNc = 4080; // a multiple of kNr

// c[0:rows, 0:cols] = (accumulate ? c : 0) + a_panel * b_panel over kc.
void MicroKernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate, int rows,
                 int cols) {
  // Twelve named accumulators, not an array: an array stays in registers
  // only if the compiler happens to inline this function, and spilled it
  // runs at a third of the speed.
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  // C's rows are a page apart at large n; touch them while the loop runs.
  for (int i = 0; i < rows; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + cols - 1), _MM_HINT_T0);
  }
  // Unrolled 8 deep, with no software prefetch of the packed panels (both
  // measured faster: the hardware prefetcher follows the sequential panels).
#pragma GCC unroll 8
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
    __m256 x = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(x, b0, c00);
    c01 = _mm256_fmadd_ps(x, b1, c01);
    x = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(x, b0, c10);
    c11 = _mm256_fmadd_ps(x, b1, c11);
    x = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(x, b0, c20);
    c21 = _mm256_fmadd_ps(x, b1, c21);
    x = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(x, b0, c30);
    c31 = _mm256_fmadd_ps(x, b1, c31);
    x = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(x, b0, c40);
    c41 = _mm256_fmadd_ps(x, b1, c41);
    x = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(x, b0, c50);
    c51 = _mm256_fmadd_ps(x, b1, c51);
    a += kMr;
    b += kNr;
  }
  const __m256 acc[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (rows == kMr && cols == kNr) {
    for (int i = 0; i < kMr; ++i) {
      float* row = c + i * ldc;
      __m256 v0 = acc[i][0], v1 = acc[i][1];
      if (accumulate) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(row));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(row + 8));
      }
      _mm256_storeu_ps(row, v0);
      _mm256_storeu_ps(row + 8, v1);
    }
    return;
  }
  alignas(32) float tile[kMr * kNr];
  for (int i = 0; i < kMr; ++i) {
    _mm256_store_ps(tile + i * kNr, acc[i][0]);
    _mm256_store_ps(tile + i * kNr + 8, acc[i][1]);
  }
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * kNr + j] : tile[i * kNr + j];
    }
  }
}

}  // namespace

#include "kernels/cpu/sgemm_blocked.inc"

}  // namespace avx2
}  // namespace tfrun
