// The loops of a fused elementwise pass (fused_elementwise.cc), included
// inside an anonymous namespace by each build of them: the generic one and
// fused_elementwise_avx2.cc's (-mavx2). Plain loops the compiler
// vectorizes: each lane is the IEEE operation of the nodes' own kernels,
// with no fused multiply-add (-ffp-contract=off in both), so both builds
// compute the same bits. No includes, no library templates (matmul_avx2.h
// says why).

template <TermOp Op>
inline float ApplyOp(float a, float b) {
  if constexpr (Op == TermOp::kAdd) return a + b;
  if constexpr (Op == TermOp::kSub) return a - b;
  if constexpr (Op == TermOp::kMul) return a * b;
}

template <TermOp Op>
void CombineAs(const float* x, const float* sx, const float* y, const float* sy, int64_t len, float* out) {
  if (x == nullptr) {
    const float a = *sx;
    for (int64_t i = 0; i < len; ++i) out[i] = ApplyOp<Op>(a, y[i]);
  } else if (y == nullptr) {
    const float b = *sy;
    for (int64_t i = 0; i < len; ++i) out[i] = ApplyOp<Op>(x[i], b);
  } else {
    for (int64_t i = 0; i < len; ++i) out[i] = ApplyOp<Op>(x[i], y[i]);
  }
}

// out[i] = x[i] op y[i] for i < len, a null x or y standing for the scalar
// *sx or *sy. `out` may be x or y.
void Combine(TermOp op, const float* x, const float* sx, const float* y, const float* sy, int64_t len, float* out) {
  switch (op) {
    case TermOp::kAdd: return CombineAs<TermOp::kAdd>(x, sx, y, sy, len, out);
    case TermOp::kSub: return CombineAs<TermOp::kSub>(x, sx, y, sy, len, out);
    case TermOp::kMul: return CombineAs<TermOp::kMul>(x, sx, y, sy, len, out);
  }
}

// ApplyGradientDescent's var -= delta * alpha, as its Eigen expression.
void Descend(float* var, const float* delta, float alpha, int64_t len) {
  for (int64_t i = 0; i < len; ++i) var[i] = var[i] - delta[i] * alpha;
}
