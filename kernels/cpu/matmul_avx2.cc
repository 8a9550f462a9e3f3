// Compiled with -mavx2 -mfma (kernels/BUILD). Eigen's namespace is renamed
// in this file so its AVX2 template instantiations can never be merged by
// the linker with the generic ones of other files (an ODR hazard that could
// run AVX2 code on a CPU without it). Nothing here may include a header
// that names Eigen types shared with other files.
#define Eigen tfrun_eigen_avx2
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include "kernels/cpu/matmul_avx2.h"

#include "core/parallel.h"
#include "kernels/cpu/sgemm_avx2.h"

#include <algorithm>
#include <thread>

namespace tfrun {
namespace avx2 {
namespace {

// Below this many multiply-adds one thread is faster than handing out work.
constexpr int64_t kParallelWork = int64_t{1} << 18;

const Eigen::ThreadPoolDevice& Pool(int threads) {
  static int n = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  static auto* pool = new Eigen::ThreadPool(n);
  static auto* device = new Eigen::ThreadPoolDevice(pool, n);
  return *device;
}

template <typename T>
void MatMul(const T* a, int64_t a_rows, int64_t a_cols, bool ta, const T* b, int64_t b_rows, int64_t b_cols, bool tb,
            T* out, int threads) {
  using ConstMatrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>, Eigen::Aligned>;
  using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>, Eigen::Aligned>;
  ConstMatrix ma(a, a_rows, a_cols);
  ConstMatrix mb(b, b_rows, b_cols);
  const int64_t m = ta ? a_cols : a_rows, k = ta ? a_rows : a_cols, n = tb ? b_rows : b_cols;
  Matrix mo(out, m, n);
  Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> dims;
  dims[0] = Eigen::IndexPair<Eigen::Index>(ta ? 0 : 1, tb ? 1 : 0);
  if (m * n * k >= kParallelWork) {
    mo.device(Pool(threads)) = ma.contract(mb, dims);
  } else {
    mo = ma.contract(mb, dims);
  }
}

// Splits the output into one slab per thread (whole micro-tiles), each a
// separate Sgemm; slabs share no output.
void ParallelSgemm(int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, float* out, int threads) {
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
            Sgemm(size, n, k, {a.data + begin * a.row_stride, a.row_stride, a.col_stride}, b, out + begin * n, n);
          } else {
            Sgemm(m, size, k, a, {b.data + begin * b.col_stride, b.row_stride, b.col_stride}, out + begin, n);
          }
        }
      },
      1, parts);
}

}  // namespace

bool Available() {
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return available;
}

void MatMulF32(const float* a, int64_t a_rows, int64_t a_cols, bool ta, const float* b, int64_t b_rows,
               int64_t b_cols, bool tb, float* out, int threads) {
  const int64_t m = ta ? a_cols : a_rows, k = ta ? a_rows : a_cols, n = tb ? b_rows : b_cols;
  const MatrixView va = ta ? MatrixView{a, 1, a_cols} : MatrixView{a, a_cols, 1};
  const MatrixView vb = tb ? MatrixView{b, 1, b_cols} : MatrixView{b, b_cols, 1};
  ParallelSgemm(m, n, k, va, vb, out, threads);
}

void MatMulF64(const double* a, int64_t a_rows, int64_t a_cols, bool ta, const double* b, int64_t b_rows,
               int64_t b_cols, bool tb, double* out, int threads) {
  MatMul(a, a_rows, a_cols, ta, b, b_rows, b_cols, tb, out, threads);
}

}  // namespace avx2
}  // namespace tfrun
