#include "core/passes/pass_registry.h"

namespace tfrun {

const std::vector<PassRow>& PrePlacementPasses() {
  // Read from TensorFlow 2.21 at run time (TF_CPP_VMODULE=optimization_registry=5;
  // ../shared/notes/tf2-functions.md, "The registered passes in 2.21").
  static const std::vector<PassRow> kRows = {
      {0, "PRE_PLACEMENT", "MlirV1CompatGraphOptimizationPass", nullptr, "disabled in TensorFlow 2.21's Sessions"},
      {10, "PRE_PLACEMENT", "AccumulateNV2RemovePass", AccumulateNV2RemovePass, ""},
      {10, "PRE_PLACEMENT", "LowerFunctionalOpsPass", LowerFunctionalOpsPass, ""},
      {10, "PRE_PLACEMENT", "ParallelConcatRemovePass", ParallelConcatRemovePass, ""},
      {35, "PRE_PLACEMENT", "IsolatePlacerInspectionRequiredOpsPass", IsolatePlacerInspectionRequiredOpsPass, ""},
      {36, "PRE_PLACEMENT", "EncapsulateXlaComputationsPass", nullptr, "only graphs marked for XLA compilation"},
      {37, "PRE_PLACEMENT", "FunctionalizeControlFlowForXlaPass", nullptr, "only graphs marked for XLA compilation"},
      {49, "PRE_PLACEMENT", "SimplifyIciDummyVariablesPass", nullptr, "TPU graphs only"},
      {50, "PRE_PLACEMENT", "ColocatePredecessorTreesPass", nullptr, "off unless enable_tf2min_ici_weight is set"},
      {99999, "PRE_PLACEMENT", "WeakTypeInferencePass", nullptr, "changes no node, device or attr a Session prints"},
  };
  return kRows;
}

Status RunPrePlacementPasses(Graph* graph, const DeviceSet* devices, bool do_function_inlining) {
  PassContext context{graph, devices, do_function_inlining};
  for (const PassRow& row : PrePlacementPasses()) {
    if (row.run != nullptr) TFRUN_RETURN_IF_ERROR(row.run(context));
  }
  graph->Compact();
  return Status::Ok();
}

}  // namespace tfrun
