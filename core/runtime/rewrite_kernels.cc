#include "core/runtime/rewrite_kernels.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace tfrun {

namespace {

// A shape attr as the importer keeps it: "(2x3)", "()" for a scalar.
StatusOr<Shape> ShapeOfAttr(KernelContext& c, std::string_view name) {
  const std::string text = c.StringAttr(name);
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    return c.Fail(fmt::format("{} needs a fully defined shape, got '{}'", name, text));
  }
  Shape shape;
  std::string_view dims(text.data() + 1, text.size() - 2);
  while (!dims.empty()) {
    const size_t x = dims.find('x');
    const std::string dim(dims.substr(0, x));
    const long long d = std::strtoll(dim.c_str(), nullptr, 10);
    if (d < 0) return c.Fail(fmt::format("{} needs a fully defined shape, got '{}'", name, text));
    shape.push_back(d);
    dims = x == std::string_view::npos ? std::string_view() : dims.substr(x + 1);
  }
  return shape;
}

}  // namespace

// TemporaryVariableOp: a fresh tensor of `shape` under `var_name`.
Status TemporaryVariableKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, ShapeOfAttr(c, "shape"));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  c.variables->ref[c.StringAttr("var_name")] = c.output;
  return Status::Ok();
}

// DestroyTemporaryVariableOp: the variable's value, and the variable gone.
Status DestroyTemporaryVariableKernel(KernelContext& c) {
  c.output = c.inputs[0];
  c.variables->ref.erase(c.StringAttr("var_name"));
  return Status::Ok();
}

// ParallelConcatStart: the concatenation's buffer; every row is written
// by an update before anything reads it.
Status ParallelConcatStartKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, ShapeOfAttr(c, "shape"));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  if (c.output.num_bytes() > 0) std::memset(c.output.raw(), 0, c.output.num_bytes());
  return Status::Ok();
}

// ParallelConcatUpdate: `update` (one row: shape [1, ...]) written at row
// `loc` of `value`, in place; the output is `value`.
Status ParallelConcatUpdateKernel(KernelContext& c) {
  const Tensor& value = c.inputs[0];
  const Tensor& update = c.inputs[1];
  const int64_t loc = c.IntAttr("loc");
  if (value.rank() == 0 || update.rank() != value.rank() || update.shape()[0] != 1) {
    return c.Fail(fmt::format("value and update shape doesn't match: {} vs. {}", ShapeDebugString(value.shape()),
                              ShapeDebugString(update.shape())));
  }
  if (loc < 0 || loc >= value.shape()[0]) {
    return c.Fail(fmt::format("loc {} is out of range [0, {})", loc, value.shape()[0]));
  }
  const size_t row = update.num_bytes();
  if (row * static_cast<size_t>(value.shape()[0]) != value.num_bytes()) {
    return c.Fail(fmt::format("value and update shape doesn't match: {} vs. {}", ShapeDebugString(value.shape()),
                              ShapeDebugString(update.shape())));
  }
  std::memcpy(static_cast<char*>(value.raw()) + row * static_cast<size_t>(loc), update.raw(), row);
  c.output = value;
  return Status::Ok();
}

void BindRewriteKernels(KernelRegistry* registry, std::string_view device_type, DTypeSet dtypes) {
  registry->Bind("TemporaryVariable", device_type, dtypes, TemporaryVariableKernel);
  registry->Bind("DestroyTemporaryVariable", device_type, dtypes, DestroyTemporaryVariableKernel);
  if (device_type == kCpu) {
    registry->Bind("_ParallelConcatStart", device_type, dtypes, ParallelConcatStartKernel);
    registry->Bind("_ParallelConcatUpdate", device_type, dtypes, ParallelConcatUpdateKernel);
  }
}

}  // namespace tfrun
