#include "core/runtime/node_effects.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <string_view>

#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

bool BoolAttr(const Graph& graph, const Node& node, std::string_view name) {
  if (node.properties < 0) return false;
  const NodeAttrs& attrs = graph.properties[node.properties].attrs;
  const auto it = attrs.find(name);
  return it != attrs.end() && it->second.type == "bool" && it->second.items.size() == 1 &&
         it->second.items[0] == "true";
}

// Stateful, or taking a reference or a handle, yet changing nothing other
// nodes read: the variables' own nodes and reads, and the random ops, each
// drawing from its own generator (RandomGenerators, by node).
bool OnlyReadsSharedState(std::string_view op) {
  static constexpr std::string_view kReaders[] = {
      "VariableV2",         "Variable",      "VarHandleOp",          "ReadVariableOp",  "VarIsInitializedOp",
      "IsVariableInitialized", "RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt"};
  return std::find(std::begin(kReaders), std::end(kReaders), op) != std::end(kReaders);
}

}  // namespace

bool ModifiesInputsInPlace(const Graph& graph, const Node& node) {
  std::string lower = node.op;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("inplace") != std::string::npos) return true;
  return BoolAttr(graph, node, "in_place") || BoolAttr(graph, node, "inplace");
}

bool ChangesSharedState(const Graph& graph, const Node& node) {
  if (OnlyReadsSharedState(node.op)) return false;
  const TfOpDef* op = FindTfOp(node.op);
  if (op == nullptr || !op->has_op_def || op->is_stateful) return true;
  for (const TfArgDef& arg : op->inputs) {
    if (arg.is_ref || arg.type == "RESOURCE") return true;
  }
  return ModifiesInputsInPlace(graph, node);
}

}  // namespace tfrun
