// What kind of node an op makes, computed once when the node joins its
// graph (TensorFlow's Node::GetNodeClassForOp in graph.cc): the executor,
// the placer and the loaders ask the class, never compare op names, so a
// Ref form (RefSwitch, RefEnter) is what its plain form is everywhere.
#pragma once

#include <cstdint>
#include <string_view>

namespace tfrun {

enum class NodeClass : uint8_t {
  kOther,
  kSwitch,         // Switch, RefSwitch, _SwitchN
  kMerge,          // Merge, RefMerge, _XlaMerge
  kEnter,          // Enter, RefEnter
  kExit,           // Exit, RefExit
  kNextIteration,  // NextIteration, RefNextIteration
  kLoopCond,
  kControlTrigger,
  kConstant,  // Const, HostConst
  kVariable,  // Variable, VariableV2
  kIdentity,  // Identity, RefIdentity
  kMetadata,  // Size, Shape, Rank: read only their input's shape
  kNoOp,
};

NodeClass NodeClassOf(std::string_view op);

// The classes TensorFlow's executor treats as control flow: a graph with
// any of them runs on the frame-aware propagator.
inline bool IsControlFlow(NodeClass c) {
  return c == NodeClass::kSwitch || c == NodeClass::kMerge || c == NodeClass::kEnter || c == NodeClass::kExit ||
         c == NodeClass::kNextIteration || c == NodeClass::kLoopCond || c == NodeClass::kControlTrigger;
}

}  // namespace tfrun
