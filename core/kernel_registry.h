// Which device types have a kernel for which op and dtype (TensorFlow's
// REGISTER_KERNEL_BUILDER calls, tf-semantics.md section 4) as one table
// the placer reads, plus the kernel implementations each backend binds.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/graph.h"
#include "core/status.h"
#include "core/tensor.h"

namespace tfrun {

inline constexpr std::string_view kCpu = "CPU";
inline constexpr std::string_view kGpu = "GPU";

// An input registered with HostMemory whatever the dtype: Split's
// split_dim (its first), ConcatV2's axis (its last).
enum class HostInput : uint8_t { kNone, kFirst, kLast };

struct KernelSupport {
  std::string_view op;
  std::string_view device_type;
  DTypeSet dtypes;
  // Registered with HostMemory: placed on the device, data kept on the host.
  DTypeSet host_memory_dtypes;
  // Only placed, never run: what TF2 eager executes around the graph's ops
  // (eager_program.h); the executor runs the graph's own nodes instead.
  bool eager_only = false;
  HostInput host_input = HostInput::kNone;
};

const std::vector<KernelSupport>& KernelTable();

// The dtype a kernel is looked up by: the output's, or for ops with no
// output (NoOp) any dtype matches.
bool HasKernel(const Node& node, std::string_view device_type);
// The same for an op by name (TF2 eager's _EagerConst, ReadVariableOp, ...).
bool HasKernelFor(std::string_view op, DType dtype, bool has_output, std::string_view device_type);
bool UsesHostMemory(const Node& node, std::string_view device_type);
// Whether input `i` of `node` is read from host memory on `device_type`
// (HostMemory inputs, or the whole kernel in host memory).
bool ReadsInputFromHost(const Node& node, std::string_view device_type, size_t i);
// False for kernels that only pass tensor handles (Identity forwards its
// input's buffer, VariableV2 its variable's, NoOp nothing): they queue no
// work on a device, so there is nothing to time or wait for.
bool QueuesDeviceWork(const Node& node);

// Variables live across the run: VariableV2 reads, Assign writes.
using VariableStore = std::map<std::string, Tensor>;

struct KernelContext {
  const Node& node;
  std::vector<Tensor> inputs;
  Allocator* allocator;
  const std::string& device_name;
  VariableStore* variables;
  // Const values already in device memory, by node id: uploaded on the
  // first run only, as TensorFlow's GPU Const kernel holds its tensor.
  std::map<int, Tensor>* device_constants;
  void* device_context;  // the device's backend state (Device::context)
  Tensor output;         // set by the kernel
  // Set instead by kernels of several outputs (Split), one per output.
  std::vector<Tensor> outputs;
  // Set by Fail: the error is the op's own, which TensorFlow ends with a
  // line naming the node (the executor adds it in the era's style).
  bool op_error = false;

  StatusOr<Tensor> Allocate(DType dtype, Shape shape) const {
    return Tensor::Allocate(dtype, std::move(shape), allocator, device_name);
  }
  // The node's output of `shape`, in its dtype.
  Status AllocateOutput(Shape shape) {
    TFRUN_ASSIGN_OR_RETURN(output, Allocate(node.dtype, std::move(shape)));
    return Status::Ok();
  }
  // An InvalidArgumentError raised by the op's kernel (OP_REQUIRES).
  Status Fail(std::string message) {
    op_error = true;
    return RuntimeError("InvalidArgumentError: " + message);
  }
};

using KernelFn = Status (*)(KernelContext& context);

// Placeholder: reached only when nothing fed it (TensorFlow's
// PlaceholderOp::Compute fails the same way).
Status PlaceholderKernel(KernelContext& context);

// Kernels that only move tensor handles, the same on every device: Const
// (its data copied into the device's memory when that is not where it was
// loaded), Identity (forwards its input's buffer, as TensorFlow does), NoOp,
// VariableV2 (a reference: empty until its Assign ran; only reading it is an
// error, in the executor) and Assign.
Status ConstKernel(KernelContext& context);
Status IdentityKernel(KernelContext& context);
Status NoOpKernel(KernelContext& context);
Status VariableKernel(KernelContext& context);
Status AssignKernel(KernelContext& context);

class KernelRegistry;
// Binds the five above for `device_type`.
void BindHandleKernels(KernelRegistry* registry, std::string_view device_type);

// Implementations, bound per (op, device type) by the backends.
class KernelRegistry {
 public:
  void Bind(std::string_view op, std::string_view device_type, KernelFn fn) {
    fns_[{std::string(op), std::string(device_type)}] = fn;
  }
  KernelFn Find(std::string_view op, std::string_view device_type) const {
    auto it = fns_.find({std::string(op), std::string(device_type)});
    return it == fns_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, KernelFn> fns_;
};

}  // namespace tfrun
