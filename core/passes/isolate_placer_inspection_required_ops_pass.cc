// IsolatePlacerInspectionRequiredOpsPass (TensorFlow 2.21's
// isolate_placer_inspection_required_ops_pass.cc): calls whose function
// returns a resource kept between Identity nodes (core/graph/placer_inspection.h).
#include "core/graph/placer_inspection.h"
#include "core/passes/pass_registry.h"

namespace tfrun {

Status IsolatePlacerInspectionRequiredOpsPass(PassContext& context) {
  return IsolatePlacerInspectionRequiredOps(context.graph);
}

}  // namespace tfrun
