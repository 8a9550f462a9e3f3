// A graph's function library (TensorFlow's FunctionLibraryDefinition): the
// functions a GraphDef, MetaGraphDef or SavedModel carries (tf.function's
// concrete functions, v2 control flow's branches and bodies), as the passes
// before placement read them. The GraphDef importer makes one
// (core/graph_def/function_defs.h); a YAML graph has none.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"

namespace tfrun {

// A function's inputs and outputs, in the tables' type spelling ("FLOAT",
// "RESOURCE"), one per tensor: an argument that is a list of N (number_attr
// or type_list_attr) is N of them, named `<arg>_0` ... `<arg>_N-1` as its
// _Arg nodes are; others take the FunctionDef's argument name.
struct FunctionSignature {
  std::vector<std::string> input_names;
  std::vector<std::string> input_types;
  std::vector<std::string> output_names;
  std::vector<std::string> output_types;
  // Each output argument and how many tensors it is, in order (a body's
  // "node:out_arg:k" reads the k-th of out_arg's).
  std::vector<std::pair<std::string, int>> output_args;
};

// A function instantiated as TensorFlow's FunctionDefToBodyHelper builds
// it: one _Arg per input first, the body's nodes in node_def order, one
// "<output>_RetVal" _Retval per output last, imported in GraphConstructor's
// order (so ids are TensorFlow's).
struct FunctionBody {
  Graph graph;
  std::vector<int> args;          // the _Arg of input i
  std::vector<int> rets;          // the _Retval of output i
  std::vector<int> control_rets;  // the nodes control_ret names, in its order
  FunctionSignature signature;
};

class FunctionLibrary {
 public:
  virtual ~FunctionLibrary() = default;
  virtual int size() const = 0;
  // The first function's name (for messages), "" when empty.
  virtual std::string FirstName() const = 0;
  virtual bool Contains(std::string_view name) const = 0;
  // The function's own attr (FunctionDef.attr: _noinline, api_implements),
  // or nullptr.
  virtual const AttrValue* FunctionAttr(std::string_view name, std::string_view attr) const = 0;
  // `call_attrs`: the calling node's attrs, which bind a polymorphic
  // function's type and number attrs (with the signature's defaults);
  // null for a call that gives none (--call, a PartitionedCall's `f`).
  virtual StatusOr<FunctionSignature> Signature(std::string_view name,
                                                const NodeAttrs* call_attrs = nullptr) const = 0;
  // A fresh body of `name` (each call gets its own graph), its attr
  // placeholders ("$T") bound from `call_attrs`.
  virtual StatusOr<FunctionBody> Instantiate(std::string_view name, const NodeAttrs* call_attrs = nullptr) const = 0;
};

// The library function a node calls: a PartitionedCall's or
// StatefulPartitionedCall's `f`, or the op itself where it names a library
// function (a native call); "" for any other node.
std::string CalledFunction(const Graph& graph, const Node& node);

}  // namespace tfrun
