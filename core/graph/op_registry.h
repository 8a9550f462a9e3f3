// The ops of graph format version 1: arity, dtype constraints, attributes
// and shape inference, as one table (op_registry.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"

namespace tfrun {

class ShapeContext;

// Sets node.dtype/shape from the inputs or fails with TensorFlow's text
// through ShapeContext::Fail (the loader adds file, line and node).
using ShapeFn = Status (*)(ShapeContext& c);

// An input argument of TensorFlow's OpDef, named as op_def_library.py's
// type errors name it ("Input 'b' of 'MatMul' Op has type ...").
enum class ArgType {
  kT,          // one tensor of the type attribute T
  kTList,      // N tensors of T: every input the later arguments leave
  kConverted,  // one tensor that the op's Python function converts to the
               // first argument's dtype before building it (tf.nn.bias_add)
  kOwn,        // a type of its own (Cast's x, Split's split_dim, an axis)
};

struct OpArg {
  std::string_view name;
  ArgType type;
};

struct OpDef;
// Checks the inputs' dtypes as TensorFlow's Python builds the op, and
// sets node.dtype; nullptr in OpDef: CheckInputTypes.
using TypeFn = Status (*)(const OpDef& def, ShapeContext& c);

struct OpDef {
  std::string_view type;
  int min_inputs;
  int max_inputs;  // -1: any number
  DTypeSet allowed_dtypes;  // the dtypes tfrun's kernels take for T
  std::vector<std::string_view> attributes;  // graph-file keys of its own
  bool in_graph_files;  // false for ops only the Variable expansion makes
  ShapeFn infer;
  std::vector<OpArg> args;  // TensorFlow's input arguments, in order
  // The attributes of the NodeDef tf.compat.v1 builds (node_def_summary.h).
  std::vector<std::string_view> node_def_attrs;
  TypeFn check_types = nullptr;
};

// The attributes `op`'s NodeDef carries (OpDef::node_def_attrs); none for
// an op tfrun does not define.
const std::vector<std::string_view>& OpAttrs(std::string_view op);

// How a graph-construction error names its node: TF 1.x "for 'x' (op:
// 'MatMul')", TF 2.x "for '{{node x}} = MatMul[T=DT_FLOAT, ...](a, b)'".
enum class ConstructionErrors { kTf1, kTf2 };

// What a shape function reads and how it fails (TensorFlow's
// InferenceContext): the node being built, its inputs, and the graph they
// are in.
class ShapeContext {
 public:
  ShapeContext(Node& node, const std::vector<const Node*>& inputs, const Graph& graph, ConstructionErrors style)
      : node(node), in(inputs), graph_(graph), style_(style) {}

  Node& node;
  const std::vector<const Node*>& in;  // the producers of node's inputs

  // `text` and the era's " for <node> with input shapes: [2,3], [3]."
  Status Fail(std::string_view text) const;
  // The same for shape functions that read a constant input (an axis):
  // "... and with computed input tensors: input[2] = <0>."
  Status FailWithAxis(std::string_view text, size_t axis_input, int64_t axis) const;

 private:
  std::string NodeText() const;
  std::string InputShapes() const;

  const Graph& graph_;
  ConstructionErrors style_;
};

// The inputs' types (op_def_library.py's checks, in its order and words),
// then the op's shape function.
Status InferNode(const OpDef& def, ShapeContext& c);

// op_def_library.py's type checks over def.args.
Status CheckInputTypes(const OpDef& def, ShapeContext& c);

const OpDef* FindOp(std::string_view type);
const std::vector<OpDef>& AllOps();

// "float32, float64" for messages.
std::string DTypeList(DTypeSet set);

}  // namespace tfrun
