#include "core/runtime/list_kernels.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

// The most elements a list may hold: each is a Tensor (a handle of 64
// bytes), so 2^26 of them are 4 GiB before any element is set. TensorFlow
// would try to allocate them; tfrun refuses with its out-of-memory class.
constexpr int64_t kMaxListElements = int64_t{1} << 26;

Status TooLong(KernelContext& c, int64_t n) {
  c.op_error = true;
  return RuntimeError(fmt::format("ResourceExhaustedError: a tensor list of {} elements (tfrun holds at most {})", n,
                                  kMaxListElements));
}

// PartialTensorShape::DebugString: "<unknown>", "[2,?]".
std::string PartialShapeText(const Shape& shape, bool unknown_rank) {
  if (unknown_rank) return "<unknown>";
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(d < 0 ? "?" : std::to_string(d));
  return fmt::format("[{}]", fmt::join(dims, ","));
}

struct PartialShape {
  Shape dims;
  bool unknown_rank = true;
  bool FullyDefined() const {
    if (unknown_rank) return false;
    for (int64_t d : dims) {
      if (d < 0) return false;
    }
    return true;
  }
  std::string Text() const { return PartialShapeText(dims, unknown_rank); }
};

// An element_shape input (TensorShapeFromTensor): a scalar -1 is unknown,
// a vector its dims (-1 unknown).
StatusOr<PartialShape> ElementShapeInput(KernelContext& c, int i) {
  const Tensor& t = c.inputs[i];
  PartialShape shape;
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64) {
    return c.Fail(fmt::format("element_shape must be an int32 or int64 tensor, got {}", Info(t.dtype()).tf_name));
  }
  if (t.rank() == 0) {
    if (t.GetAsInt64(0) != -1) {
      return c.Fail(fmt::format("The only valid scalar shape tensor is the fully unknown shape specified as -1."));
    }
    return shape;
  }
  if (t.rank() != 1) return c.Fail(fmt::format("Shape must be at most rank 1 but is rank {}", t.rank()));
  shape.unknown_rank = false;
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    const int64_t d = t.GetAsInt64(k);
    if (d < -1) return c.Fail(fmt::format("Dimension {} must be >= -1", d));
    shape.dims.push_back(d);
  }
  return shape;
}

PartialShape ListShape(const TensorList& list) { return {list.element_shape, list.unknown_rank}; }

// PartialTensorShape::MergeWith: nullopt where they disagree.
std::optional<PartialShape> Merge(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank) return b;
  if (b.unknown_rank) return a;
  if (a.dims.size() != b.dims.size()) return std::nullopt;
  PartialShape merged{a.dims, false};
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (a.dims[d] < 0) {
      merged.dims[d] = b.dims[d];
    } else if (b.dims[d] >= 0 && b.dims[d] != a.dims[d]) {
      return std::nullopt;
    }
  }
  return merged;
}

bool Compatible(const PartialShape& partial, const Shape& shape) {
  return Merge(partial, PartialShape{shape, false}).has_value();
}

StatusOr<const TensorList*> ListInput(KernelContext& c, int i) {
  const Tensor& t = c.inputs[i];
  const auto* list = dynamic_cast<const TensorList*>(t.variant());
  if (t.dtype() != DType::kVariant || t.rank() != 0 || list == nullptr) {
    return c.Fail(fmt::format("Input handle is not a list. Saw: '{}'",
                              t.dtype() == DType::kVariant ? std::string("an empty variant")
                                                           : fmt::format("a {} tensor", Info(t.dtype()).tf_name)));
  }
  return list;
}

StatusOr<DType> ElementDType(KernelContext& c) {
  const std::optional<DType> dtype = DTypeOfTableType(c.StringAttr("element_dtype"));
  if (!dtype || *dtype == DType::kVariant) return c.Fail("tfrun's lists hold numbers: element_dtype is not one");
  return *dtype;
}

Status CheckDType(KernelContext& c, DType op, DType list) {
  if (op != list) {
    return c.Fail(fmt::format("Invalid data types; op elements {} but list elements {}", Info(op).tf_name,
                              Info(list).tf_name));
  }
  return Status::Ok();
}

Status OutputList(KernelContext& c, std::shared_ptr<TensorList> list, int output = -1) {
  TFRUN_ASSIGN_OR_RETURN(Tensor t, Tensor::FromVariant(std::move(list)));
  if (output < 0) {
    c.output = std::move(t);
  } else {
    c.outputs[output] = std::move(t);
  }
  return Status::Ok();
}

// Zeros of `shape` in the kernel's memory: an unset element read.
StatusOr<Tensor> Zeros(KernelContext& c, DType dtype, const Shape& shape) {
  TFRUN_ASSIGN_OR_RETURN(Tensor host, Tensor::AllocateHost(dtype, shape));
  std::memset(host.raw(), 0, host.num_bytes());
  if (c.allocator == host.allocator()) return host;
  return host.CopyTo(c.allocator, c.device_name);
}

