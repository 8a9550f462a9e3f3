#include "kernels/cpu/depthwise_avx2.h"

namespace tfrun {
namespace avx2 {

void DepthwiseConvRowsF32(const float* in, const float* filter, float* out, const DepthwiseGeometry& g,
                          int64_t first, int64_t last) {
  const int64_t depth = g.in_depth * g.multiplier;
  for (int64_t row = first; row < last; ++row) {
    const int64_t b = row / g.out_rows, oy = row % g.out_rows;
    for (int64_t ox = 0; ox < g.out_cols; ++ox) {
      float* o = out + (row * g.out_cols + ox) * depth;
      for (int64_t d = 0; d < depth; ++d) o[d] = 0.0f;
      for (int64_t fy = 0; fy < g.filter_rows; ++fy) {
        const int64_t iy = oy * g.stride_rows - g.pad_top + fy;
        if (iy < 0 || iy >= g.in_rows) continue;
        for (int64_t fx = 0; fx < g.filter_cols; ++fx) {
          const int64_t ix = ox * g.stride_cols - g.pad_left + fx;
          if (ix < 0 || ix >= g.in_cols) continue;
          const float* x = in + ((b * g.in_rows + iy) * g.in_cols + ix) * g.in_depth;
          const float* f = filter + (fy * g.filter_cols + fx) * depth;
          if (g.multiplier == 1) {
            for (int64_t d = 0; d < depth; ++d) o[d] += x[d] * f[d];
          } else {
            for (int64_t d = 0; d < depth; ++d) o[d] += x[d / g.multiplier] * f[d];
          }
        }
      }
    }
  }
}

}  // namespace avx2
}  // namespace tfrun
