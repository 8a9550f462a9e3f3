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

struct LoadLimits {
  int64_t max_file_bytes = 64ll << 20;     // the graph file itself
  int64_t max_tensor_bytes = 16ll << 30;   // all constants together
  int max_nodes = 100000;
  int max_depth = 64;                      // nested scopes and value lists
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

}  // namespace tfrun
