// Compiled with -mavx2 -mfma (kernels/BUILD). Eigen's namespace is renamed
// in this file so its AVX2 template instantiations can never be merged by
// the linker with the generic ones of other files (an ODR hazard that could
// run AVX2 code on a CPU without it). Nothing here may include a header
// that names Eigen types shared with other files.
#define Eigen tfrun_eigen_avx2
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include "kernels/cpu/matmul_avx2.h"

#include <algorithm>
#include <thread>

namespace tfrun {
namespace avx2 {
namespace {

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
  if (m * n * k >= (int64_t{1} << 18)) {
    mo.device(Pool(threads)) = ma.contract(mb, dims);
  } else {
    mo = ma.contract(mb, dims);
  }
}

}  // namespace

bool Available() {
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return available;
}

void MatMulF32(const float* a, int64_t a_rows, int64_t a_cols, bool ta, const float* b, int64_t b_rows,
               int64_t b_cols, bool tb, float* out, int threads) {
  MatMul(a, a_rows, a_cols, ta, b, b_rows, b_cols, tb, out, threads);
}

void MatMulF64(const double* a, int64_t a_rows, int64_t a_cols, bool ta, const double* b, int64_t b_rows,
               int64_t b_cols, bool tb, double* out, int threads) {
  MatMul(a, a_rows, a_cols, ta, b, b_rows, b_cols, tb, out, threads);
}

}  // namespace avx2
}  // namespace tfrun
