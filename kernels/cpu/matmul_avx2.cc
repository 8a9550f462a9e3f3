// Compiled with -mavx2 -mfma (kernels/BUILD). Eigen's namespace is renamed
// in this file so its AVX2 template instantiations can never be merged by
// the linker with the generic ones of other files (an ODR hazard that could
// run AVX2 code on a CPU without it). For the same reason nothing here uses
// threads: no std::thread or std::function code may be emitted here.
#define Eigen tfrun_eigen_avx2
#include <Eigen/Core>

#include "kernels/cpu/matmul_avx2.h"

namespace tfrun {
namespace avx2 {
namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstView = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;

// `f(view)` with the view of `v` as a row-major map, or as the transpose of
// one when its columns are the contiguous direction's rows.
template <typename F>
void WithView(Strided<double> v, int64_t rows, int64_t cols, F&& f) {
  if (v.col_stride == 1) {
    f(ConstView(v.data, rows, cols, Eigen::OuterStride<>(v.row_stride)));
  } else {
    f(ConstView(v.data, cols, rows, Eigen::OuterStride<>(v.col_stride)).transpose());
  }
}

}  // namespace

void Dgemm(int64_t m, int64_t n, int64_t k, Strided<double> a, Strided<double> b, double* c, int64_t ldc) {
  Eigen::Map<Matrix, 0, Eigen::OuterStride<>> out(c, m, n, Eigen::OuterStride<>(ldc));
  WithView(a, m, k, [&](const auto& ma) {
    WithView(b, k, n, [&](const auto& mb) { out.noalias() = ma * mb; });
  });
}

}  // namespace avx2
}  // namespace tfrun
