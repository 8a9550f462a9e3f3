// The session's FunctionRuntime (kernel_registry.h): what a call node kept
// in a Session graph (PartitionedCall, StatefulPartitionedCall) runs, as
// TensorFlow's PartitionedCallOp instantiates its function for the node's
// device: the body made as --call makes it (arguments and results pinned
// to that device, nested calls inlined, control flow lowered), placed with
// that device first among every node's candidates and soft placement on,
// then planned once and run on every call with the caller's variables.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "core/runtime/kernel_registry.h"

namespace tfrun {

class SessionFunctionRuntime final : public FunctionRuntime {
 public:
  // `devices`, `kernels` and `profile` must outlive it.
  SessionFunctionRuntime(const DeviceSet& devices, const KernelRegistry& kernels, const CompatProfile& profile)
      : devices_(devices), kernels_(kernels), profile_(profile) {}

  StatusOr<std::vector<Tensor>> Call(const Graph& graph, const Node& call, const std::string& device,
                                     const std::vector<Tensor>& args, VariableStore* variables) override;

 private:
  // A function instantiated for a device: its body, placement and plan.
  // Stable in memory (the executor points at the body and placement).
  struct Instance {
    Graph body;
    Placement placement;
    std::unique_ptr<Executor> executor;
    std::vector<int> args;           // the _Arg node of each argument, by index
    std::vector<NodeOutput> results;  // what each _Retval reads, by index
  };
  // `native`: the node is a native call (its op the function's name),
  // whose attrs bind the function's placeholders; it gets an instance of
  // its own.
  StatusOr<Instance*> Instantiate(const Graph& graph, const Node& call, const std::string& function,
                                  const std::string& device, bool native);

  const DeviceSet& devices_;
  const KernelRegistry& kernels_;
  const CompatProfile& profile_;
  // One call at a time (an Executor runs one run at a time); recursive:
  // a body's own call nodes call back in.
  std::recursive_mutex mu_;
  // By (function, device, the native call node's address or 0): the
  // graphs outlive the runtime's calls.
  std::map<std::tuple<std::string, std::string, uintptr_t>, std::unique_ptr<Instance>> instances_;
  int depth_ = 0;  // calls in progress, nested
};

}  // namespace tfrun
