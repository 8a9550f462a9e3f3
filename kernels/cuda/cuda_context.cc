#include "kernels/cuda/cuda_context.h"

namespace tfrun {

std::optional<cuda::ElementType> ElementTypeOf(DType d) {
  switch (d) {
    case DType::kFloat32: return cuda::ElementType::kFloat32;
    case DType::kFloat64: return cuda::ElementType::kFloat64;
    case DType::kFloat16: return cuda::ElementType::kFloat16;
    case DType::kBFloat16: return cuda::ElementType::kBFloat16;
    case DType::kInt32: return cuda::ElementType::kInt32;
    case DType::kInt64: return cuda::ElementType::kInt64;
    case DType::kBool: return cuda::ElementType::kBool;
    default: return std::nullopt;
  }
}

Status LaunchResult(int error, const char* what) {
  if (error != 0) return RuntimeError(fmt::format("{} failed: {}", what, cudaGetErrorString(static_cast<cudaError_t>(error))));
  return Status::Ok();
}

StatusOr<Elementwise> PrepareElementwise(KernelContext& c, const StatusOr<Shape>& shape) {
  std::optional<cuda::ElementType> type = ElementTypeOf(c.node.dtype);
  // Only Cast takes bool (cuda::Cast); the arithmetic kernels do not.
  if (!type || (*type == cuda::ElementType::kBool && c.node.op != "Cast")) {
    return RuntimeError(fmt::format("no GPU {} for {}", c.node.op, Name(c.node.dtype)));
  }
  CudaContext& ctx = ContextOf(c);
  TFRUN_RETURN_IF_ERROR(ctx.Activate());
  if (!shape.ok()) return shape.status();
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(*shape));
  return Elementwise{*type, &ctx};
}

}  // namespace tfrun
