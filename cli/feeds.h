// --feed NAME=@FILE.npy and --feed NAME=LITERAL: values for any tensor of
// the graph, as sess.run's feed_dict gives them. Each is converted to the
// tensor's dtype as NumPy's asarray does, checked against its known
// dimensions, and refused with TensorFlow's own texts (session.py) in the
// era of the --compat profile: exit 2, before anything runs.
#pragma once

#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/runtime/executor.h"

namespace tfrun {

// Reads every --feed (in order; a tensor fed twice is an error). `limit`
// bounds a literal's bytes, as --max-tensor-bytes bounds constants.
StatusOr<std::vector<Feed>> ResolveFeeds(const std::vector<std::string>& specs, const Graph& graph,
                                         const CompatProfile& profile, int64_t limit);

}  // namespace tfrun
