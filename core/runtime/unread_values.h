// The nodes of a run whose values nothing reads, and that TensorFlow's
// Grappler turns into NoOps before the run (dependency_optimizer.cc,
// SafeToConvertToNoOp, which runs by default in every Session.run): a
// gradient's tuple keeps the first layer's input gradient alive only
// through control edges (`group_deps`), so TensorFlow never computes it.
// tfrun skips those kernels the same way: the values are never read, so the
// run's results are the same, and like TensorFlow the run does not fail
// for an error such a node would have raised.
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "core/graph/graph.h"

namespace tfrun {

// Whether Grappler may make `node` a NoOp once no data edge reads it: an op
// TensorFlow defines with outputs, free of side effects (not stateful, no
// reference input, no queue, not in place, not a Placeholder), not control
// flow, not Assert or CheckNumerics, and no Identity of a variable.
bool MayBecomeNoOp(const Graph& graph, const Node& node);

// Of the nodes `runs` marks (a run's transitive fan-in), those no data edge
// from a node that must compute reads, transitively: the nodes that must
// compute are those `preserved` marks (what the run fetches, its targets
// and fed nodes) and those `may_become_noop` leaves out. `fed` marks the
// outputs whose edges a feed cuts, as (node, output index).
std::vector<bool> UnreadValues(const Graph& graph, const std::vector<bool>& runs, const std::vector<bool>& preserved,
                               const std::vector<bool>& may_become_noop,
                               const std::set<std::pair<int, int>>& fed);

}  // namespace tfrun
