// TensorFlow's InlineFunctionBody (inline_function_utils.cc), as
// LowerFunctionalOpsPass calls it (lower_function_call_op.cc): a call node
// replaced by its function's body between Identity nodes for its inputs
// and outputs, "Func/<caller>/input/_N" and ".../output/_N", and NoOps
// for its control edges; the body's nodes renamed "<caller>/<name>".
#pragma once

#include "core/base/status.h"
#include "core/graph/function_library.h"
#include "core/graph/graph.h"
#include "core/graph/node_builder.h"

namespace tfrun {

// Who decides the devices of the inlined nodes (InlinedFunctionBodyPlacer).
enum class InlinedBodyPlacer {
  // PartitionedCall, StatefulPartitionedCall and the calls lowering makes
  // (_lower_as_multi_device_function): inputs on their producers' devices
  // and colocated with them, body nodes on their own device with the
  // caller's job/replica/task filled in (the caller's where they have
  // none), outputs free.
  kMultiDevice,
  // A native call (the op names the function): everything on the caller's
  // device.
  kSingleDevice,
};

struct InlineOptions {
  InlinedBodyPlacer placer = InlinedBodyPlacer::kMultiDevice;
  // What the output control NoOp waits for: the FunctionDef's control_ret
  // nodes (multi-device calls) or the output Identities (native calls).
  bool output_control_from_control_rets = true;
  // The caller's name stays: an IdentityN of the outputs (a Session's
  // graph, fetchable), or a NoOp (a function's graph, or no outputs).
  bool keep_caller_fetchable = true;
};

// The node that keeps the name of a node the passes replace (a lowered
// If, Case or While, an inlined call): `spec` (its name, device and
// control inputs) as an IdentityN of `outputs` where the graph keeps such
// nodes fetchable and there are outputs, else as a NoOp.
StatusOr<int> AddNameKeeper(Graph* graph, NodeSpec spec, const std::vector<NodeOutput>& outputs, bool fetchable);

// Readers of `from`, a node the passes replace, read its output k from
// `outputs[k]`; its control edges leave `control`; fetches and targets
// name `kept`.
void RewireReaders(Graph* graph, int from, const std::vector<NodeOutput>& outputs, int control, int kept);

// An error about node `node` of `graph` (bad input, exit 2), located.
Status NodeError(const Graph& graph, const Node& node, const std::string& text);

// Whether TensorFlow inlines `body` at `caller` (ValidateInlining): the
// argument and result types match the call's, and the function is not
// marked _noinline or api_implements. "" when it does, else why not.
std::string WhyNotInlined(const Graph& graph, const Node& caller, const std::string& function,
                          const FunctionBody& body);

// Replaces node `caller` of `graph` with `body`. `graph`'s ids stay
// stable: new nodes are appended, the caller is removed.
Status InlineFunctionBody(Graph* graph, int caller, const FunctionBody& body, const InlineOptions& options);

}  // namespace tfrun
