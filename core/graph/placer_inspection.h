// Function calls the placer inspects (TensorFlow 2.21's
// placer_inspection_required_ops_utils.cc): a PartitionedCall or
// StatefulPartitionedCall whose function returns a resource. Such a call
// is kept between Identity nodes before placement
// (IsolatePlacerInspectionRequiredOpsPass, core/passes), and the placer
// colocates its inputs and consumers as its body's groups join them
// (core/placement/colocation_graph.cc), not the call itself.
#pragma once

#include "core/base/status.h"
#include "core/graph/graph.h"

namespace tfrun {

// Whether the placer inspects `node`'s function (IsPlacerInspectionRequired).
bool NeedsPlacerInspection(const Graph& graph, const Node& node);

// IsolatePlacerInspectionRequiredOps: for each such call, in id order, an
// Identity `<src>_<call>` between each input and the call, `<call>_<dst>`
// on each data edge out (by consumer, then input), `<call>` on each unused
// output; names made unique as TensorFlow's Uniquify makes them (`_0`,
// `_1`, ...). The new nodes come after every node there before.
Status IsolatePlacerInspectionRequiredOps(Graph* graph);

}  // namespace tfrun
