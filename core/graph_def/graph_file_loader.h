// Every kind of graph file tfrun reads, by what the file is: a YAML graph
// (graph-format.md), one of TensorFlow's graph files (GraphDef, text or
// binary; MetaGraphDef; SavedModel), or a YAML file that wraps one of
// TensorFlow's with what a YAML graph adds around its nodes:
//
//   graph_def: model.pbtxt     # relative to this file
//   tag: serve                 # a SavedModel's MetaGraphDef (else --tag's)
//   config: {device_count: {CPU: 3}, cluster: {...}}
//   fetch: [loss]
//   targets: [init]
//
// The wrapper's `config`, `fetch` and `targets` read as a YAML graph's do,
// against the imported graph's nodes.
#pragma once

#include <string>

#include "core/base/status.h"
#include "core/graph/graph.h"
#include "core/graph_def/graph_def_import.h"
#include "core/graph_file/loader.h"

namespace tfrun {

StatusOr<Graph> LoadAnyGraphFile(const std::string& path, const LoadOptions& limits,
                                 const GraphDefImportOptions& import, const LogicalDeviceLister& devices);

}  // namespace tfrun
