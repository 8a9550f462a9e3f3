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

#include "core/base/parallel.h"
#include "core/runtime/variable_updates.h"
#include "kernels/cpu/cpu_eigen.h"
#include "kernels/cpu/fused_elementwise_avx2.h"

namespace tfrun {
namespace cpu {
namespace {

#include "kernels/cpu/fused_elementwise_loops.h"

// The loops eight lanes at a time where the processor can: the same bits.
void CombineBlock(TermOp op, const float* x, const float* sx, const float* y, const float* sy, int64_t len,
                  float* out) {
  static const bool avx2 = ProcessorHasAvx2();
  if (avx2) return avx2::CombineLoop(op, x, sx, y, sy, len, out);
  Combine(op, x, sx, y, sy, len, out);
}
void DescendBlock(float* var, const float* delta, float alpha, int64_t len) {
  static const bool avx2 = ProcessorHasAvx2();
  if (avx2) return avx2::DescentLoop(var, delta, alpha, len);
  Descend(var, delta, alpha, len);
}

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

// A float32 tensor with values (no variant, no term).
bool IsPlainFloat(const Tensor& t) {
  return t.is_valid() && t.variant() == nullptr && t.dtype() == DType::kFloat32;
}

// Floats a block: 4 KB a step, in the first-level cache.
constexpr int64_t kBlock = 1024;

StatusOr<TermOp> OpOf(const Node& node) {
  if (node.op == "Mul") return TermOp::kMul;
  if (node.op == "Sub") return TermOp::kSub;
  if (node.op == "Add" || node.op == "AddV2" || (node.op == "AddN" && node.inputs.size() == 2)) return TermOp::kAdd;
  return RuntimeError(fmt::format("{} is not fused", node.op));
}

// A tree of terms as steps in the order they are computed (operands
// first), resolved once per kernel call: a block's work is then the loops
// alone, not a walk of the variants.
class Program {
 public:
  // An operand: a tensor's elements, a scalar, or an earlier step's block.
  struct Operand {
    const float* data = nullptr;
    const float* scalar = nullptr;
    int step = -1;
  };
  struct Step {
    TermOp op;
    Operand x, y;
  };

  // Adds the steps that compute `operand` (none for a tensor).
  Operand Add(const Tensor& operand) {
    if (const ElementwiseTerm* term = TermOf(operand)) return AddStep(term->op, Add(term->x), Add(term->y));
    if (operand.rank() == 0) return {nullptr, operand.data<float>(), -1};
    return {operand.data<float>(), nullptr, -1};
  }
  Operand AddStep(TermOp op, Operand x, Operand y) {
    steps_.push_back({op, x, y});
    return {nullptr, nullptr, static_cast<int>(steps_.size()) - 1};
  }

  // Computes elements [begin, begin + len) (len <= kBlock) of every step,
  // each into its block of `scratch` (kBlock floats a step), the last into
  // `out` where given: it may be an operand's own memory (a forwarded
  // input), as element i is read before it is written. Returns the last
  // step's values.
  const float* Run(int64_t begin, int64_t len, float* scratch, float* out) const {
    const auto at = [&](const Operand& o) -> const float* {
      return o.step >= 0 ? scratch + o.step * kBlock : o.data != nullptr ? o.data + begin : nullptr;
    };
    float* last = nullptr;
    for (size_t k = 0; k < steps_.size(); ++k) {
      const Step& step = steps_[k];
      last = out != nullptr && k + 1 == steps_.size() ? out : scratch + k * kBlock;
      CombineBlock(step.op, at(step.x), step.x.scalar, at(step.y), step.y.scalar, len, last);
    }
    return last;
  }
  // Calls f(begin, len, scratch) for every block of `n` elements, on the
  // pool when large, with scratch for Run.
  template <typename F>
  void ForBlocks(int64_t n, F&& f) const {
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    ParallelRows(blocks, kBlock, [&](int64_t first, int64_t last) {
      std::vector<float> scratch(steps_.size() * kBlock);
      for (int64_t b = first; b < last; ++b) {
        const int64_t begin = b * kBlock;
        f(begin, std::min(kBlock, n - begin), scratch.data());
      }
    });
  }

