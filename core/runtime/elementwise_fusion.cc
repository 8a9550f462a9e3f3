#include "core/runtime/elementwise_fusion.h"

#include <algorithm>
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

// `node` through Identity nodes to what they read.
const Node& ThroughIdentities(const Graph& graph, const Node& node) {
  const Node* at = &node;
  while (at->op == "Identity" && at->inputs.size() == 1) at = &graph.nodes[at->inputs[0]];
  return *at;
}

// Whether nothing that runs writes `variable` before `root` has run: each
// of its readers that runs is an Identity, `root` itself, or a reader of
// `root`'s output (the ApplyGradientDescent of replicated towers' summed
// gradient), which runs after it.
bool UnwrittenBefore(const Graph& graph, const std::vector<bool>& runs, const Node& root, const Node& variable) {
  for (const int k : variable.consumers) {
    const Node& reader = graph.nodes[k];
    if (!runs[k] || k == root.id || reader.op == "Identity") continue;
    if (std::find(reader.inputs.begin(), reader.inputs.end(), root.id) == reader.inputs.end()) return false;
  }
  return true;
}

}  // namespace

std::vector<FusionRole> PlanElementwiseFusion(const Graph& graph, const std::vector<bool>& runs,
                                              const std::vector<bool>& preserved,
                                              const std::set<std::pair<int, int>>& fed,
                                              const std::vector<int>& device_of, const std::vector<bool>& fuses) {
  const size_t n = graph.nodes.size();
  std::vector<FusionRole> role(n, FusionRole::kNone);
  std::vector<int> root_of(n, -1);
  // Whether `root` may compute the deferred `child`, which it reads.
  const auto takes = [&](const Node& root, const Node& child) {
    if (role[root.id] == FusionRole::kDeferred) return true;
    if (FusableElementwise(root)) return true;
    // The gradient of a VariableV2's update.
    return root.op == "ApplyGradientDescent" && root.dtype == DType::kFloat32 && root.inputs.size() == 3 &&
           root.inputs[2] == child.id && root.inputs[0] != child.id && root.inputs[1] != child.id &&
           graph.nodes[root.inputs[0]].op == "VariableV2";
  };
  // Consumers before producers: a node's root is known when it is visited
  // (a reader of a lower id, which a pass appended, is not fused into).
  for (size_t k = n; k-- > 0;) {
    const Node& node = graph.nodes[k];
    if (!runs[k] || preserved[k] || !fuses[k] || !node.control_inputs.empty() || fed.count({node.id, 0}) > 0 ||
        !FusableElementwise(node) || node.consumers.size() != 1) {
      continue;
    }
    const Node& reader = graph.nodes[node.consumers[0]];
    if (reader.id < node.id || !runs[reader.id] || device_of[reader.id] != device_of[k] ||
        std::count(reader.inputs.begin(), reader.inputs.end(), node.id) != 1 || !takes(reader, node)) {
      continue;
    }
    const int root = role[reader.id] == FusionRole::kDeferred ? root_of[reader.id] : reader.id;
    bool inputs_kept = true;  // nothing writes them before the root reads them
    for (size_t i = 0; i < node.inputs.size() && inputs_kept; ++i) {
      const NodeOutput in = node.input(i);
      const Node& source = ThroughIdentities(graph, graph.nodes[in.node]);
      inputs_kept = fed.count({in.node, in.index}) > 0 || MakesFreshOutputs(graph.nodes[in.node]) ||
                    source.op == "Const" ||
                    (source.op == "VariableV2" && UnwrittenBefore(graph, runs, graph.nodes[root], source));
    }
    if (!inputs_kept) continue;
    role[k] = FusionRole::kDeferred;
    root_of[k] = root;
    role[root] = FusionRole::kRoot;
  }
  return role;
}

}  // namespace tfrun
