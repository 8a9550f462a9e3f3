// The CPU's elementwise fusion (core/runtime/elementwise_fusion.h): a
// deferred node's kernel keeps its operands in an ElementwiseTerm; the
// root's computes the terms it reads a block of elements at a time, each
// element by the operations the nodes' own kernels apply (x op y in float,
// rounded at each step; AddN of two inputs is their sum, in either order
// the same), then its own op on them. The blocks stay in the first-level
// cache: the chain reads each input from memory once and writes only the
// root's output.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/variable_updates.h"
#include "kernels/cpu/cpu_eigen.h"

namespace tfrun {
namespace cpu {
namespace {

enum class TermOp : char { kAdd, kSub, kMul };

// A deferred node's value: `x op y`, of `shape`. Each operand is a tensor
// of the shape, a scalar, or another term. Holding the operands keeps
// their buffers from being taken over (CanForward) until the root reads
// them.
class ElementwiseTerm final : public VariantValue {
 public:
  std::string TypeName() const override { return "tfrun::ElementwiseTerm"; }
  TermOp op = TermOp::kAdd;
  Shape shape;
  int64_t elements = 0;
  Tensor x, y;
};

const ElementwiseTerm* TermOf(const Tensor& t) { return dynamic_cast<const ElementwiseTerm*>(t.variant()); }

// Floats a block: 4 KB, two a level of the tree, in the first-level cache.
constexpr int64_t kBlock = 1024;

int Depth(const Tensor& operand) {
  const ElementwiseTerm* term = TermOf(operand);
  return term == nullptr ? 0 : 1 + std::max(Depth(term->x), Depth(term->y));
}

StatusOr<TermOp> OpOf(const Node& node) {
  if (node.op == "Mul") return TermOp::kMul;
  if (node.op == "Sub") return TermOp::kSub;
  if (node.op == "Add" || node.op == "AddV2" || (node.op == "AddN" && node.inputs.size() == 2)) return TermOp::kAdd;
  return RuntimeError(fmt::format("{} is not fused", node.op));
}

// The operand's elements [begin, begin + len): its own memory, or the
// term's computed into `block` (kBlock floats), its own operands' blocks
// in `deeper`. A scalar is `*scalar` instead (and null is returned).
const float* Values(const Tensor& operand, int64_t begin, int64_t len, float* block, float* deeper,
                    const float** scalar);

template <TermOp Op>
inline float Apply(float a, float b) {
  if constexpr (Op == TermOp::kAdd) return a + b;
  if constexpr (Op == TermOp::kSub) return a - b;
  if constexpr (Op == TermOp::kMul) return a * b;
}

template <TermOp Op>
void Combine(const float* x, const float* sx, const float* y, const float* sy, int64_t len, float* out) {
  if (x == nullptr) {
    const float a = *sx;
    for (int64_t i = 0; i < len; ++i) out[i] = Apply<Op>(a, y[i]);
  } else if (y == nullptr) {
    const float b = *sy;
    for (int64_t i = 0; i < len; ++i) out[i] = Apply<Op>(x[i], b);
  } else {
    for (int64_t i = 0; i < len; ++i) out[i] = Apply<Op>(x[i], y[i]);
  }
}

// out[0, len) = elements [begin, begin + len) of `x op y`, with
// 2 * kBlock floats of `scratch` a level of terms below. `out` may be one
// of x's or y's own buffers (a forwarded input): element i is read before
// it is written. x's term is computed before y's: their operands share
// the levels below.
void Evaluate(TermOp op, const Tensor& x, const Tensor& y, int64_t begin, int64_t len, float* out, float* scratch) {
  const float *sx = nullptr, *sy = nullptr;
  const float* px = Values(x, begin, len, scratch, scratch + 2 * kBlock, &sx);
  const float* py = Values(y, begin, len, scratch + kBlock, scratch + 2 * kBlock, &sy);
  switch (op) {
    case TermOp::kAdd: return Combine<TermOp::kAdd>(px, sx, py, sy, len, out);
    case TermOp::kSub: return Combine<TermOp::kSub>(px, sx, py, sy, len, out);
    case TermOp::kMul: return Combine<TermOp::kMul>(px, sx, py, sy, len, out);
  }
}

const float* Values(const Tensor& operand, int64_t begin, int64_t len, float* block, float* deeper,
                    const float** scalar) {
  if (const ElementwiseTerm* term = TermOf(operand)) {
    Evaluate(term->op, term->x, term->y, begin, len, block, deeper);
    return block;
  }
  if (operand.rank() == 0) {
    *scalar = operand.data<float>();
    return nullptr;
  }
  return operand.data<float>() + begin;
}

// Calls f(begin, len, scratch) for every block of `n` elements, on the
// pool when large, with scratch for a tree of `depth` levels of terms
// (2 * kBlock floats a level, and a block for the root's own use).
template <typename F>
void ForBlocks(int64_t n, int depth, F&& f) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  ParallelRows(blocks, kBlock, [&](int64_t first, int64_t last) {
    std::vector<float> scratch(static_cast<size_t>(2 * kBlock * (depth + 1)));
    for (int64_t b = first; b < last; ++b) {
      const int64_t begin = b * kBlock;
      f(begin, std::min(kBlock, n - begin), scratch.data());
    }
  });
}

// Fused passes below this many elements are not worth a block's
// bookkeeping: their tensors fit the caches anyway.
constexpr int64_t kFusedElements = int64_t{1} << 15;

Shape ShapeOf(const Tensor& operand) {
  const ElementwiseTerm* term = TermOf(operand);
  return term != nullptr ? term->shape : operand.shape();
}

// The shape of `node`'s `x op y` as one fused pass computes it, or none
// where it cannot: each operand a float32 tensor or term of the result's
// shape, or a float32 scalar (not both; not for AddN, which takes none),
// of kFusedElements or more.
std::optional<Shape> FusedShape(const Node& node, const Tensor& x, const Tensor& y) {
  const auto plain_float = [](const Tensor& t) {
    return TermOf(t) != nullptr ||
           (t.is_valid() && t.variant() == nullptr && t.dtype() == DType::kFloat32);
  };
  if (!plain_float(x) || !plain_float(y)) return std::nullopt;
  const bool x_scalar = TermOf(x) == nullptr && x.rank() == 0;
  const bool y_scalar = TermOf(y) == nullptr && y.rank() == 0;
  if ((x_scalar && y_scalar) || ((x_scalar || y_scalar) && node.op == "AddN")) return std::nullopt;
  Shape shape = x_scalar ? ShapeOf(y) : ShapeOf(x);
  if ((!x_scalar && ShapeOf(x) != shape) || (!y_scalar && ShapeOf(y) != shape)) return std::nullopt;
  if (NumElements(shape).value_or(0) < kFusedElements) return std::nullopt;
  return shape;
}

// Replaces every term among the kernel's inputs by its values, in a new
// tensor: what the deferred nodes would have output.
Status ComputeTerms(KernelContext& c) {
  for (Tensor& input : c.inputs) {
    const ElementwiseTerm* term = TermOf(input);
    if (term == nullptr) continue;
    TFRUN_ASSIGN_OR_RETURN(Tensor values, c.Allocate(DType::kFloat32, term->shape));
    float* out = values.data<float>();
    ForBlocks(term->elements, Depth(input), [&](int64_t begin, int64_t len, float* scratch) {
      Evaluate(term->op, term->x, term->y, begin, len, out + begin, scratch);
    });
    input = std::move(values);
  }
  return Status::Ok();
}

bool HoldsTerms(const KernelContext& c) {
  return std::any_of(c.inputs.begin(), c.inputs.end(), [](const Tensor& t) { return TermOf(t) != nullptr; });
}

// A deferred node: its term, or (tensors of shapes a pass cannot take) its
// own kernel's result.
Status DeferKernel(KernelContext& c, KernelFn own) {
  StatusOr<TermOp> op = OpOf(c.node);
  const std::optional<Shape> shape =
      op.ok() && c.inputs.size() == 2 ? FusedShape(c.node, c.inputs[0], c.inputs[1]) : std::nullopt;
  if (!shape) {
    TFRUN_RETURN_IF_ERROR(ComputeTerms(c));
    return own(c);
  }
  auto term = std::make_shared<ElementwiseTerm>();
  term->op = *op;
  term->shape = *shape;
  term->elements = *NumElements(*shape);
  term->x = c.inputs[0];
  term->y = c.inputs[1];
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromVariant(std::move(term)));
  return Status::Ok();
}

// ApplyGradientDescent of a term: var -= delta * alpha, element by element
// as the unfused kernel's Eigen expression (optimizer_kernels.cc).
Status FusedApplyGradientDescent(KernelContext& c, const ElementwiseTerm& delta) {
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> tensors,
                         PrepareUpdate(c, InputsOf(Optimizer::kGradientDescent), /*resource=*/false,
                                       DType::kFloat32, delta.shape));
  float* var = tensors[0].data<float>();
  const float alpha = c.inputs[1].data<float>()[0];
  ForBlocks(delta.elements, Depth(c.inputs[2]), [&](int64_t begin, int64_t len, float* scratch) {
    float* block = scratch;
    Evaluate(delta.op, delta.x, delta.y, begin, len, block, scratch + kBlock);
    float* v = var + begin;
    for (int64_t i = 0; i < len; ++i) v[i] = v[i] - block[i] * alpha;
  });
  c.output = tensors[0];
  return Status::Ok();
}