Status ReserveKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const PartialShape shape, ElementShapeInput(c, 0));
  const int64_t n = c.inputs[1].GetAsInt64(0);
  if (n < 0) return c.Fail(fmt::format("The num_elements to reserve must be a non negative number, but got {}", n));
  if (n > kMaxListElements) return TooLong(c, n);
  auto list = std::make_shared<TensorList>();
  TFRUN_ASSIGN_OR_RETURN(list->element_dtype, ElementDType(c));
  list->element_shape = shape.dims;
  list->unknown_rank = shape.unknown_rank;
  list->tensors.resize(static_cast<size_t>(n));
  return OutputList(c, std::move(list));
}

Status EmptyKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const PartialShape shape, ElementShapeInput(c, 0));
  auto list = std::make_shared<TensorList>();
  TFRUN_ASSIGN_OR_RETURN(list->element_dtype, ElementDType(c));
  list->element_shape = shape.dims;
  list->unknown_rank = shape.unknown_rank;
  list->max_num_elements = c.inputs[1].GetAsInt64(0);
  return OutputList(c, std::move(list));
}

Status FromTensorKernel(KernelContext& c) {
  const Tensor& t = c.inputs[0];
  TFRUN_ASSIGN_OR_RETURN(const PartialShape shape, ElementShapeInput(c, 1));
  if (t.rank() < 1) {
    return c.Fail(fmt::format("Tensor must be at least a vector, but saw shape: {}", ShapeDebugString(t.shape())));
  }
  const Shape element(t.shape().begin() + 1, t.shape().end());
  if (!Compatible(shape, element)) {
    return c.Fail(fmt::format("Specified a list with shape {} from a tensor with shape {}", shape.Text(),
                              ShapeDebugString(element)));
  }
  auto list = std::make_shared<TensorList>();
  list->element_dtype = t.dtype();
  list->element_shape = shape.dims;
  list->unknown_rank = shape.unknown_rank;
  const int64_t n = t.shape()[0];
  if (n > kMaxListElements) return TooLong(c, n);
  const size_t bytes = n == 0 ? 0 : t.num_bytes() / static_cast<size_t>(n);
  if (t.dtype() == DType::kString) return c.Fail("tfrun's lists hold numbers, not strings");
  for (int64_t i = 0; i < n; ++i) {
    TFRUN_ASSIGN_OR_RETURN(Tensor item, Tensor::Allocate(t.dtype(), element, t.allocator(), c.device_name));
    TFRUN_RETURN_IF_ERROR(
        CopyBytes(item.allocator(), item.raw(), t.allocator(), static_cast<const char*>(t.raw()) + i * bytes, bytes));
    list->tensors.push_back(std::move(item));
  }
  return OutputList(c, std::move(list));
}

// An element's value: its tensor, or zeros of the element shape (the
// list's merged with the op's) where it is unset.
StatusOr<Tensor> ReadElement(KernelContext& c, const TensorList& list, int64_t index, const PartialShape& op_shape) {
  const Tensor& item = list.tensors[static_cast<size_t>(index)];
  if (item.is_valid()) return item;
  std::optional<PartialShape> shape = Merge(ListShape(list), op_shape);
  if (!shape || !shape->FullyDefined()) {
    return c.Fail(fmt::format("Trying to read an uninitialized tensor but element_shape is not fully defined: {} "
                              "and no list element is set.",
                              shape ? shape->Text() : op_shape.Text()));
  }
  return Zeros(c, list.element_dtype, shape->dims);
}

Status GetItemKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(c, 0));
  TFRUN_ASSIGN_OR_RETURN(const DType dtype, ElementDType(c));
  TFRUN_RETURN_IF_ERROR(CheckDType(c, dtype, list->element_dtype));
  const int64_t index = c.inputs[1].GetAsInt64(0);
  const int64_t size = static_cast<int64_t>(list->tensors.size());
  if (index < 0 || index >= size) {
    return c.Fail(fmt::format("Trying to access element {} in a list with {} elements.", index, size));
  }
  TFRUN_ASSIGN_OR_RETURN(const PartialShape shape, ElementShapeInput(c, 2));
  TFRUN_ASSIGN_OR_RETURN(c.output, ReadElement(c, *list, index, shape));
  return Status::Ok();
}

