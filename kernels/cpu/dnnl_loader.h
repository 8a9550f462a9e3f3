// oneDNN is loaded on first use (dnnl_loader.cc says why): whether it
// could be, and if not, why.
#pragma once

#include <cstdint>
#include <string>

namespace tfrun {
namespace cpu {

bool DnnlAvailable(std::string* why);

// out[m, n] = op(a) * op(b) in float32 with oneDNN's GEMM (row-major; `a`
// is a_rows x a_cols as stored, likewise `b`), which picks the CPU's
// widest instructions at run time (AVX-512 where there is). False when
// oneDNN could not be loaded or failed: the caller computes it itself.
bool DnnlMatMulF32(const float* a, int64_t a_rows, int64_t a_cols, bool transpose_a, const float* b, int64_t b_rows,
                   int64_t b_cols, bool transpose_b, float* out);

}  // namespace cpu
}  // namespace tfrun
