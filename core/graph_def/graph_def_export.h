// A Graph written as a TensorFlow GraphDef (--write-graph,
// --write-graph-placed), so that TensorBoard, Netron and TensorFlow itself
// (tf.compat.v1.import_graph_def) read it.
//
// A graph file's nodes become the NodeDefs TensorFlow's Python builds for
// the same program: every attr of the op's OpDef (type and number attrs
// bound from the node's inputs and outputs, the node's own fields, the
// others at their defaults; node_builder.h), a Const's value as
// make_tensor_proto writes it, `_class` for colocation, the device as
// DeviceSpec.to_string writes it, nodes in program order. A TensorFlow
// graph file's nodes are its own NodeDefs, read again from the file, with
// only their devices set (nodes the passes before placement added, such as
// a lowered cond's Switch nodes, are not written: the file as given, with
// the devices its nodes went to). A TF2 call's graph (--call) is refused.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"
#include "core/graph_def/tf_graph.pb.h"

namespace tfrun {

// `devices`: each node's device field, by node id ("" for none).
// `saved_model_tag`: the MetaGraphDef a SavedModel's graph came from;
// `max_file_bytes`: the most a TensorFlow graph file is read again.
// Errors (exit 2) name the node that cannot be written; a GraphDef of 2 GB
// or more (protobuf's limit, which TensorFlow cannot read) is one too.
StatusOr<std::string> GraphDefBytes(const Graph& graph, const std::vector<std::string>& devices, bool text,
                                    const std::string& saved_model_tag, int64_t max_file_bytes = int64_t{64} << 20);

// Whether a path names a text GraphDef (.pbtxt, .pbtext, .txt) or a binary one.
bool IsTextGraphDefPath(const std::string& path);

// An attr in the tables' form (tf_tables.h) as a NodeDef's AttrValue: a
// string, int, float, bool, type or shape, or a list of them; others
// (func, tensor) are an error.
Status TableAttrToProto(const AttrValue& value, tfproto::AttrValue* out);

}  // namespace tfrun
