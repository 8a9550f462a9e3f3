// TensorFlow's tensor lists (list_kernels.cc): the variant a TF2
// TensorArray, a Keras RNN's loop and a while loop's accumulators are made
// of. A list is a VariantValue held by a scalar variant tensor: its element
// dtype, its element shape as far as it is known, and its tensors (an
// unset one reads as zeros of the element shape, as TensorFlow's does). A
// list is never changed: SetItem, PushBack and PopBack make a new one that
// shares the old one's tensors, as TensorFlow's kernels copy a list they do
// not hold alone. The same kernels serve every device (they move whole
// tensors between memories with CopyBytes).
#pragma once

#include <string_view>
#include <vector>

#include "core/runtime/kernel_registry.h"

namespace tfrun {

struct TensorList : VariantValue {
  std::vector<Tensor> tensors;  // an invalid Tensor: not set yet
  DType element_dtype = DType::kFloat32;
  // The element shape as far as it is known: -1 an unknown dimension;
  // `unknown_rank`: nothing known.
  Shape element_shape;
  bool unknown_rank = true;
  int64_t max_num_elements = -1;
  std::string TypeName() const override { return "tensorflow::TensorList"; }
};

// An Optional (tf.experimental.Optional: what Keras 3's train step wraps
// its logs in): a value of some tensors, or none.
struct OptionalValue : VariantValue {
  bool has_value = false;
  std::vector<Tensor> values;
  std::string TypeName() const override { return "tensorflow::data::OptionalVariant"; }
};

// Binds OptionalFromValue, OptionalNone, OptionalHasValue and
// OptionalGetValue for `device_type` (called by BindListKernels).
void BindOptionalKernels(KernelRegistry* registry, std::string_view device_type);

// Binds TensorListReserve, TensorListFromTensor, TensorListGetItem,
// TensorListSetItem, TensorListStack, TensorListLength, TensorListPushBack,
// TensorListPopBack and TensorListElementShape for `device_type`.
void BindListKernels(KernelRegistry* registry, std::string_view device_type);

}  // namespace tfrun
