// What tfrun itself can execute: the kernel implementations each backend
// binds per (op, device type), each with the dtypes it runs (ggml's
// supports_op). Placement never reads this: it follows TensorFlow's own
// tables (kernel_lookup.h); a node placed where no implementation is bound
// fails the run before anything runs (Executor::CheckKernels).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/allocator.h"
#include "core/base/device_types.h"
#include "core/base/philox.h"
#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/graph/graph.h"

namespace tfrun {

// False for kernels that only pass tensor handles (Identity and Reshape
// forward their input's buffer, VariableV2 its variable's, Shape writes
// host memory, NoOp nothing): they queue no
// work on a device, so there is nothing to time or wait for.
bool QueuesDeviceWork(const Node& node);

// Whether input `input` of `node` may be a reference variable not yet
// assigned: Assign's `ref`, which gives it its value, IsVariableInitialized's,
// which asks, and RefSwitch's, which forwards the reference unread (the
// guard `initialized_value()` builds: read only on the branch where the
// variable is initialized). Every other reader of one fails
// (FailedPreconditionError: Attempting to use uninitialized value).
bool TakesUninitializedRef(const Node& node, size_t input);

// Variables live across runs. Reference variables (VariableV2 reads,
// Assign writes) are kept by their VariableV2's node name; resource
// variables by their handle ("localhost/" and the shared name). Two maps,
// so a node named "localhost/w" and a handle of shared name "w" never meet.
// INVARIANT: a resource variable keeps the dtype it was first assigned
// (AssignVariableOp refuses another, as TensorFlow's Var does), so every
// reader that checks its own dtype attr against it reads what it expects.
struct QueueResource;   // queue_resource.h
struct ReaderResource;  // kernels/cpu/queue_kernels.cc
struct VariableStore {
  std::map<std::string, Tensor> ref;
  std::map<std::string, Tensor> resource;
  // Queues (FIFOQueueV2, ...) by their handle's key, made by the queue op's
  // first run and kept across runs, as TensorFlow's resource manager keeps
  // them; `queues_made` numbers the unnamed ones as TensorFlow's unique ids
  // do ("_0_fifo_queue").
  std::map<std::string, std::shared_ptr<QueueResource>> queues;
  int64_t queues_made = 0;
  // The same queues by the name of the node that made each: what a
  // session's queue runners fill.
  std::map<std::string, std::shared_ptr<QueueResource>> queues_by_node;
  // Readers (FixedLengthRecordReaderV2) by their handle's key: the file
  // each is reading and where, kept across runs.
  std::map<std::string, std::shared_ptr<ReaderResource>> readers;
  // Set while a session's queue runner runs its enqueue op (session.cc):
  // an enqueue_many that does not fit whole goes in whole, as TensorFlow's
  // runner thread, blocked, would put the rest in before anything else.
  // A runner's queue so holds at most its capacity and one enqueue more.
  bool queue_runner_enqueue = false;
};

// The stateful random nodes' generators, by node id: each made from its
// node's seeds at its first run and kept across runs, as TensorFlow's
// kernel keeps its GuardedPhiloxRandom. Guarded: nodes that run at the
// same time (executor.h) reserve their draws here together.
class RandomGenerators {
 public:
  // The generator of `node` for a run that writes `outputs` values.
  PhiloxRandom Reserve(int node, int64_t seed, int64_t seed2, int64_t outputs) {
    std::lock_guard<std::mutex> lock(mu_);
    return generators_.try_emplace(node, seed, seed2).first->second.ReserveOutputs(outputs);
  }

 private:
  std::mutex mu_;
  std::map<int, KernelRandom> generators_;
};

// Const values already in device memory, by node id: uploaded on the
// first run only, as TensorFlow's GPU Const kernel holds its tensor.
// Guarded like RandomGenerators.
class DeviceConstants {
 public:
  // Node `node`'s value in device memory: `upload`'s on its first run.
  StatusOr<Tensor> Find(int node, const std::function<StatusOr<Tensor>()>& upload) {
    std::lock_guard<std::mutex> lock(mu_);
    Tensor& uploaded = values_[node];
    if (!uploaded.is_valid()) {
      TFRUN_ASSIGN_OR_RETURN(uploaded, upload());
    }
    return uploaded;
  }

