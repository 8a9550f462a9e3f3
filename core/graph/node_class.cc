#include "core/graph/node_class.h"

#include <utility>

namespace tfrun {

NodeClass NodeClassOf(std::string_view op) {
  // graph.cc's table: REF_CLASS(x) lists x and Ref<x>.
  static constexpr std::pair<std::string_view, NodeClass> kTable[] = {
      {"Switch", NodeClass::kSwitch},
      {"RefSwitch", NodeClass::kSwitch},
      {"_SwitchN", NodeClass::kSwitch},
      {"Merge", NodeClass::kMerge},
      {"RefMerge", NodeClass::kMerge},
      {"_XlaMerge", NodeClass::kMerge},
      {"Enter", NodeClass::kEnter},
      {"RefEnter", NodeClass::kEnter},
      {"Exit", NodeClass::kExit},
      {"RefExit", NodeClass::kExit},
      {"NextIteration", NodeClass::kNextIteration},
      {"RefNextIteration", NodeClass::kNextIteration},
      {"LoopCond", NodeClass::kLoopCond},
      {"ControlTrigger", NodeClass::kControlTrigger},
      {"Const", NodeClass::kConstant},
      {"HostConst", NodeClass::kConstant},
      {"Variable", NodeClass::kVariable},
      {"VariableV2", NodeClass::kVariable},
      {"Identity", NodeClass::kIdentity},
      {"RefIdentity", NodeClass::kIdentity},
      {"Size", NodeClass::kMetadata},
      {"Shape", NodeClass::kMetadata},
      {"Rank", NodeClass::kMetadata},
      {"NoOp", NodeClass::kNoOp},
  };
  for (const auto& [name, cls] : kTable) {
    if (name == op) return cls;
  }
  return NodeClass::kOther;
}

}  // namespace tfrun
