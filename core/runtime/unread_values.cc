#include "core/runtime/unread_values.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "core/runtime/node_effects.h"
#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

bool OneOf(std::string_view op, std::initializer_list<std::string_view> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace

bool MayBecomeNoOp(const Graph& graph, const Node& node) {
  const TfOpDef* op = FindTfOp(node.op);
  if (op == nullptr || !op->has_op_def || op->outputs.empty()) return false;
  // IsFreeOfSideEffect.
  if (OneOf(node.op, {"Placeholder", "PlaceholderV2", "PlaceholderWithDefault"})) return false;
  if (op->is_stateful) return false;
  if (std::any_of(op->inputs.begin(), op->inputs.end(), [](const TfArgDef& a) { return a.is_ref; })) return false;
  if (node.op.find("Queue") != std::string::npos || node.op == "_Send") return false;
  if (ModifiesInputsInPlace(graph, node)) return false;
  // SafeToConvertToNoOp's own exclusions.
  if (OneOf(node.op, {"Merge", "RefMerge", "Switch", "RefSwitch", "Enter", "RefEnter", "Exit", "RefExit",
                      "NextIteration", "RefNextIteration", "Assert", "CheckNumerics", "_Retval", "_Arg",
                      "_ParallelConcatUpdate", "TPUExecute", "TPUCompile", "ControlTrigger"})) {
    return false;
  }
  if (node.op.rfind("Submodel", 0) == 0) return false;
  // SafeToRemoveIdentity: an Identity that reads a variable or a _Recv stays.
  if (node.op == "Identity" || node.op == "IdentityN") {
    if (node.inputs.empty()) return false;
    const std::string& input = graph.nodes[node.inputs[0]].op;
    if (OneOf(input, {"Variable", "VariableV2", "AutoReloadVariable", "VarHandleOp", "ReadVariableOp", "_Recv",
                      "_HostRecv"})) {
      return false;
    }
  }
  return true;
}

std::vector<bool> UnreadValues(const Graph& graph, const std::vector<bool>& runs, const std::vector<bool>& preserved,
                               const std::vector<bool>& may_become_noop,
                               const std::set<std::pair<int, int>>& fed) {
  const size_t n = graph.nodes.size();
  std::vector<bool> read(n, false);
  std::vector<int> stack;
  for (size_t id = 0; id < n; ++id) {
    if (runs[id] && (preserved[id] || !may_become_noop[id])) stack.push_back(static_cast<int>(id));
  }
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (read[id]) continue;
    read[id] = true;
    const Node& node = graph.nodes[id];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const NodeOutput in = node.input(i);
      const bool cut = !fed.empty() && fed.count({in.node, in.index}) > 0;
      if (!cut && runs[in.node]) stack.push_back(in.node);
    }
  }
  std::vector<bool> unread(n, false);
  for (size_t id = 0; id < n; ++id) unread[id] = runs[id] && !read[id];
  return unread;
}

}  // namespace tfrun