// A root: its own op over its inputs' terms in one pass, or (tensors a
// pass cannot take) the terms computed and its own kernel run.
Status RootKernel(KernelContext& c, KernelFn own) {
  if (!HoldsTerms(c)) return own(c);
  if (c.node.op == "ApplyGradientDescent" && c.inputs.size() == 3) {
    const ElementwiseTerm* delta = TermOf(c.inputs[2]);
    if (delta != nullptr && TermOf(c.inputs[0]) == nullptr && TermOf(c.inputs[1]) == nullptr &&
        c.inputs[0].dtype() == DType::kFloat32 && c.inputs[1].dtype() == DType::kFloat32 &&
        c.inputs[1].rank() == 0 && c.inputs[0].shape() == delta->shape) {
      return FusedApplyGradientDescent(c, *delta);
    }
  }
  StatusOr<TermOp> op = OpOf(c.node);
  const std::optional<Shape> shape =
      op.ok() && c.inputs.size() == 2 ? FusedShape(c.node, c.inputs[0], c.inputs[1]) : std::nullopt;
  if (!shape) {
    TFRUN_RETURN_IF_ERROR(ComputeTerms(c));
    return own(c);
  }
  // Into an input's buffer where nothing else holds it, as the node's own
  // kernel would (an operand of a term holds its buffer).
  TFRUN_RETURN_IF_ERROR(c.ForwardOrAllocateOutput({0, 1}, *shape));
  float* out = c.output.data<float>();
  const int depth = std::max(Depth(c.inputs[0]), Depth(c.inputs[1]));
  ForBlocks(c.output.num_elements(), depth, [&](int64_t begin, int64_t len, float* scratch) {
    Evaluate(*op, c.inputs[0], c.inputs[1], begin, len, out + begin, scratch);
  });
  return Status::Ok();
}

}  // namespace

void RegisterFusionKernels(KernelRegistry* registry) { registry->BindFusion(kCpu, {DeferKernel, RootKernel}); }

}  // namespace cpu
}  // namespace tfrun
