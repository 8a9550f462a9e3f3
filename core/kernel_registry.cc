#include "core/kernel_registry.h"

#include <fmt/format.h>

namespace tfrun {

const std::vector<KernelSupport>& KernelTable() {
  static const DTypeSet kInt32 = {DType::kInt32};
  // identity_op.cc registers GPU Identity for tstring with HostMemory.
  static const DTypeSet kInt32AndString = {DType::kInt32, DType::kString};
  static const std::vector<KernelSupport> table = {
      {"Const", kCpu, kAllTypesAndString, {}},
      {"Const", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kBool, DType::kInt32}, kInt32},
      {"MatMul", kCpu, kNumericTypes, {}},
      {"MatMul", kGpu, kFloatTypes, {}},
      // sparse_matmul_op.cc: CPU only (keyed by its float32 product).
      {"SparseMatMul", kCpu, DTypeSet{DType::kFloat32}, {}},
      {"AddN", kCpu, kNumericTypes, {}},
      {"AddN", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kInt32}, kInt32},
      {"Add", kCpu, kNumericTypes, {}},
      {"Add", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kInt32}, kInt32},
      {"Sub", kCpu, kNumericTypes, {}},
      {"Sub", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kInt32}, kInt32},
      {"Mul", kCpu, kNumericTypes, {}},
      {"Mul", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kInt32}, kInt32},
      {"Identity", kCpu, kAllTypesAndString, {}},
      {"Identity", kGpu, kAllTypesAndString, kInt32AndString},
      {"Cast", kCpu, kAllTypes, {}},
      {"VariableV2", kCpu, kAllTypes, {}},
      {"VariableV2", kGpu, kFloatTypes | DTypeSet{DType::kInt64}, {}},
      {"Assign", kCpu, kAllTypes, {}},
      {"Assign", kGpu, kFloatTypes | DTypeSet{DType::kInt64}, {}},
      {"NoOp", kCpu, kAllTypes, {}},
      {"NoOp", kGpu, kAllTypes, {}},
      // constant_op.cc registers Placeholder on every device (DEVICE_DEFAULT)
      // "so that a placeholder in a GPU scope places without soft placement".
      {"Placeholder", kCpu, kAllTypesAndString, {}},
      {"Placeholder", kGpu, kAllTypesAndString, {}},
      // split_op.cc, concat_op.cc: the axis always in host memory; GPU
      // Split for float types only, GPU ConcatV2 also for int64 and bool,
      // and for int32 entirely in host memory.
      {"Split", kCpu, kAllTypes, {}, false, HostInput::kFirst},
      {"Split", kGpu, kFloatTypes, {}, false, HostInput::kFirst},
      {"ConcatV2", kCpu, kAllTypes, {}, false, HostInput::kLast},
      {"ConcatV2", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kBool, DType::kInt32}, kInt32, false,
       HostInput::kLast},
      // bias_op.cc: GPU number types and int32 (in device memory);
      // relu_op.cc: GPU number types.
      {"BiasAdd", kCpu, kNumericTypes, {}},
      {"BiasAdd", kGpu, kFloatTypes | DTypeSet{DType::kInt32}, {}},
      {"Relu", kCpu, kNumericTypes, {}},
      {"Relu", kGpu, kFloatTypes, {}},
      // What TF2 eager executes besides the graph's own ops (placement only:
      // the executor runs the graph's Const, VariableV2, Assign and Identity
      // in their stead). _EagerConst is registered as Identity is.
      {"_EagerConst", kCpu, kAllTypesAndString, {}, true},
      {"_EagerConst", kGpu, kAllTypes, kInt32, true},
      {"Reshape", kCpu, kAllTypesAndString, {}, true},
      {"Reshape", kGpu, kAllTypes, kInt32, true},
      {"Fill", kCpu, kAllTypesAndString, {}, true},
      {"Fill", kGpu, kNumericTypes, kInt32, true},  // no bool Fill on GPUs (constant_op.py)
      {"VarHandleOp", kCpu, kAllTypes, {}, true},
      {"VarHandleOp", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kBool}, {}, true},
      {"ReadVariableOp", kCpu, kAllTypes, {}, true},
      {"ReadVariableOp", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kBool}, {}, true},
      {"AssignVariableOp", kCpu, kAllTypes, {}, true},
      {"AssignVariableOp", kGpu, kFloatTypes | DTypeSet{DType::kInt64, DType::kBool}, {}, true},
  };
  return table;
}

