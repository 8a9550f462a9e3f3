// Reads a graph file (graph-format.md, version 1) into a validated Graph:
// names made unique as TensorFlow's Graph.unique_name does, device scopes
// merged, Variables expanded as TF1's tf.Variable, every dtype and shape
// inferred. Errors name the file, line, column and node (exit 2).
#pragma once

#include <cstdint>
#include <string>

#include "core/graph.h"
#include "core/status.h"

namespace tfrun {

// Each limit names its flag in its error message.
struct LoadLimits {
  int64_t max_file_bytes = 64ll << 20;     // the graph file itself (--max-file-bytes)
  int64_t max_tensor_bytes = 16ll << 30;   // all constants together (--max-tensor-bytes)
  int max_nodes = 100000;                  // nodes after expansion (--max-nodes)
  int max_depth = 64;                      // nested scopes (--max-depth)
};

StatusOr<Graph> LoadGraphFile(const std::string& path,
                              const LoadLimits& limits = LoadLimits());

// The same, from text already in memory (`path` is used in messages and to
// resolve `npy:` files).
StatusOr<Graph> LoadGraphText(const std::string& text, const std::string& path,
                              const LoadLimits& limits = LoadLimits());

// The closest of `candidates` to `word`, or "" when none is close
// (for "did you mean" hints).
std::string ClosestMatch(const std::string& word,
                         const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tfrun
