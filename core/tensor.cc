#include "core/tensor.h"

#include <fmt/format.h>

namespace tfrun {

std::string OomMessage(const Shape& shape, DType dtype,
                       const std::string& device, const Allocator& allocator) {
  return fmt::format(
      "ResourceExhaustedError: OOM when allocating tensor with shape{} and "
      "type {} on {} by allocator {}{}",
      ShapeDebugString(shape), Info(dtype).tf_name, device, allocator.name(), allocator.LimitHint());
}

StatusOr<Tensor> Tensor::Allocate(DType dtype, Shape shape,
                                  Allocator* allocator,
                                  const std::string& device) {
  std::optional<int64_t> n = NumElements(shape);
  size_t bytes = 0;
  if (!n || __builtin_mul_overflow(static_cast<size_t>(*n), Info(dtype).size,
                                   &bytes)) {
    return RuntimeError(OomMessage(shape, dtype, device, *allocator));
  }
  Tensor t;
  t.buffer_ = Buffer::Create(allocator, bytes);
  if (t.buffer_ == nullptr) {
    return RuntimeError(OomMessage(shape, dtype, device, *allocator));
  }
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = *n;
  return t;
}

StatusOr<Tensor> Tensor::AllocateHost(DType dtype, Shape shape) {
  return Allocate(dtype, std::move(shape), CpuAllocator(),
                  "/job:localhost/replica:0/task:0/device:CPU:0");
}

StatusOr<Tensor> Tensor::CopyTo(Allocator* allocator, const std::string& device) const {
  TFRUN_ASSIGN_OR_RETURN(Tensor copy, Allocate(dtype_, shape_, allocator, device));
  TFRUN_RETURN_IF_ERROR(CopyBytes(allocator, copy.raw(), this->allocator(), raw(), num_bytes()));
  return copy;
}

double Tensor::GetAsDouble(int64_t i) const {
  return DispatchDType(dtype_, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(data<T>()[i]);
  });
}

}  // namespace tfrun