 private:
  std::mutex mu_;
  std::map<int, Tensor> values_;
};

struct StackStore;  // control_flow_kernels.h

// Runs the library functions that call nodes name (PartitionedCall,
// StatefulPartitionedCall, a native call): TensorFlow's
// FunctionLibraryRuntime, which a session provides (it instantiates a
// function's body for a device, places and plans it). `variables`: the
// calling run's store, which the body's resource ops read and write.
class FunctionRuntime {
 public:
  virtual ~FunctionRuntime() = default;
  // The results of the function `call` (a node of `graph`) names, called
  // on `device` with `args`, in order.
  virtual StatusOr<std::vector<Tensor>> Call(const Graph& graph, const Node& call, const std::string& device,
                                             const std::vector<Tensor>& args, VariableStore* variables) = 0;
};

struct KernelContext {
  const Node& node;
  std::vector<Tensor> inputs;
  Allocator* allocator;
  const std::string& device_name;
  VariableStore* variables;
  DeviceConstants* device_constants;
  void* device_context;  // the device's backend state (Device::context)
  Tensor output;         // set by the kernel
  // Set instead by kernels of several outputs (Split), one per output.
  std::vector<Tensor> outputs;
  // Set by Fail: the error is the op's own, which TensorFlow ends with a
  // line naming the node (the executor adds it in the era's style).
  bool op_error = false;
  // The NodeDef's attrs of a node read from a TensorFlow graph file (its
  // seeds, say); null for a graph file's node.
  const NodeAttrs* attrs = nullptr;
  RandomGenerators* random_generators = nullptr;  // the executor's, across runs
  StackStore* stacks = nullptr;                   // the run's stacks (StackV2), dropped when it ends
  // The session's function runtime (null: calls do not run) and the graph
  // `node` belongs to (whose library it names).
  FunctionRuntime* functions = nullptr;
  const Graph* graph = nullptr;
  // A collective's group (collectives.h), set by the executor: its result,
  // empty until the group's first member to run computes it from
  // `collective_inputs` (every member's input in rank order, in host
  // memory; null for the members after the first). Both live for the run.
  Tensor* collective_result = nullptr;
  const std::vector<Tensor>* collective_inputs = nullptr;

  StatusOr<Tensor> Allocate(DType dtype, Shape shape) const {
    return Tensor::Allocate(dtype, std::move(shape), allocator, device_name);
  }
  // The node's output of `shape`, in its dtype.
  Status AllocateOutput(Shape shape) {
    TFRUN_ASSIGN_OR_RETURN(output, Allocate(node.dtype, std::move(shape)));
    return Status::Ok();
  }
  // The same, but in the buffer of the first of `candidates` (inputs) that
  // nothing else holds and matches it (TensorFlow's
  // forward_input_or_allocate_output): the executor hands a kernel an
  // input on its last read alone. Only for kernels that write each output
  // element after reading the same element of that input (elementwise).
  Status ForwardOrAllocateOutput(std::initializer_list<size_t> candidates, Shape shape) {
    for (size_t i : candidates) {
      if (CanForward(i, shape)) {
        output = inputs[i];
        return Status::Ok();
      }
    }
    return AllocateOutput(std::move(shape));
  }
  // Whether input `i` may become the output of `shape`: valid, held by
  // nothing else, of the output's dtype, shape and memory.
  bool CanForward(size_t i, const Shape& shape) const {
    const Tensor& in = inputs[i];
    return in.is_valid() && !in.buffer_shared() && in.dtype() == node.dtype && in.shape() == shape &&
           in.allocator() == allocator && in.variant() == nullptr && in.dtype() != DType::kString;
  }
  // The node's attrs (a TensorFlow graph's NodeDef, defaults filled in):
  // `fallback` where the node has none (a graph file's node).
  int64_t IntAttr(std::string_view name, int64_t fallback = 0) const;
  float FloatAttr(std::string_view name, float fallback = 0) const;
  bool BoolAttr(std::string_view name, bool fallback = false) const;
  std::string StringAttr(std::string_view name, std::string_view fallback = {}) const;
  std::vector<int64_t> IntListAttr(std::string_view name) const;
  // A list attr's elements as the tables write them (types "FLOAT", shapes
  // "(2x-1)", "()" or "?"); empty where the node has none.
  std::vector<std::string> ListAttrItems(std::string_view name) const;
  // An InvalidArgumentError raised by the op's kernel (OP_REQUIRES).
  Status Fail(std::string message) {
    op_error = true;
    return RuntimeError("InvalidArgumentError: " + message);
  }
};

using KernelFn = Status (*)(KernelContext& context);

// The dims of a shape vector (Fill's dims, a random op's shape,
// StridedSliceGrad's shape), each at least 0, with at most 2^63 - 1
// elements, as TensorShapeUtils::MakeShape requires.
StatusOr<Shape> ShapeFromVector(KernelContext& c, const Tensor& dims);

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
// Reshape, ExpandDims and Squeeze (share their input's buffer), Shape and
// Fill: each reads only shapes or one value, so one kernel serves every
// device (Fill writes on the host and copies to the device's memory).
Status ReshapeKernel(KernelContext& context);
Status ShapeKernel(KernelContext& context);
Status FillKernel(KernelContext& context);

// Resource variables (TensorFlow 2's default variables, also in graph
// mode): VarHandleOp's handle names the variable; AssignVariableOp stores
// a value under it, ReadVariableOp reads it (TensorFlow's "Could not find
// variable" when nothing was assigned), VarIsInitializedOp asks.
Status VarHandleKernel(KernelContext& context);
Status ReadVariableKernel(KernelContext& context);
Status AssignVariableKernel(KernelContext& context);
Status VarIsInitializedKernel(KernelContext& context);
// The variable store's key of input `i`, which must be a resource handle:
// a string scalar as VarHandleOp makes it (an error naming the input
// otherwise, never a read of another dtype's bytes as a handle).
StatusOr<std::string> ResourceKey(KernelContext& context, int i);
// The variable the handle of input `i` names, or TensorFlow's "Could not
// find variable" error. The pointer lives as long as the variable store
// entry. Callers check the variable's dtype against their own attr.
StatusOr<Tensor*> LookupResourceVariable(KernelContext& context, int i);

// RandomUniform, RandomStandardNormal and TruncatedNormal (float32 and
// float64): TensorFlow's CPU kernels' numbers for the node's `seed` and
// `seed2` (core/base/philox.h), drawn on the host and copied to the
// device's memory where that is not the host's.
Status RandomKernel(KernelContext& context);

class KernelRegistry;
// Binds the kernels above for `device_type`, for `dtypes` (Shape for its
// int32 and int64 outputs, Fill for `dtypes` without strings), ExpandDims
// and Squeeze.
void BindHandleKernels(KernelRegistry* registry, std::string_view device_type, DTypeSet dtypes);

// Implementations, bound per (op, device type) by the backends.
class KernelRegistry {
 public:
  struct Binding {
    KernelFn fn = nullptr;
    DTypeSet dtypes;  // the node dtypes (its output's) the kernel runs
  };

