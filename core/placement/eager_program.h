// What TF2 eager executes for the program a graph file stands for, and on
// which device (`--compat eager`). The program is the graph file's nodes
// as TF2 Python lines in file order: a Const is tf.constant(...), a
// Variable tf.Variable(...) (a resource variable), an op tf.matmul(...),
// tf.add_n(...), ...; tf.global_variables_initializer()'s NoOps have no
// counterpart. Read from TensorFlow's sources:
//   python/framework/constant_op.py  tf.constant: convert, then Reshape/Fill
//   python/eager/pywrap_tensor.cc    host tensor, Cast for bfloat16, then
//                                    _EagerConst unless the scope is CPU:0;
//                                    Python scalars cached
//   python/eager/context.py          a device scope is merged over CPU:0
//   python/ops/resource_variable_ops.py  VarHandleOp, AssignVariableOp,
//                                    ReadVariableOp per read
//   python/ops/math_ops.py           add_n of one input, cast to its own dtype
//   core/common_runtime/eager/placement_utils.cc, core.cc, context.cc
//                                    resource and small-int pinning, then
//                                    SelectDevice (priority, soft placement)
// Pure logic, like the placer: the executor then runs the graph's nodes on
// the devices this gives them.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/placer.h"

namespace tfrun {

// One "Executing op OP in device DEVICE" line.
struct EagerOp {
  std::string op;
  int device = 0;  // index into the DeviceSet
  int node = 0;    // the graph node it belongs to
};

// What print() of a fetched node shows.
enum class EagerValue {
  kTensor,    // tf.Tensor(...)
  kVariable,  // <tf.Variable 'v:0' shape=... dtype=..., numpy=...>
  kNone,      // None: a NoOp, or what eager never runs (init)
};

// Beside the Placement (device_of for every graph node, which the
// executor reads): what eager runs and what each node's value is.
struct EagerPlan {
  std::vector<EagerOp> executed;  // in program order, up to a failure
  std::vector<EagerValue> value;  // per node id
  std::vector<int> variable_of;   // per node id: the VariableV2 a kVariable value is, else -1
};

// Plans the whole program. On a placement failure (InvalidArgumentError,
// exit 3) `plan->executed` holds what ran before it, as TensorFlow has
// logged it by then.
Status PlanEager(const Graph& graph, const DeviceSet& devices, bool allow_soft_placement, Placement* placement,
                 EagerPlan* plan);

// What print() of node `id` executes before it prints: printing a
// Variable reads it (ReadVariableOp, then Identity under its device).
std::vector<EagerOp> EagerPrintOps(const Placement& placement, const EagerPlan& plan, int id);

// The node whose value the executor fetches for printing node `id`: a
// Variable's read for what is the Variable in eager, else `id`.
int EagerValueNode(const Graph& graph, const EagerPlan& plan, int id);

}  // namespace tfrun
