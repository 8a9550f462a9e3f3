// --out DIR: every fetched tensor as DIR/NAME.npy ('/' in NAME becomes
// "__"); NoOps, which have no value, write nothing.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/graph/graph.h"

namespace tfrun {

// `fetched[i]` is the value of node `fetch[i]`. A missing DIR is created;
// an existing non-directory is a bad command line (exit 2).
// --out DIR: an existing folder, or one that can be made ("-" is refused:
// standard output cannot hold a folder of files). Exit 2 otherwise.
Status CheckNpyOutputDir(const std::string& dir);

// Each fetched tensor's DIR/NAME.npy fits the file system's limits on a
// name and a path (exit 2 before anything runs, not a failed write after).
Status CheckNpyOutputNames(const std::string& dir, const Graph& graph, const std::vector<NodeOutput>& fetch);

Status WriteNpyOutputs(const std::string& dir, const Graph& graph, const std::vector<NodeOutput>& fetch,
                       const std::vector<Tensor>& fetched);

}  // namespace tfrun
