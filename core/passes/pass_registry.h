// The passes TensorFlow runs on a graph before placing it
// (OptimizationPassRegistry's PRE_PLACEMENT phase, graph_execution_state.cc
// InitBaseGraph), as one table in TensorFlow 2.21's order: groups in
// ascending order, passes in registration order within a group. Each row
// that rewrites graphs tfrun reads has its function, one pass a file;
// the other rows are there so the order is TensorFlow's, and say why they
// do nothing here.
#pragma once

#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"

namespace tfrun {

// What a pass may read besides the graph. `devices` is null where the run
// builds its devices after the passes (no pass reads them yet).
struct PassContext {
  Graph* graph = nullptr;
  const DeviceSet* devices = nullptr;
  // GraphOptions.OptimizerOptions.do_function_inlining: every call inlined
  // before placement, not only those lowering makes.
  bool do_function_inlining = false;
};

using PassFn = Status (*)(PassContext& context);

struct PassRow {
  int group;                 // REGISTER_OPTIMIZATION's phase number
  std::string_view phase;    // "PRE_PLACEMENT"
  std::string_view name;     // TensorFlow's class name
  PassFn run;                // nullptr: nothing to do on the graphs tfrun reads yet
  std::string_view why_not;  // for a null `run`: why
};

// The table, in the order the passes run.
const std::vector<PassRow>& PrePlacementPasses();

// Runs every row on the graph, then drops what the passes removed
// (Graph::Compact): the placer sees TensorFlow's ids in TensorFlow's order.
Status RunPrePlacementPasses(Graph* graph, const DeviceSet* devices, bool do_function_inlining = false);

// The passes, each in its file.
Status AccumulateNV2RemovePass(PassContext& context);
Status ParallelConcatRemovePass(PassContext& context);
Status LowerFunctionalOpsPass(PassContext& context);
Status IsolatePlacerInspectionRequiredOpsPass(PassContext& context);

}  // namespace tfrun
