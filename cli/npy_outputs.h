// --out DIR: every fetched tensor as DIR/NAME.npy (NpyFileName); NoOps,
// which have no value, write nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/graph/graph.h"

namespace tfrun {

// A tensor's file name in --out's folder: its name ("scope/w:1", or "w" for
// output 0) with every byte but letters, digits, '.', '_', '-' and ':'
// written as %XX, then ".npy": "scope%2Fw:1.npy". Injective: two tensors
// never share a file.
std::string NpyFileName(std::string_view tensor_name);

// `fetched[i]` is the value of node `fetch[i]`. A missing DIR is created;
// an existing non-directory is a bad command line (exit 2).
// --out DIR: an existing folder, or one that can be made ("-" is refused:
// standard output cannot hold a folder of files). Exit 2 otherwise.
Status CheckNpyOutputDir(const std::string& dir);

// Each fetched tensor's DIR/NAME.npy fits the file system's limits on a
// name and a path and is none of `inputs` (a --feed file): exit 2 before
// anything runs, not a failed write or a lost input after.
Status CheckNpyOutputNames(const std::string& dir, const Graph& graph, const std::vector<NodeOutput>& fetch,
                           const std::vector<std::string>& inputs = {});

Status WriteNpyOutputs(const std::string& dir, const Graph& graph, const std::vector<NodeOutput>& fetch,
                       const std::vector<Tensor>& fetched);

}  // namespace tfrun
