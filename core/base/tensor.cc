#include "core/base/tensor.h"

#include <fmt/format.h>

#include <cstring>

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
  return AllocateBytes(dtype, std::move(shape), bytes, allocator, device);
}

StatusOr<Tensor> Tensor::AllocateBytes(DType dtype, Shape shape, size_t bytes, Allocator* allocator,
                                       const std::string& device) {
  std::optional<int64_t> n = NumElements(shape);
  if (!n) return RuntimeError(OomMessage(shape, dtype, device, *allocator));
  Tensor t;
  t.buffer_ = Buffer::Create(allocator, bytes);
  if (t.buffer_ == nullptr) {
    return RuntimeError(OomMessage(shape, dtype, device, *allocator));
  }
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = *n;
  t.num_bytes_ = bytes;
  return t;
}

StatusOr<Tensor> Tensor::FromStrings(Shape shape, const std::vector<std::string>& elements) {
  const size_t n = elements.size();
  size_t bytes = (n + 1) * sizeof(uint64_t);
  for (const std::string& e : elements) bytes += e.size();
  TFRUN_ASSIGN_OR_RETURN(Tensor t, AllocateBytes(DType::kString, std::move(shape), bytes, CpuAllocator(),
                                                 "/job:localhost/replica:0/task:0/device:CPU:0"));
  auto* offsets = static_cast<uint64_t*>(t.raw());
  char* chars = reinterpret_cast<char*>(offsets + n + 1);
  uint64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    offsets[i] = at;
    if (!elements[i].empty()) std::memcpy(chars + at, elements[i].data(), elements[i].size());
    at += elements[i].size();
  }
  offsets[n] = at;
  return t;
}

int64_t Tensor::GetAsInt64(int64_t i) const {
  if (dtype_ == DType::kInt64) return data<int64_t>()[i];
  if (dtype_ == DType::kInt32) return data<int32_t>()[i];
  const double v = GetAsDouble(i);
  return v >= -9.2e18 && v <= 9.2e18 ? static_cast<int64_t>(v) : 0;
}

std::string_view Tensor::StringAt(int64_t i) const {
  const auto* offsets = static_cast<const uint64_t*>(raw());
  const char* chars = reinterpret_cast<const char*>(offsets + num_elements_ + 1);
  return std::string_view(chars + offsets[i], offsets[i + 1] - offsets[i]);
}

StatusOr<Tensor> Tensor::AllocateHost(DType dtype, Shape shape) {
  return Allocate(dtype, std::move(shape), CpuAllocator(),
                  "/job:localhost/replica:0/task:0/device:CPU:0");
}

StatusOr<Tensor> Tensor::CopyTo(Allocator* allocator, const std::string& device) const {
  TFRUN_ASSIGN_OR_RETURN(Tensor copy, AllocateBytes(dtype_, shape_, num_bytes(), allocator, device));
  TFRUN_RETURN_IF_ERROR(CopyBytes(allocator, copy.raw(), this->allocator(), raw(), num_bytes()));
  return copy;
}

Tensor Tensor::Reshaped(Shape shape) const {
  Tensor view = *this;
  view.shape_ = std::move(shape);
  return view;
}

double Tensor::GetAsDouble(int64_t i) const {
  if (dtype_ == DType::kString) return 0;  // no number; printers check first
  return DispatchDType(dtype_, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(data<T>()[i]);
  });
}

}  // namespace tfrun
