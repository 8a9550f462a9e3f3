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
  if (static_cast<size_t>(NumElements(shape).value_or(-1)) != elements.size()) {
    return BadInput(fmt::format("{} strings for shape {}", elements.size(), ShapeDebugString(shape)));
  }
  return FromStringElements(std::move(shape), [&](int64_t i) -> std::string_view { return elements[i]; });
}

std::optional<int64_t> Tensor::StringTensorBytes(int64_t n, int64_t payload) {
  int64_t bytes = 0;
  if (n < 0 || payload < 0 || __builtin_mul_overflow(n + 1, static_cast<int64_t>(sizeof(uint64_t)), &bytes) ||
      __builtin_add_overflow(bytes, payload, &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

StatusOr<Tensor> Tensor::FromStringElements(Shape shape, const std::function<std::string_view(int64_t)>& element) {
  const std::string device = "/job:localhost/replica:0/task:0/device:CPU:0";
  const std::optional<int64_t> n = NumElements(shape);
  int64_t payload = 0;
  for (int64_t i = 0; n && i < *n; ++i) {
    if (__builtin_add_overflow(payload, static_cast<int64_t>(element(i).size()), &payload)) {
      return RuntimeError(OomMessage(shape, DType::kString, device, *CpuAllocator()));
    }
  }
  const std::optional<int64_t> bytes = n ? StringTensorBytes(*n, payload) : std::nullopt;
  if (!bytes) return RuntimeError(OomMessage(shape, DType::kString, device, *CpuAllocator()));
  TFRUN_ASSIGN_OR_RETURN(Tensor t, AllocateBytes(DType::kString, std::move(shape), static_cast<size_t>(*bytes),
                                                 CpuAllocator(), device));
  auto* offsets = static_cast<uint64_t*>(t.raw());
  char* chars = reinterpret_cast<char*>(offsets + *n + 1);
  uint64_t at = 0;
  for (int64_t i = 0; i < *n; ++i) {
    offsets[i] = at;
    const std::string_view e = element(i);
    if (!e.empty()) std::memcpy(chars + at, e.data(), e.size());
    at += e.size();
  }
  offsets[*n] = at;
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

StatusOr<Tensor> Tensor::FromVariant(std::shared_ptr<const VariantValue> value) {
  TFRUN_ASSIGN_OR_RETURN(Tensor t, AllocateBytes(DType::kVariant, {}, 0, CpuAllocator(),
                                                 "/job:localhost/replica:0/task:0/device:CPU:0"));
  t.variant_ = std::move(value);
  return t;
}

StatusOr<Tensor> Tensor::CopyTo(Allocator* allocator, const std::string& device) const {
  if (dtype_ == DType::kVariant) return *this;
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
  if (dtype_ == DType::kString || dtype_ == DType::kVariant) return 0;  // no number; printers check first
  return DispatchDType(dtype_, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(data<T>()[i]);
  });
}

}  // namespace tfrun
