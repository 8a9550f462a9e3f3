// Reads a graph file (graph-format.md, version 1) into a validated Graph:
// names made unique as TensorFlow's Graph.unique_name does, device scopes
// merged, Variables expanded as TF1's tf.Variable, every dtype and shape
// inferred. Errors name the file, line, column and node (exit 2).
//
// The steps, each its own unit beside this one: yaml_document (YAML into
// located nodes), yaml_fields (typed fields, located errors), graph_config,
// names_and_scopes, graph_builder (inputs, shape inference), op_attributes
// and tensor_literal (an op's own keys), variables, fetch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"
#include "core/graph/op_registry.h"
#include "core/graph_file/yaml_document.h"

namespace tfrun {

struct LoadOptions {
  // Each limit names its flag in its error message.
  int64_t max_file_bytes = 64ll << 20;     // the graph file itself (--max-file-bytes)
  int64_t max_tensor_bytes = 16ll << 30;   // all constants together (--max-tensor-bytes)
  int max_nodes = 1000000;                 // nodes after expansion (--max-nodes)
  int max_depth = 64;                      // nested scopes (--max-depth)
  // The era's wording of shape and type errors (the --compat profile's).
  ConstructionErrors construction_errors = ConstructionErrors::kTf2;
};

// The ids of the logical devices of a type ("GPU", "CPU") a run will have
// under the graph's config, as tf.config.list_logical_devices lists them:
// asked only by a `for_each_device` scope, after `config` is read. Without
// one, CPU:0 is the only device.
using LogicalDeviceLister = std::function<StatusOr<std::vector<int>>(const GraphConfig& config, std::string_view type)>;

StatusOr<Graph> LoadGraphFile(const std::string& path, const LoadOptions& limits = LoadOptions(),
                              const LogicalDeviceLister& devices = nullptr);

class YamlDocument;

// A regular file's YAML, parsed (LoadGraphFile's first half for a regular
// file: the size limit, a text check, the parse).
StatusOr<YamlDocument> ReadGraphYaml(const std::string& path, const LoadOptions& limits = LoadOptions());

// The graph of a graph file already parsed (LoadGraphFile's second half).
StatusOr<Graph> LoadGraphDocument(const YamlDocument& doc, const std::string& path,
                                  const LoadOptions& limits = LoadOptions(),
                                  const LogicalDeviceLister& devices = nullptr);

// The bytes of a stream (standard input, a FIFO), up to --max-file-bytes:
// read once, before anything decides what they are.
StatusOr<std::string> ReadGraphStream(int fd, const std::string& label, const LoadOptions& limits = LoadOptions());

// The same, from text already in memory (`path` is used in messages and to
// resolve `npy:` files).
StatusOr<Graph> LoadGraphText(const std::string& text, const std::string& path,
                              const LoadOptions& limits = LoadOptions(),
                              const LogicalDeviceLister& devices = nullptr);

}  // namespace tfrun