Status SetItemKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(c, 0));
  const Tensor& item = c.inputs[2];
  TFRUN_RETURN_IF_ERROR(CheckDType(c, item.dtype(), list->element_dtype));
  const int64_t index = c.inputs[1].GetAsInt64(0);
  const int64_t size = static_cast<int64_t>(list->tensors.size());
  const bool resize = c.BoolAttr("resize_if_index_out_of_bounds");
  if (index < 0 || (index >= size && !resize)) {
    return c.Fail(fmt::format("Trying to modify element {} in a list with {} elements.", index, size));
  }
  if (!Compatible(ListShape(*list), item.shape())) {
    return c.Fail(fmt::format("Tried to set a tensor with incompatible shape at a list index. Item element shape: "
                              "{} list shape: {}",
                              ShapeDebugString(item.shape()), ListShape(*list).Text()));
  }
  if (index >= kMaxListElements) return TooLong(c, index + 1);
  auto out = std::make_shared<TensorList>(*list);
  if (index >= size) out->tensors.resize(static_cast<size_t>(index) + 1);
  out->tensors[static_cast<size_t>(index)] = item;
  return OutputList(c, std::move(out));
}

Status PushBackKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(c, 0));
  const Tensor& item = c.inputs[1];
  TFRUN_RETURN_IF_ERROR(CheckDType(c, item.dtype(), list->element_dtype));
  if (!Compatible(ListShape(*list), item.shape())) {
    return c.Fail(fmt::format("Tried to push item with incompatible shape to a list. Item element shape: {} list "
                              "shape: {}",
                              ShapeDebugString(item.shape()), ListShape(*list).Text()));
  }
  if (list->max_num_elements >= 0 && static_cast<int64_t>(list->tensors.size()) >= list->max_num_elements) {
    return c.Fail(fmt::format("Tried to push item into a full list list size: {} max_num_elements: {}",
                              list->tensors.size(), list->max_num_elements));
  }
  if (static_cast<int64_t>(list->tensors.size()) >= kMaxListElements) {
    return TooLong(c, static_cast<int64_t>(list->tensors.size()) + 1);
  }
  auto out = std::make_shared<TensorList>(*list);
  out->tensors.push_back(item);
  return OutputList(c, std::move(out));
}

Status PopBackKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(c, 0));
  TFRUN_ASSIGN_OR_RETURN(const DType dtype, ElementDType(c));
  TFRUN_RETURN_IF_ERROR(CheckDType(c, dtype, list->element_dtype));
  if (list->tensors.empty()) return c.Fail("Trying to pop from an empty list.");
  TFRUN_ASSIGN_OR_RETURN(const PartialShape shape, ElementShapeInput(c, 1));
  c.outputs.resize(2);
  TFRUN_ASSIGN_OR_RETURN(c.outputs[1], ReadElement(c, *list, static_cast<int64_t>(list->tensors.size()) - 1, shape));
  auto out = std::make_shared<TensorList>(*list);
  out->tensors.pop_back();
  return OutputList(c, std::move(out), 0);
}

Status LengthKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(c, 0));
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DType::kInt32, {}));
  out.data<int32_t>()[0] = static_cast<int32_t>(list->tensors.size());
  c.output = std::move(out);
  return Status::Ok();
}

Status ElementShapeKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(c, 0));
  const bool wide = c.node.dtype == DType::kInt64;
  const Shape dims = list->unknown_rank ? Shape{} : list->element_shape;
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(c.node.dtype, list->unknown_rank
                                                                             ? Shape{}
                                                                             : Shape{static_cast<int64_t>(dims.size())}));
  for (int64_t k = 0; k < out.num_elements(); ++k) {
    const int64_t d = list->unknown_rank ? -1 : dims[static_cast<size_t>(k)];
    if (wide) {
      out.data<int64_t>()[k] = d;
    } else {
      out.data<int32_t>()[k] = static_cast<int32_t>(d);
    }
  }
  c.output = std::move(out);
  return Status::Ok();
}

