#include "core/graph/placer_inspection.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/graph/function_library.h"
#include "core/graph/node_builder.h"

namespace tfrun {
namespace {

// TensorFlow's Uniquify: the name, else name_0, name_1, ...
std::string Uniquify(const std::string& name, std::unordered_set<std::string>* names) {
  if (names->insert(name).second) return name;
  for (int counter = 0;; ++counter) {
    std::string candidate = fmt::format("{}_{}", name, counter);
    if (names->insert(candidate).second) return candidate;
  }
}

StatusOr<int> AddIsolatingIdentity(Graph* graph, std::string name, NodeOutput input, const Node& call) {
  NodeSpec spec;
  spec.name = std::move(name);
  spec.op = "Identity";
  spec.inputs = {input};
  spec.location = call.location;  // MergeDebugInfo: the call's
  return AddNode(graph, std::move(spec));
}

Status IsolateNode(Graph* graph, int call) {
  std::unordered_set<std::string> names;
  for (const Node& n : graph->nodes) {
    if (!n.removed) names.insert(n.name);
  }
  const std::string call_name = graph->nodes[call].name;
  // AddInputIdentity: <src>_<call> between each input and the call.
  for (size_t i = 0; i < graph->nodes[call].inputs.size(); ++i) {
    const NodeOutput in = graph->nodes[call].input(i);
    TFRUN_ASSIGN_OR_RETURN(const int id, AddIsolatingIdentity(graph, Uniquify(graph->nodes[in.node].name + "_" +
                                                                              call_name, &names),
                                                              in, graph->nodes[call]));
    graph->SetInput(call, i, {id, 0});
  }
  // AddOutputIdentities: <call>_<dst> on each data edge out, in edge order
  // (as imported: by consumer, then input); <call> for an unused output.
  std::vector<std::pair<int, size_t>> edges;
  std::vector<int> readers = graph->nodes[call].consumers;
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  for (int c : readers) {
    for (size_t i = 0; i < graph->nodes[c].inputs.size(); ++i) {
      if (graph->nodes[c].inputs[i] == call) edges.emplace_back(c, i);
    }
  }
  const NodeProperties* def = graph->PropertiesOf(graph->nodes[call]);
  std::vector<bool> used(def == nullptr ? 0 : def->output_types.size(), false);
  for (const auto& [c, i] : edges) {
    const int output = graph->nodes[c].input(i).index;
    if (output >= 0 && static_cast<size_t>(output) < used.size()) used[output] = true;
    TFRUN_ASSIGN_OR_RETURN(const int id,
                           AddIsolatingIdentity(graph, Uniquify(call_name + "_" + graph->nodes[c].name, &names),
                                                {call, output}, graph->nodes[call]));
    graph->SetInput(c, i, {id, 0});
  }
  for (size_t output = 0; output < used.size(); ++output) {
    if (used[output]) continue;
    TFRUN_RETURN_IF_ERROR(AddIsolatingIdentity(graph, Uniquify(call_name, &names),
                                               {call, static_cast<int>(output)}, graph->nodes[call])
                              .status());
  }
  return Status::Ok();
}

}  // namespace

bool NeedsPlacerInspection(const Graph& graph, const Node& node) {
  if (node.removed || (node.op != "PartitionedCall" && node.op != "StatefulPartitionedCall")) return false;
  if (graph.functions == nullptr) return false;
  const std::string function = CalledFunction(graph, node);
  StatusOr<FunctionSignature> signature = graph.functions->Signature(function);
  if (!signature.ok()) return false;
  const std::vector<std::string>& types = signature->output_types;
  return std::find(types.begin(), types.end(), "RESOURCE") != types.end();
}

Status IsolatePlacerInspectionRequiredOps(Graph* graph) {
  // Over the nodes there before: the Identities it adds come after them.
  const size_t before = graph->nodes.size();
  for (size_t id = 0; id < before; ++id) {
    if (NeedsPlacerInspection(*graph, graph->nodes[id])) TFRUN_RETURN_IF_ERROR(IsolateNode(graph, static_cast<int>(id)));
  }
  return Status::Ok();
}

}  // namespace tfrun
