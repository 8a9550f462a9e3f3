// Nodes a pass adds, built as TensorFlow's NodeBuilder builds them: the
// OpDef's type attrs inferred from the inputs where the pass gives none,
// its defaults filled in, and the types it binds to each input and output
// (what a NodeDef read from a file carries, NodeProperties). The GraphDef
// importer binds its NodeDefs' types with the same BindArgs.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/graph/graph.h"
#include "core/tables/tf_tables.h"

namespace tfrun {

// One input or output argument list bound to `attrs`: its types, in the
// tables' spelling ("FLOAT", "FLOAT_REF"). `limit`: the most types the list
// may bind (checked before any is stored, so that N = 10^9 costs nothing).
// Returns the count bound, which is more than `limit` (and nothing stored)
// when over it; an error with `*missing` set names an attr the list needs
// and `attrs` lacks.
StatusOr<int64_t> BindArgs(const std::vector<TfArgDef>& args, const NodeAttrs& attrs, int64_t limit,
                           std::vector<std::string>* types, std::string* missing);

struct NodeSpec {
  std::string name;
  std::string op;
  NodeAttrs attrs;  // what the pass sets; type attrs of inputs may be left out
  std::vector<NodeOutput> inputs;
  std::vector<int> control_inputs;
  std::string device;  // the requested device, as a NodeDef writes it
  Tensor value;        // a Const's
  SourceLocation location;  // the node it stands for, for messages
};

// A node a pass writes in place of `replaced`: named `name`, on the
// device it requested, located where it was (for messages).
NodeSpec ReplacementSpec(const Node& replaced, std::string op, std::string name);

// Appends the node; its id, or an error naming what the OpDef needs.
StatusOr<int> AddNode(Graph* graph, NodeSpec spec);

// Appends a graph file's node, whose inputs, dtype, shape and fields are
// set (its shape function ran): its attrs as op_def_library.py infers them
// for the Python call (type attrs from the dtypes of the inputs and outputs
// they bind, number attrs from their counts, transpose_a/b and shape from
// the node's fields, every other attr at its default), and their types
// bound. A node of an op without an OpDef is appended without properties.
StatusOr<int> AddInferredNode(Graph* graph, Node node);

// An op built outside a graph (eager's _EagerConst, ReadVariableOp, ...):
// every type attr without a default is `dtype`.
NodeAttrs OpAttrs(const TfOpDef& op, DType dtype);

// An AttrValue of each kind, as the importer converts a NodeDef's.
AttrValue TypeAttr(DType dtype);
AttrValue IntAttr(int64_t value);
AttrValue BoolAttr(bool value);
AttrValue StringAttr(std::string value);
AttrValue ShapeAttr(const Shape& shape);

}  // namespace tfrun
