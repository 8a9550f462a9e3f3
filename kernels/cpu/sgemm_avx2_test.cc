#include "kernels/cpu/sgemm_avx2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/matmul_avx2.h"

namespace tfrun {
namespace avx2 {
namespace {

struct Case {
  int64_t m, n, k;
};

// Every edge of the blocking: partial micro-tiles (6 x 16), several A
// blocks (72 rows), B blocks (4080 columns) and k blocks (512).
const Case kCases[] = {{1, 1, 1},   {5, 15, 3},    {6, 16, 8},   {7, 17, 513}, {73, 33, 1030},
                       {13, 4097, 5}, {150, 40, 0}, {2, 3, 1024}, {144, 160, 512}};

// `matmul` (MatMulF32 or MatMulF64) against a long-double reference for
// every case and transpose, within `tolerance(k)`.
template <typename T, typename MatMulFn, typename Tolerance>
void CheckEveryShapeAndTranspose(MatMulFn matmul, Tolerance tolerance) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<T> uniform(-1, 1);
  for (const Case& c : kCases) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        std::vector<T> a(c.m * c.k), b(c.k * c.n), out(c.m * c.n, NAN);
        for (T& x : a) x = uniform(rng);
        for (T& x : b) x = uniform(rng);
        // As stored: a is m x k, or k x m when transposed; likewise b.
        matmul(a.data(), ta ? c.k : c.m, ta ? c.m : c.k, ta, b.data(), tb ? c.n : c.k, tb ? c.k : c.n, tb,
               out.data(), 2);
        for (int64_t i = 0; i < c.m; ++i) {
          for (int64_t j = 0; j < c.n; ++j) {
            long double sum = 0;
            for (int64_t p = 0; p < c.k; ++p) {
              sum += static_cast<long double>(a[ta ? p * c.m + i : i * c.k + p]) * b[tb ? j * c.k + p : p * c.n + j];
            }
            ASSERT_NEAR(out[i * c.n + j], static_cast<double>(sum), tolerance(static_cast<double>(c.k)))
                << c.m << "x" << c.n << "x" << c.k << " ta=" << ta << " tb=" << tb << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(SgemmTest, MatchesADoubleReferenceForEveryShapeAndTranspose) {
  if (!Available()) GTEST_SKIP() << "this CPU has no AVX2+FMA; the Eigen MatMul runs instead";
  CheckEveryShapeAndTranspose<float>(MatMulF32, [](double k) { return 1e-5 * (1 + std::sqrt(k)); });
}

TEST(SgemmTest, Float64ThroughEigenSplitTheSameWay) {
  if (!Available()) GTEST_SKIP() << "this CPU has no AVX2+FMA; the Eigen MatMul runs instead";
  CheckEveryShapeAndTranspose<double>(MatMulF64, [](double k) { return 1e-13 * (1 + k); });
}

TEST(SgemmTest, WritesOnlyItsOwnRowsOfALargerOutput) {
  if (!Available()) GTEST_SKIP() << "this CPU has no AVX2+FMA";
  const int64_t m = 7, n = 19, k = 4, ldc = 24;
  std::vector<float> a(m * k, 1.0f), b(k * n, 0.5f), out(m * ldc, -3.0f);
  Sgemm(m, n, k, {a.data(), k, 1}, {b.data(), n, 1}, out.data(), ldc);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) EXPECT_EQ(out[i * ldc + j], j < n ? 2.0f : -3.0f) << i << "," << j;
  }
}

}  // namespace
}  // namespace avx2
}  // namespace tfrun
