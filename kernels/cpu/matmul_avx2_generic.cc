// The parts of matmul_avx2.h built without -mavx2 (see there).
#include <algorithm>
#include <thread>

#include "core/base/parallel.h"
#include "kernels/cpu/matmul_avx2.h"

namespace tfrun {
namespace avx2 {
namespace {

// Below this many multiply-adds one thread is faster than handing out work.
constexpr int64_t kParallelWork = int64_t{1} << 18;

// Splits the output into one slab per thread (whole micro-tiles), each a
// separate single-threaded `gemm`; slabs share no output.
template <typename T, typename Gemm>
void ParallelGemm(int64_t m, int64_t n, int64_t k, Strided<T> a, Strided<T> b, T* out, int threads, Gemm gemm) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int parts = m * n * k < kParallelWork ? 1 : threads > 0 ? threads : cores;
  // Column slabs measured faster than row slabs on square products (each
  // thread packs a narrower B); rows when the columns are too few to share.
  const bool split_rows = n < 128 * parts && m > n;
  const int64_t extent = split_rows ? m : n;
  const int64_t unit = split_rows ? 6 : 16;
  const int64_t per = ((extent + parts - 1) / parts + unit - 1) / unit * unit;
  const int64_t slabs = (extent + per - 1) / per;
  ParallelFor(
      slabs,
      [&](int64_t first, int64_t last) {
        for (int64_t s = first; s < last; ++s) {
          const int64_t begin = s * per, size = std::min(per, extent - begin);
          if (split_rows) {
            gemm(size, n, k, Strided<T>{a.data + begin * a.row_stride, a.row_stride, a.col_stride}, b,
                 out + begin * n, n);
          } else {
            gemm(m, size, k, a, Strided<T>{b.data + begin * b.col_stride, b.row_stride, b.col_stride}, out + begin,
                 n);
          }
        }
      },
      1, parts);
}

template <typename T, typename Gemm>
void MatMul(const T* a, int64_t a_rows, int64_t a_cols, bool ta, const T* b, int64_t b_rows, int64_t b_cols, bool tb,
            T* out, int threads, Gemm gemm) {
  const int64_t m = ta ? a_cols : a_rows, k = ta ? a_rows : a_cols, n = tb ? b_rows : b_cols;
  const Strided<T> va = ta ? Strided<T>{a, 1, a_cols} : Strided<T>{a, a_cols, 1};
  const Strided<T> vb = tb ? Strided<T>{b, 1, b_cols} : Strided<T>{b, b_cols, 1};
  ParallelGemm(m, n, k, va, vb, out, threads, gemm);
}

}  // namespace

bool Available() {
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return available;
}

void MatMulF32(const float* a, int64_t a_rows, int64_t a_cols, bool ta, const float* b, int64_t b_rows,
               int64_t b_cols, bool tb, float* out, int threads) {
  MatMul(a, a_rows, a_cols, ta, b, b_rows, b_cols, tb, out, threads, Sgemm);
}

void MatMulF64(const double* a, int64_t a_rows, int64_t a_cols, bool ta, const double* b, int64_t b_rows,
               int64_t b_cols, bool tb, double* out, int threads) {
  MatMul(a, a_rows, a_cols, ta, b, b_rows, b_cols, tb, out, threads, Dgemm);
}

}  // namespace avx2
}  // namespace tfrun