 private:
  std::vector<Step> steps_;
};

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
  if ((TermOf(x) == nullptr && !IsPlainFloat(x)) || (TermOf(y) == nullptr && !IsPlainFloat(y))) return std::nullopt;
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
    Program program;
    program.Add(input);
    program.ForBlocks(term->elements, [&](int64_t begin, int64_t len, float* scratch) {
      program.Run(begin, len, scratch, out + begin);
    });
    input = std::move(values);
  }
  return Status::Ok();
}

bool HoldsTerms(const KernelContext& c) {
  return std::any_of(c.inputs.begin(), c.inputs.end(), [](const Tensor& t) { return TermOf(t) != nullptr; });
}

// A node's step of a fused pass: its op, over inputs of `shape`.
struct NodeStep {
  TermOp op;
  Shape shape;
};
// The step of `c`'s node over its two inputs, or none where they do not
// fit one pass.
std::optional<NodeStep> StepOf(const KernelContext& c) {
  const StatusOr<TermOp> op = OpOf(c.node);
  if (!op.ok() || c.inputs.size() != 2) return std::nullopt;
  std::optional<Shape> shape = FusedShape(c.node, c.inputs[0], c.inputs[1]);
  if (!shape) return std::nullopt;
  return NodeStep{*op, std::move(*shape)};
}

// The node's own kernel, on its inputs' values (the terms computed).
Status RunOwnKernel(KernelContext& c, KernelFn own) {
  TFRUN_RETURN_IF_ERROR(ComputeTerms(c));
  return own(c);
}

// A deferred node: its term, or (tensors of shapes a pass cannot take) its
// own kernel's result.
Status DeferKernel(KernelContext& c, KernelFn own) {
  const std::optional<NodeStep> step = StepOf(c);
  if (!step) return RunOwnKernel(c, own);
  auto term = std::make_shared<ElementwiseTerm>();
  term->op = step->op;
  term->shape = step->shape;
  term->elements = *NumElements(step->shape);
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
  Program program;
  program.Add(c.inputs[2]);
  program.ForBlocks(delta.elements, [&](int64_t begin, int64_t len, float* scratch) {
    DescendBlock(var + begin, program.Run(begin, len, scratch, nullptr), alpha, len);
  });
  c.output = tensors[0];
  return Status::Ok();
}

// AssignAdd or AssignSub of a term: var += value (or -=), element by
// element as the unfused kernel's Eigen expression.
Status FusedAssignUpdate(KernelContext& c, const ElementwiseTerm& value, TermOp op) {
  TFRUN_ASSIGN_OR_RETURN(Tensor var, PrepareAssignUpdate(c, /*resource=*/false, DType::kFloat32, value.shape));
  float* v = var.data<float>();
  Program program;
  program.Add(c.inputs[1]);
  program.ForBlocks(value.elements, [&](int64_t begin, int64_t len, float* scratch) {
    CombineBlock(op, v + begin, nullptr, program.Run(begin, len, scratch, nullptr), nullptr, len, v + begin);
  });
  c.output = var;
  return Status::Ok();
}

// A root: its own op over its inputs' terms in one pass, or (tensors a
// pass cannot take) the terms computed and its own kernel run.
Status RootKernel(KernelContext& c, KernelFn own) {
  if (!HoldsTerms(c)) return own(c);
  if (c.node.op == "ApplyGradientDescent" && c.inputs.size() == 3) {
    const ElementwiseTerm* delta = TermOf(c.inputs[2]);
    if (delta != nullptr && IsPlainFloat(c.inputs[0]) && IsPlainFloat(c.inputs[1]) && c.inputs[1].rank() == 0 &&
        c.inputs[0].shape() == delta->shape) {
      return FusedApplyGradientDescent(c, *delta);
    }
  }
  if ((c.node.op == "AssignAdd" || c.node.op == "AssignSub") && c.inputs.size() == 2) {
    const ElementwiseTerm* value = TermOf(c.inputs[1]);
    if (value != nullptr && IsPlainFloat(c.inputs[0]) && c.inputs[0].shape() == value->shape) {
      return FusedAssignUpdate(c, *value, c.node.op == "AssignAdd" ? TermOp::kAdd : TermOp::kSub);
    }
  }
  const std::optional<NodeStep> step = StepOf(c);
  if (!step) return RunOwnKernel(c, own);
  // Into an input's buffer where nothing else holds it, as the node's own
  // kernel would (an operand of a term holds its buffer).
  TFRUN_RETURN_IF_ERROR(c.ForwardOrAllocateOutput({0, 1}, step->shape));
  float* out = c.output.data<float>();
  Program program;
  program.AddStep(step->op, program.Add(c.inputs[0]), program.Add(c.inputs[1]));
  program.ForBlocks(c.output.num_elements(), [&](int64_t begin, int64_t len, float* scratch) {
    program.Run(begin, len, scratch, out + begin);
  });
  return Status::Ok();
}

}  // namespace

void RegisterFusionKernels(KernelRegistry* registry) { registry->BindFusion(kCpu, {DeferKernel, RootKernel}); }

}  // namespace cpu
}  // namespace tfrun
