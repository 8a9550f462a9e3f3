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

std::vector<int> WrittenReferenceVariables(const Graph& graph, const Node& node) {
  // Assign stores a new buffer for its variable in the map that every
  // variable's node reads (kernel_registry.cc AssignKernel): it changes
  // more than the variable's buffer.
  if (node.op == "Assign") return {};
  const TfOpDef* op = FindTfOp(node.op);
  if (op == nullptr || !op->has_op_def || op->is_stateful || ModifiesInputsInPlace(graph, node)) return {};
  if (op->inputs.size() != node.inputs.size()) return {};
  std::vector<int> written;
  for (size_t i = 0; i < op->inputs.size(); ++i) {
    const TfArgDef& arg = op->inputs[i];
    // A list argument would shift the inputs after it off the arguments.
    if (arg.type == "RESOURCE" || !arg.number_attr.empty() || !arg.type_list_attr.empty()) return {};
    if (!arg.is_ref) continue;
    const Node& producer = graph.nodes[node.inputs[i]];
    if (producer.op != "VariableV2" && producer.op != "Variable") return {};
    if (std::find(written.begin(), written.end(), producer.id) == written.end()) written.push_back(producer.id);
  }
  return written;
}

bool MakesFreshOutputs(const Node& node) {
  // Ops of training steps that read variables' values, each checked: its
  // CPU kernel allocates, or forwards an input only where CanForward
  // allows. Reductions (Sum, Mean) are not: over dimensions of size 1 they
  // output their input reshaped.
  static constexpr std::string_view kFresh[] = {
      "MatMul",          "BatchMatMul",          "BatchMatMulV2",        "BatchMatMulV3",
      "Conv2D",          "Conv2DBackpropInput",  "Conv2DBackpropFilter", "DepthwiseConv2dNative",
      "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
      "L2Loss",          "Mul",                  "AddV2",                "Add",
      "Sub",             "RealDiv",              "Maximum",              "Minimum",
      "SquaredDifference", "Square",             "Neg",                  "AddN",
      "BiasAdd",         "BiasAddGrad",          "Relu",                 "ReluGrad",
      "Softmax",         "MaxPool",              "MaxPoolGrad",          "AvgPool",
      "AvgPoolGrad",     "LRN",                  "LRNGrad",              "FusedBatchNormV3",
      "FusedBatchNormGradV3", "Shape",           "Size",                 "Rank"};
  return std::find(std::begin(kFresh), std::end(kFresh), node.op) != std::end(kFresh);
}

std::vector<int> VariableBufferHolders(const Graph& graph, int variable) {
  std::vector<bool> holds(graph.nodes.size(), false);
  std::vector<int> passing{variable};  // nodes whose outputs may be the buffer
  while (!passing.empty()) {
    const int from = passing.back();
    passing.pop_back();
    for (const int reader : graph.nodes[from].consumers) {
      const Node& node = graph.nodes[reader];
      if (holds[reader] || reader == variable) continue;
      if (std::find(node.inputs.begin(), node.inputs.end(), from) == node.inputs.end()) continue;  // control
      holds[reader] = true;
      if (!MakesFreshOutputs(node)) passing.push_back(reader);
    }
  }
  std::vector<int> holders;
  for (size_t id = 0; id < holds.size(); ++id) {
    if (holds[id]) holders.push_back(static_cast<int>(id));
  }
  return holders;
}

}  // namespace tfrun
