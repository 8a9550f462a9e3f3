// DepthwiseConv2dNative's float32 rows built for AVX2 without fused
// multiply-add (-mavx2 -ffp-contract=off): the same products and sums, in
// the same order, as the generic kernel (nn_kernels.cc), eight channels a
// time. Called only where avx2::Available(). Plain loops and no library
// templates: nothing inline from here may stand in for the generic build's
// (matmul_avx2.h says why).
#pragma once

#include <cstdint>

namespace tfrun {
namespace avx2 {

struct DepthwiseGeometry {
  int64_t in_rows, in_cols, in_depth, filter_rows, filter_cols, multiplier, out_rows, out_cols;
  int64_t stride_rows, stride_cols, pad_top, pad_left;
};

// Output rows [first, last) of batch * out_rows (NHWC), each element the
// sum from 0 of its window's products in filter order (rows, then
// columns), each product rounded before it is added; padding adds nothing.
void DepthwiseConvRowsF32(const float* in, const float* filter, float* out, const DepthwiseGeometry& g,
                          int64_t first, int64_t last);

}  // namespace avx2
}  // namespace tfrun
