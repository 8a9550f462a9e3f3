#include "core/placement/compat_profile.h"

namespace tfrun {
namespace {

// The default first: --compat lists them in this order.
constexpr CompatProfile kProfiles[] = {
    {"tf2", false, true, PlacementLineStyle::kNameOpDevice, ImportOrder::kFile,
     true, false, true, false, false, PlacementErrorStyle::kTf2, ExecutionModel::kSession,
     NodeErrorLine::kName, false, ConstructionErrors::kTf2, false, true},
    // TF 1.14 to 2.3 (1.15 the most used): the tf2 Session with the XLA
    // devices by default, NumPy 1 and TF 1.x's Python texts.
    {"tf1.15", false, true, PlacementLineStyle::kNameOpDevice, ImportOrder::kFile,
     true, false, false, false, false, PlacementErrorStyle::kTf2, ExecutionModel::kSession,
     NodeErrorLine::kName, true, ConstructionErrors::kTf1, true, false},
    {"tf1", false, true, PlacementLineStyle::kNameOpDevice, ImportOrder::kStack,
     true, false, false, false, false, PlacementErrorStyle::kTf1, ExecutionModel::kSession,
     NodeErrorLine::kNodeDef, true, ConstructionErrors::kTf1, false, false},
    {"tf0", true, false, PlacementLineStyle::kNameDevice, ImportOrder::kStack,
     false, true, false, false, false, PlacementErrorStyle::kTf0, ExecutionModel::kSession,
     NodeErrorLine::kNodeDef, true, ConstructionErrors::kTf1, false, false},
    {"eager", false, true, PlacementLineStyle::kExecutingOp, ImportOrder::kFile,
     true, false, true, true, true, PlacementErrorStyle::kEager, ExecutionModel::kEager,
     NodeErrorLine::kName, false, ConstructionErrors::kTf2, false, true},
};

}  // namespace

const CompatProfile* FindProfile(std::string_view name) {
  for (const CompatProfile& p : kProfiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> ProfileNames() {
  std::vector<std::string> names;
  for (const CompatProfile& p : kProfiles) names.emplace_back(p.name);
  return names;
}

}  // namespace tfrun
