#include "core/runtime/elementwise_fusion.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "core/runtime/node_effects.h"

namespace tfrun {
namespace {

// Mul, Add, AddV2, Sub, or AddN of two inputs (whose sum is the same in
// either order: AddN's order of more depends on which input it forwards).
bool FusableElementwise(const Node& node) {
  const std::string_view op = node.op;
  return node.inputs.size() == 2 && node.num_outputs == 1 && node.dtype == DType::kFloat32 &&
         (op == "Mul" || op == "Add" || op == "AddV2" || op == "Sub" || op == "AddN");
}

// An update of a VariableV2 in place that reads `child` as its whole
// operand: the gradient of ApplyGradientDescent, the value of AssignAdd or
// AssignSub (an ExponentialMovingAverage's update).
bool UpdatesWith(const Graph& graph, const Node& root, const Node& child) {
  if (root.dtype != DType::kFloat32 || root.inputs.empty() || root.inputs[0] == child.id ||
      graph.nodes[root.inputs[0]].op != "VariableV2") {
    return false;
  }
  const size_t operand = root.op == "ApplyGradientDescent"                      ? 2
                         : root.op == "AssignAdd" || root.op == "AssignSub" ? 1
                                                                                : 0;
  if (operand == 0 || root.inputs.size() != operand + 1 || root.inputs[operand] != child.id) return false;
  return std::count(root.inputs.begin(), root.inputs.end(), child.id) == 1;
}

// `node` through Identity nodes to what they read.
const Node& ThroughIdentities(const Graph& graph, const Node& node) {
  const Node* at = &node;
  while (at->op == "Identity" && at->inputs.size() == 1) at = &graph.nodes[at->inputs[0]];
  return *at;
}

}  // namespace

std::vector<FusionRole> PlanElementwiseFusion(const Graph& graph, const std::vector<bool>& runs,
                                              const std::vector<bool>& preserved,
                                              const std::set<std::pair<int, int>>& fed,
                                              const std::vector<int>& device_of, const std::vector<bool>& fuses,
                                              const std::vector<int>& position) {
  const size_t n = graph.nodes.size();
  std::vector<FusionRole> role(n, FusionRole::kNone);
  std::vector<int> root_of(n, -1);
  // The nodes that run after `root` because they read what it computes, by
  // any path (found once a root).
  std::map<int, std::vector<bool>> after_of;
  const auto after = [&](int root, int k) {
    auto [it, added] = after_of.try_emplace(root);
    if (added) {
      it->second.assign(n, false);
      std::vector<int> stack{root};
      while (!stack.empty()) {
        const int at = stack.back();
        stack.pop_back();
        for (const int c : graph.nodes[at].consumers) {
          if (!it->second[c]) {
            it->second[c] = true;
            stack.push_back(c);
          }
        }
      }
    }
    return it->second[k];
  };
  // Whether the deferred `node`'s read of `variable` may wait for `root`:
  // each other writer that runs (any reader but an Identity) runs before
  // `node` in run order (so before its read, which the executor orders by
  // it: `node` holds the variable's buffer), or after `root`.
  const auto unwritten_until_root = [&](const Node& node, int root, const Node& variable) {
    for (const int k : variable.consumers) {
      if (!runs[k] || k == root || graph.nodes[k].op == "Identity") continue;
      // (A RefIdentity or RefSwitch hands the reference on to writers
      // this does not follow.)
      if (graph.nodes[k].op.rfind("Ref", 0) == 0) return false;
      if (position[k] > position[node.id] && !after(root, k)) return false;
    }
    return true;
  };
  // Consumers before producers: a node's root is known when it is visited
  // (a reader of a lower id, which a pass appended, is not fused into).
  for (size_t k = n; k-- > 0;) {
    const Node& node = graph.nodes[k];
    if (!runs[k] || preserved[k] || !fuses[k] || fed.count({node.id, 0}) > 0 || !FusableElementwise(node) ||
        node.consumers.size() != 1) {
      continue;
    }
    const Node& reader = graph.nodes[node.consumers[0]];
    if (reader.id < node.id || !runs[reader.id] || device_of[reader.id] != device_of[k] ||
        std::count(reader.inputs.begin(), reader.inputs.end(), node.id) != 1 ||
        !(role[reader.id] == FusionRole::kDeferred || FusableElementwise(reader) || UpdatesWith(graph, reader, node))) {
      continue;
    }
    const int root = role[reader.id] == FusionRole::kDeferred ? root_of[reader.id] : reader.id;
    bool inputs_kept = true;  // nothing writes them before the root reads them
    for (size_t i = 0; i < node.inputs.size() && inputs_kept; ++i) {
      const NodeOutput in = node.input(i);
      const Node& source = ThroughIdentities(graph, graph.nodes[in.node]);
      inputs_kept = fed.count({in.node, in.index}) > 0 || MakesFreshOutputs(source) || source.op == "Const" ||
                    (source.op == "VariableV2" && unwritten_until_root(node, root, source));
    }
    if (!inputs_kept) continue;
    role[k] = FusionRole::kDeferred;
    root_of[k] = root;
    role[root] = FusionRole::kRoot;
  }
  return role;
}

}  // namespace tfrun