namespace {

const KernelSupport* Lookup(std::string_view op, DType dtype, bool has_output, std::string_view device_type) {
  for (const KernelSupport& k : KernelTable()) {
    if (k.op == op && k.device_type == device_type && (!has_output || k.dtypes.Contains(dtype))) return &k;
  }
  return nullptr;
}

const KernelSupport* Lookup(const Node& node, std::string_view device_type) {
  return Lookup(node.op, node.dtype, node.has_output(), device_type);
}

}  // namespace

bool HasKernelFor(std::string_view op, DType dtype, bool has_output, std::string_view device_type) {
  return Lookup(op, dtype, has_output, device_type) != nullptr;
}

Status ConstKernel(KernelContext& c) {
  if (c.node.value.allocator() == c.allocator) {
    c.output = c.node.value;
    return Status::Ok();
  }
  Tensor& uploaded = (*c.device_constants)[c.node.id];
  if (!uploaded.is_valid()) {
    TFRUN_ASSIGN_OR_RETURN(uploaded, c.node.value.CopyTo(c.allocator, c.device_name));
  }
  c.output = uploaded;
  return Status::Ok();
}

Status PlaceholderKernel(KernelContext& c) {
  const bool shaped = !c.node.unknown_rank && !c.node.shape.empty();  // expected_shape_.dims() > 0
  return c.Fail(fmt::format("You must feed a value for placeholder tensor '{}' with dtype {}{}", c.node.name,
                            Info(c.node.dtype).tf_name,
                            shaped ? " and shape " + ShapeDebugString(c.node.shape) : ""));
}

Status IdentityKernel(KernelContext& c) {
  c.output = c.inputs[0];
  return Status::Ok();
}

Status NoOpKernel(KernelContext&) { return Status::Ok(); }

Status VariableKernel(KernelContext& c) {
  auto it = c.variables->find(c.node.name);
  if (it != c.variables->end()) c.output = it->second;
  return Status::Ok();
}

Status AssignKernel(KernelContext& c) {
  (*c.variables)[c.node.variable] = c.inputs[1];
  c.output = c.inputs[1];
  return Status::Ok();
}

void BindHandleKernels(KernelRegistry* registry, std::string_view device_type) {
  registry->Bind("Const", device_type, ConstKernel);
  registry->Bind("Identity", device_type, IdentityKernel);
  registry->Bind("NoOp", device_type, NoOpKernel);
  registry->Bind("VariableV2", device_type, VariableKernel);
  registry->Bind("Assign", device_type, AssignKernel);
  registry->Bind("Placeholder", device_type, PlaceholderKernel);
}

bool HasKernel(const Node& node, std::string_view device_type) {
  return Lookup(node, device_type) != nullptr;
}

bool QueuesDeviceWork(const Node& node) {
  return node.op != "Identity" && node.op != "NoOp" && node.op != "VariableV2" && node.op != "Placeholder";
}

bool UsesHostMemory(const Node& node, std::string_view device_type) {
  const KernelSupport* k = Lookup(node, device_type);
  return k != nullptr && node.has_output() &&
         k->host_memory_dtypes.Contains(node.dtype);
}

bool ReadsInputFromHost(const Node& node, std::string_view device_type, size_t i) {
  const KernelSupport* k = Lookup(node, device_type);
  if (k == nullptr) return false;
  if (node.has_output() && k->host_memory_dtypes.Contains(node.dtype)) return true;
  return (k->host_input == HostInput::kFirst && i == 0) ||
         (k->host_input == HostInput::kLast && i + 1 == node.inputs.size());
}

}  // namespace tfrun