  void Bind(std::string_view op, std::string_view device_type, DTypeSet dtypes, KernelFn fn) {
    bindings_[{std::string(op), std::string(device_type)}] = Binding{fn, dtypes};
  }
  // The implementation for a node of `op` and `dtype` (any dtype for an op
  // without outputs, NoOp), or nullptr.
  KernelFn Find(std::string_view op, std::string_view device_type, DType dtype, bool has_output = true) const {
    auto it = bindings_.find({std::string(op), std::string(device_type)});
    if (it == bindings_.end() || (has_output && !it->second.dtypes.Contains(dtype))) return nullptr;
    return it->second.fn;
  }
  // Every binding, by (op, device type): what `tfrun ops` lists as runnable.
  const std::map<std::pair<std::string, std::string>, Binding>& bindings() const { return bindings_; }

  // A backend's elementwise fusion (elementwise_fusion.h), for float32
  // nodes, each given the node's own kernel: `defer` runs a deferred node
  // (its output a variant that holds its inputs, nothing computed), and
  // `run_root` a root (its own op's result, computing the deferred inputs
  // block by block on the way, bit for bit what their kernels compute).
  // Where the tensors do not fit a fused pass (shapes that broadcast, too
  // few elements), both compute the deferred inputs and run the node's own
  // kernel. Not ops: `tfrun ops` lists neither. Null where the backend has
  // none: nothing is fused on its devices.
  using FusionKernelFn = Status (*)(KernelContext& context, KernelFn own);
  struct FusionKernels {
    FusionKernelFn defer = nullptr;
    FusionKernelFn run_root = nullptr;
  };
  void BindFusion(std::string_view device_type, FusionKernels kernels) {
    fusion_[std::string(device_type)] = kernels;
  }
  FusionKernels FindFusion(std::string_view device_type) const {
    auto it = fusion_.find(std::string(device_type));
    return it == fusion_.end() ? FusionKernels() : it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, Binding> bindings_;
  std::map<std::string, FusionKernels> fusion_;
};

}  // namespace tfrun
