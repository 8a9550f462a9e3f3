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

// A thread's packing buffer, kept for its next call. A type of its own,
// not a std::unique_ptr: this AVX2 file must emit no library template code
// that the linker could share with generic files (matmul_avx2.h).
struct Scratch {
  float* data = nullptr;
  size_t capacity = 0;
  ~Scratch() { std::free(data); }
  float* Reserve(size_t floats) {
    if (capacity < floats) {
      std::free(data);
      data = static_cast<float*>(AllocateHostBytes(floats * sizeof(float)));  // huge pages from 4 MiB
      capacity = floats;
    }
    return data;
  }
};

// a[0:mc, 0:kc] into kMr-row panels, each stored k-major (kMr values per
// k), zero-padded to whole panels.
void PackA(MatrixView a, int64_t mc, int64_t kc, float* dst) {
  for (int64_t i = 0; i < mc; i += kMr) {
    const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - i));
    const float* src = a.data + i * a.row_stride;
    if (rows == kMr && a.col_stride == 1) {
      const int64_t rs = a.row_stride;
      for (int64_t p = 0; p < kc; ++p) {
        dst[0] = src[p];
        dst[1] = src[rs + p];
        dst[2] = src[2 * rs + p];
        dst[3] = src[3 * rs + p];
        dst[4] = src[4 * rs + p];
        dst[5] = src[5 * rs + p];
        dst += kMr;
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      int r = 0;
      for (; r < rows; ++r) dst[r] = src[r * a.row_stride + p * a.col_stride];
      for (; r < kMr; ++r) dst[r] = 0;
      dst += kMr;
    }
  }
}

// b[0:kc, 0:nc] into kNr-column panels, each stored k-major, zero-padded.
void PackB(MatrixView b, int64_t kc, int64_t nc, float* dst) {
  for (int64_t j = 0; j < nc; j += kNr) {
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - j));
    const float* src = b.data + j * b.col_stride;
    if (cols == kNr && b.col_stride == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        _mm256_store_ps(dst, _mm256_loadu_ps(src + p * b.row_stride));
        _mm256_store_ps(dst + 8, _mm256_loadu_ps(src + p * b.row_stride + 8));
        dst += kNr;
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      int col = 0;
      for (; col < cols; ++col) dst[col] = src[p * b.row_stride + col * b.col_stride];
      for (; col < kNr; ++col) dst[col] = 0;
      dst += kNr;
    }
  }
}

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

void Sgemm(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  thread_local Scratch a_buffer, b_buffer;
  const int64_t kc_max = std::min(kKc, k);
  float* packed_a = a_buffer.Reserve(static_cast<size_t>(kMc * kc_max));
  const int64_t nc_max = (std::min(kNc, n) + kNr - 1) / kNr * kNr;
  float* packed_b = b_buffer.Reserve(static_cast<size_t>(kc_max * nc_max));
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      PackB({b.data + pc * b.row_stride + jc * b.col_stride, b.row_stride, b.col_stride}, kc, nc, packed_b);
      for (int64_t ic = 0; ic < m; ic += kMc) {
        const int64_t mc = std::min(kMc, m - ic);
        PackA({a.data + ic * a.row_stride + pc * a.col_stride, a.row_stride, a.col_stride}, mc, kc, packed_a);
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            MicroKernel(kc, packed_a + ir * kc, packed_b + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc, pc > 0,
                        static_cast<int>(std::min<int64_t>(kMr, mc - ir)),
                        static_cast<int>(std::min<int64_t>(kNr, nc - jr)));
          }
        }
      }
    }
  }
}

}  // namespace avx2
}  // namespace tfrun
