#include "kernels/cpu/depthwise_avx2.h"

namespace tfrun {
namespace avx2 {

#include "kernels/cpu/depthwise_rows.inc"

void DepthwiseConvRowsF32(const float* in, const float* filter, float* out, const DepthwiseGeometry& g,
                          int64_t first, int64_t last) {
  DepthwiseRows(in, filter, out, g, first, last);
}

}  // namespace avx2
}  // namespace tfrun
