// RestoreV2 (save_restore_v2_ops.cc): tensors read from a tensor bundle
// (core/checkpoint/tensor_bundle.h), whole or a slice of one (a
// partitioned variable's part), as a Saver's restore op and
// TensorFlow 1's SavedModel loader run it. Every error is TensorFlow's
// text under its class (a missing key, a dtype that is not the stored one,
// a damaged or missing file).
#include <fmt/format.h>

#include <cstring>

#include "core/checkpoint/tensor_bundle.h"
#include "core/tables/tf_tables.h"
#include "kernels/cpu/cpu_eigen.h"

namespace tfrun {
namespace cpu {
namespace {

// A slice of `whole` (shape_and_slices' "6 2 0,2:-": the whole shape,
// then per dimension "start,length" or "-" for all of it), as
// TensorSlice::Parse reads it and RestoreV2 cuts it from the stored tensor.
StatusOr<Tensor> SliceOf(KernelContext& c, const Tensor& whole, const std::string& name, std::string_view spec) {
  std::vector<std::string> words;
  for (size_t at = 0; at <= spec.size();) {
    const size_t space = spec.find(' ', at);
    words.emplace_back(spec.substr(at, space == std::string_view::npos ? std::string_view::npos : space - at));
    if (space == std::string_view::npos) break;
    at = space + 1;
  }
  const int rank = whole.rank();
  auto bad = [&]() {
    return c.Fail(fmt::format("Expected shape_and_slice for {} to be '<dims> <slice>' of {} dimensions, got '{}'",
                              name, rank, spec));
  };
  if (static_cast<int>(words.size()) != rank + 1) return bad();
  Shape stated;
  for (int d = 0; d < rank; ++d) {
    char* end = nullptr;
    stated.push_back(std::strtoll(words[d].c_str(), &end, 10));
    if (end == words[d].c_str() || *end != '\0') return bad();
  }
  if (stated != whole.shape()) {
    return c.Fail(fmt::format("tensor_name = {}; shape in shape_and_slice spec {} does not match the shape stored in "
                              "checkpoint: {}",
                              name, ShapeDebugString(stated), ShapeDebugString(whole.shape())));
  }
  std::vector<int64_t> start(rank), length(rank);
  const std::string& extents = words[rank];
  size_t at = 0;
  for (int d = 0; d < rank; ++d) {
    const size_t colon = extents.find(':', at);
    const std::string extent = extents.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
    at = colon == std::string::npos ? extents.size() + 1 : colon + 1;
    if (extent == "-") {
      start[d] = 0;
      length[d] = whole.shape()[d];
      continue;
    }
    const size_t comma = extent.find(',');
    if (comma == std::string::npos) return bad();
    start[d] = std::strtoll(extent.c_str(), nullptr, 10);
    length[d] = std::strtoll(extent.c_str() + comma + 1, nullptr, 10);
    if (start[d] < 0 || length[d] < 0 || start[d] > whole.shape()[d] || length[d] > whole.shape()[d] - start[d]) {
      return bad();
    }
  }
  if (at <= extents.size()) return bad();
  const Shape part(length.begin(), length.end());
  const std::vector<int64_t> flat_of = SliceOffsets(whole.shape(), start, part);
  const int64_t count = static_cast<int64_t>(flat_of.size());
  if (whole.dtype() == DType::kString) {
    return Tensor::FromStringElements(part, [&](int64_t i) { return whole.StringAt(flat_of[i]); });
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(whole.dtype(), part));
  const size_t element = Info(whole.dtype()).size;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(static_cast<char*>(out.raw()) + i * element, static_cast<const char*>(whole.raw()) + flat_of[i] * element,
                element);
  }
  return out;
}

// RestoreV2(prefix, tensor_names, shape_and_slices; dtypes) -> tensors.
Status RestoreV2Kernel(KernelContext& c) {
  const Tensor& prefix = c.inputs[0];
  const Tensor& names = c.inputs[1];
  const Tensor& slices = c.inputs[2];
  if (prefix.dtype() != DType::kString || prefix.num_elements() != 1) {
    return c.Fail(fmt::format("Input prefix should have a single element, got {} elements.", prefix.num_elements()));
  }
  if (names.dtype() != DType::kString || slices.dtype() != DType::kString) {
    return c.Fail("RestoreV2's tensor_names and shape_and_slices are strings");
  }
  const std::vector<std::string> dtypes = c.ListAttrItems("dtypes");
  if (names.num_elements() != slices.num_elements() || names.num_elements() != static_cast<int64_t>(dtypes.size())) {
    return c.Fail(fmt::format("Input tensor_names and shape_and_slices should be an 1-D tensors of the same size "
                              "as dtypes ({}): got {} and {}",
                              dtypes.size(), names.num_elements(), slices.num_elements()));
  }
  StatusOr<TensorBundleReader> reader = TensorBundleReader::Open(std::string(prefix.StringAt(0)));
  if (!reader.ok()) {
    c.op_error = true;
    return reader.status();
  }
  c.outputs.clear();
  for (int64_t i = 0; i < names.num_elements(); ++i) {
    const std::optional<DType> dtype = DTypeOfTableType(dtypes[static_cast<size_t>(i)]);
    if (!dtype) return c.Fail(fmt::format("RestoreV2 of a {} tensor: tfrun has no such dtype", dtypes[i]));
    StatusOr<Tensor> value = reader->Read(std::string(names.StringAt(i)), *dtype);
    if (!value.ok()) {
      c.op_error = true;
      return value.status();
    }
    if (!slices.StringAt(i).empty()) {
      TFRUN_ASSIGN_OR_RETURN(*value, SliceOf(c, *value, std::string(names.StringAt(i)), slices.StringAt(i)));
    }
    c.outputs.push_back(std::move(*value));
  }
  return Status::Ok();
}

}  // namespace

void RegisterCheckpointKernels(KernelRegistry* registry) {
  registry->Bind("RestoreV2", kCpu, kEveryDType, RestoreV2Kernel);
}

}  // namespace cpu
}  // namespace tfrun
