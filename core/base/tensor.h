// A typed, shaped view of a Buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/allocator.h"
#include "core/base/dtype.h"
#include "core/base/shape.h"
#include "core/base/status.h"

namespace tfrun {

// The object a variant tensor holds (DT_VARIANT: a TensorList). Shared by
// every copy of the tensor and never changed once the tensor holds it: an
// op that "changes" a list makes a new one, as TensorFlow's list kernels
// copy a list they do not own alone.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // TensorFlow's type name of the object ("tensorflow::TensorList").
  virtual std::string TypeName() const = 0;
};

class Tensor {
 public:
  Tensor() = default;

  // Allocates from `allocator`; fails with TensorFlow's OOM text when the
  // allocator refuses. `device` is the full device name for that text.
  static StatusOr<Tensor> Allocate(DType dtype, Shape shape,
                                   Allocator* allocator,
                                   const std::string& device);
  // Host tensor from the process CPU allocator (for constants and tests).
  static StatusOr<Tensor> AllocateHost(DType dtype, Shape shape);
  // A string tensor in host memory. Strings are packed into one buffer
  // (n+1 uint64 offsets, then the bytes), so copies between memories and
  // tasks move it as any other tensor's bytes.
  static StatusOr<Tensor> FromStrings(Shape shape, const std::vector<std::string>& elements);
  // The same, element i being `element(i)` (asked twice: to size the
  // buffer, then to fill it), with no copy of each element on the way: a
  // scalar repeated over a shape costs its packed bytes only.
  static StatusOr<Tensor> FromStringElements(Shape shape, const std::function<std::string_view(int64_t)>& element);
  // The bytes a string tensor of `n` elements and `payload` bytes in all
  // takes (its n + 1 offsets, then the bytes); nullopt past 2^63.
  static std::optional<int64_t> StringTensorBytes(int64_t n, int64_t payload);
  // A tensor of `bytes` raw bytes in `allocator`'s memory, for data that
  // arrives whole (from another task): a string tensor's packed form.
  static StatusOr<Tensor> AllocateBytes(DType dtype, Shape shape, size_t bytes, Allocator* allocator,
                                        const std::string& device);

  // A scalar variant tensor holding `value` (in host memory, where
  // TensorFlow keeps variants; its own tensors live where they were made).
  static StatusOr<Tensor> FromVariant(std::shared_ptr<const VariantValue> value);
  // A variant tensor's object (null for any other tensor).
  const VariantValue* variant() const { return variant_.get(); }
  const std::shared_ptr<const VariantValue>& shared_variant() const { return variant_; }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t num_bytes() const { return num_bytes_; }
  bool is_valid() const { return buffer_ != nullptr; }

  void* raw() const { return buffer_ ? buffer_->data() : nullptr; }
  // The allocator (and so the device memory) the data lives in.
  Allocator* allocator() const { return buffer_ ? buffer_->allocator() : nullptr; }
  template <typename T> T* data() const { return static_cast<T*>(raw()); }
  // Whether another Tensor holds this one's buffer: a variable's update
  // writes in place only where no reader still holds the old value
  // (TensorFlow's copy-on-write for resource variables).
  bool buffer_shared() const { return buffer_.use_count() > 1; }
  // How many Tensors hold this one's buffer (0 without one), and whether
  // `other` holds the same.
  long buffer_holders() const { return buffer_.use_count(); }
  bool SharesBufferWith(const Tensor& other) const { return buffer_ != nullptr && buffer_ == other.buffer_; }

  // The same data under another shape of as many elements (Reshape: no
  // copy, as TensorFlow's Tensor::CopyFrom shares the buffer).
  Tensor Reshaped(Shape shape) const;

  // A copy of this tensor in `allocator`'s memory (a variant tensor: the
  // same object, which is never changed).
  StatusOr<Tensor> CopyTo(Allocator* allocator, const std::string& device) const;

  // Element i as a double (for formatting and comparison); host memory only.
  double GetAsDouble(int64_t i) const;
  // Element i of an integer tensor in host memory (a shape, axis or index),
  // read in its own type: a double would round int64s beyond 2^53, and
  // converting those back is undefined. Other dtypes through a double,
  // 0 where it is out of int64's range.
  int64_t GetAsInt64(int64_t i) const;
  // Element i of a string tensor in host memory.
  std::string_view StringAt(int64_t i) const;

 private:
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  int64_t num_elements_ = 0;
  size_t num_bytes_ = 0;
  std::shared_ptr<Buffer> buffer_;
  std::shared_ptr<const VariantValue> variant_;  // a variant tensor's (its buffer empty)
};

// TensorFlow's ResourceExhaustedError text for a failed allocation.
std::string OomMessage(const Shape& shape, DType dtype,
                       const std::string& device, const Allocator& allocator);

}  // namespace tfrun
