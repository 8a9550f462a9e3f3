#include "kernels/cpu/fused_elementwise_avx2.h"

namespace tfrun {
namespace avx2 {
namespace {
using cpu::TermOp;
#include "kernels/cpu/fused_elementwise_loops.h"
}  // namespace

void CombineLoop(cpu::TermOp op, const float* x, const float* sx, const float* y, const float* sy, int64_t len,
                 float* out) {
  Combine(op, x, sx, y, sy, len, out);
}
void DescentLoop(float* var, const float* delta, float alpha, int64_t len) {
  Descend(var, delta, alpha, len);
}

}  // namespace avx2
}  // namespace tfrun