// TensorListStack: the elements stacked along a new first dimension, the
// unset ones as zeros; the element shape from the list, the op and the
// first set element.
Status StackKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const TensorList* list, ListInput(c, 0));
  TFRUN_ASSIGN_OR_RETURN(const DType dtype, ElementDType(c));
  TFRUN_RETURN_IF_ERROR(CheckDType(c, dtype, list->element_dtype));
  TFRUN_ASSIGN_OR_RETURN(const PartialShape op_shape, ElementShapeInput(c, 1));
  const int64_t expected = c.IntAttr("num_elements", -1);
  const int64_t n = static_cast<int64_t>(list->tensors.size());
  if (expected != -1 && expected != n) {
    return c.Fail(fmt::format("Operation expected a list with {} elements but got a list with {} elements.",
                              expected, n));
  }
  std::optional<PartialShape> shape = Merge(ListShape(*list), op_shape);
  if (!shape) {
    return c.Fail(fmt::format("Incompatible shapes: {} and {}", ListShape(*list).Text(), op_shape.Text()));
  }
  if (!shape->FullyDefined()) {
    if (n == 0) {
      return c.Fail(fmt::format("Tried to stack elements of an empty list with non-fully-defined element_shape: {}",
                                shape->Text()));
    }
    const Tensor* first = nullptr;
    for (const Tensor& t : list->tensors) {
      if (t.is_valid()) {
        first = &t;
        break;
      }
    }
    if (first == nullptr) {
      return c.Fail(fmt::format("Tried to stack list which only contains uninitialized tensors and has a "
                                "non-fully-defined element_shape: {}",
                                shape->Text()));
    }
    shape = Merge(*shape, PartialShape{first->shape(), false});
  }
  Shape out_shape = {n};
  out_shape.insert(out_shape.end(), shape->dims.begin(), shape->dims.end());
  TFRUN_ASSIGN_OR_RETURN(c.output, c.Allocate(dtype, out_shape));
  const size_t bytes = Info(dtype).size * static_cast<size_t>(NumElements(shape->dims).value_or(0));
  for (int64_t i = 0; i < n; ++i) {
    TFRUN_ASSIGN_OR_RETURN(const Tensor item, ReadElement(c, *list, i, *shape));
    if (item.shape() != shape->dims) {
      return c.Fail(fmt::format("Incompatible shapes: {} and {}", ShapeDebugString(item.shape()),
                                ShapeDebugString(shape->dims)));
    }
    TFRUN_RETURN_IF_ERROR(CopyBytes(c.output.allocator(), static_cast<char*>(c.output.raw()) + i * bytes,
                                    item.allocator(), item.raw(), bytes));
  }
  return Status::Ok();
}

Status OptionalFromValueKernel(KernelContext& c) {
  auto optional = std::make_shared<OptionalValue>();
  optional->has_value = true;
  optional->values = c.inputs;
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromVariant(std::move(optional)));
  return Status::Ok();
}

Status OptionalNoneKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromVariant(std::make_shared<OptionalValue>()));
  return Status::Ok();
}

StatusOr<const OptionalValue*> OptionalInput(KernelContext& c) {
  const auto* optional = dynamic_cast<const OptionalValue*>(c.inputs[0].variant());
  if (optional == nullptr) return c.Fail("Input tensor must be a scalar DT_VARIANT tensor holding an Optional");
  return optional;
}

Status OptionalHasValueKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const OptionalValue* optional, OptionalInput(c));
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DType::kBool, {}));
  out.data<bool>()[0] = optional->has_value;
  c.output = std::move(out);
  return Status::Ok();
}

Status OptionalGetValueKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const OptionalValue* optional, OptionalInput(c));
  if (!optional->has_value) return c.Fail("The optional does not have a value.");
  if (static_cast<int>(optional->values.size()) != c.node.num_outputs) {
    return c.Fail(fmt::format("The expected type of the optional's components does not match: it holds {} "
                              "components, the op reads {}",
                              optional->values.size(), c.node.num_outputs));
  }
  for (const Tensor& value : optional->values) {
    TFRUN_ASSIGN_OR_RETURN(Tensor out, value.CopyTo(c.allocator, c.device_name));
    c.outputs.push_back(std::move(out));
  }
  return Status::Ok();
}

}  // namespace

void BindOptionalKernels(KernelRegistry* registry, std::string_view device_type) {
  const DTypeSet variant{DType::kVariant};
  registry->Bind("OptionalFromValue", device_type, variant, OptionalFromValueKernel);
  registry->Bind("OptionalNone", device_type, variant, OptionalNoneKernel);
  registry->Bind("OptionalHasValue", device_type, DTypeSet{DType::kBool}, OptionalHasValueKernel);
  registry->Bind("OptionalGetValue", device_type, kEveryDType, OptionalGetValueKernel);
}

void BindListKernels(KernelRegistry* registry, std::string_view device_type) {
  // The node's dtype is its first output's: the variant of most, the
  // element dtype of GetItem and Stack, the shape's of ElementShape.
  const DTypeSet any = kMovedTypes | DTypeSet{DType::kVariant};
  BindOptionalKernels(registry, device_type);
  registry->Bind("TensorListReserve", device_type, any, ReserveKernel);
  registry->Bind("EmptyTensorList", device_type, any, EmptyKernel);
  registry->Bind("TensorListFromTensor", device_type, any, FromTensorKernel);
  registry->Bind("TensorListGetItem", device_type, any, GetItemKernel);
  registry->Bind("TensorListSetItem", device_type, any, SetItemKernel);
  registry->Bind("TensorListPushBack", device_type, any, PushBackKernel);
  registry->Bind("TensorListPopBack", device_type, any, PopBackKernel);
  registry->Bind("TensorListStack", device_type, any, StackKernel);
  registry->Bind("TensorListLength", device_type, any, LengthKernel);
  registry->Bind("TensorListElementShape", device_type, DTypeSet{DType::kInt32, DType::kInt64}, ElementShapeKernel);
}

}  // namespace tfrun
