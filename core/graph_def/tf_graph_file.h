// Reading TensorFlow's graph files into their messages (tf_graph.proto):
// a GraphDef as tf.io.write_graph writes it (text or binary), a
// MetaGraphDef (export_meta_graph's .meta, text or binary) and a SavedModel
// folder or its saved_model.pb(txt). The kind is told by the name where it
// says (".meta", "saved_model.pb"), else by the content: text or binary,
// and which message its first fields belong to.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"
#include "core/graph_def/tf_graph.pb.h"

namespace tfrun {

// The GraphDef a file holds, with what tfrun reads beside it.
struct TfGraphFile {
  tfproto::GraphDef graph_def;
  std::string kind;  // "GraphDef", "MetaGraphDef" or "SavedModel", for messages
  bool text = false;
  // Per NodeDef (by index), where its `name` field is in a text file.
  std::vector<SourceLocation> node_locations;
  // A MetaGraphDef's collections of node names ("train_op", "init_op",
  // "variables" are other kinds and are left out).
  std::vector<std::pair<std::string, std::vector<std::string>>> node_collections;
  std::vector<Graph::QueueRunner> queue_runners;  // its "queue_runners" collection
  // A MetaGraphDef's signatures (signature_def), sorted by name: an
  // output's tensor name ("StatefulPartitionedCall_1:0"), and the output
  // keys sorted.
  struct Signature {
    std::string name;
    std::string output_tensor;
    std::vector<std::string> output_keys;
  };
  std::vector<Signature> signatures;
  // A TF2 SavedModel's object graph (Graph::SavedObjects).
  Graph::SavedObjects saved_objects;
  // A SavedModel's restore (Graph::SavedModelRestore), when its saver
  // names a restore op and the folder holds variables/variables.index.
  Graph::SavedModelRestore saved_model_restore;
};

// Whether `path` should be read as a TensorFlow graph file rather than a
// graph file of tfrun's format: a folder, a TensorFlow extension (.pb,
// .pbtxt, .pbtext, .meta), or content that is not YAML text (`head`: the
// file's first bytes).
bool IsTfGraphPath(const std::string& path, std::string_view head);

// The same, reading the file's first bytes itself ("-" is never one).
bool IsTfGraphFile(const std::string& path);

// `tag`: the SavedModel's MetaGraphDef whose tags include it; empty: the
// first. Errors name the file (exit 2).
StatusOr<TfGraphFile> ReadTfGraphFile(const std::string& path, const std::string& tag, int64_t max_file_bytes);

// The same for bytes in memory (the fuzzer, tests); `name` decides what the
// file's name would.
StatusOr<TfGraphFile> ParseTfGraphBytes(const std::string& bytes, const std::string& name, const std::string& tag);

}  // namespace tfrun
