// A GraphDef into a Graph, as TensorFlow's GraphConstructor imports the
// GraphDef a Session is given (graph_constructor.cc): nodes in its
// lowest-ready-index topological order, inputs and control inputs resolved,
// default attrs filled from TensorFlow's OpDefs (core/tables), each input's
// and output's type bound from the attrs and checked along every edge,
// requested devices and `_class` colocation kept. Placement then reads the
// NodeDefs' own attrs (Graph::imported). What Python's import_graph_def
// does to devices first is a choice (ImportSemantics).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/graph/function_library.h"
#include "core/graph/graph.h"
#include "core/graph_def/tf_graph_file.h"

namespace tfrun {

// How the file's devices reach the placer.
enum class ImportSemantics {
  // As given: Session::Create, LoadMetagraphIntoSession, the C API.
  kSession,
  // tf.compat.v1.import_graph_def / import_meta_graph (importer.py
  // _ProcessNewOps): a `_class` member takes the device of the first group
  // it names that has one (or none), every other node keeps its own.
  kPython,
};

struct GraphDefImportOptions {
  ImportSemantics semantics = ImportSemantics::kSession;
  std::string saved_model_tag;  // "": the SavedModel's first MetaGraphDef
  int64_t max_file_bytes = 64ll << 20;
  int max_nodes = 1000000;
  int64_t max_tensor_bytes = 16ll << 30;
};

// `path` names the file in messages. Errors (exit 2) are TensorFlow's texts
// where it has one, with the file, line and node. The graph's function
// library, if it has one, becomes Graph::functions.
StatusOr<Graph> ImportGraphDef(const TfGraphFile& file, const std::string& path, const GraphDefImportOptions& options);

// A function's body as FunctionInstantiationHelper lays it out (its _Arg,
// node_def and _Retval nodes), imported the same way; its inputs may name a
// node's output by its OpDef's name ("add:z:0"), and its nodes may call
// `library`'s functions.
StatusOr<Graph> ImportFunctionGraphDef(const TfGraphFile& body, const std::string& path,
                                       const GraphDefImportOptions& options,
                                       std::shared_ptr<const FunctionLibrary> library);

// A NodeDef's attr in the tables' form; `def_type` is the OpDef's type for
// it, where the op has the attr.
AttrValue ConvertGraphDefAttr(const tfproto::AttrValue& value, std::string_view def_type);

}  // namespace tfrun

namespace tfrun {

// ReadTfGraphFile, then ImportGraphDef.
StatusOr<Graph> LoadTfGraph(const std::string& path, const GraphDefImportOptions& options);

}  // namespace tfrun
