// The ops of graph format version 1: arity, dtype constraints, attributes
// and shape inference, as one table (op_registry.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"
#include "core/status.h"

namespace tfrun {

// Sets node.dtype/shape from the inputs or fails with TensorFlow's text
// (without location; the loader adds file, line and node).
using ShapeFn = Status (*)(Node& node, const std::vector<const Node*>& inputs);

struct OpDef {
  std::string_view type;
  int min_inputs;
  int max_inputs;  // -1: any number
  DTypeSet allowed_dtypes;  // TensorFlow's type constraint on T
  std::vector<std::string_view> attributes;  // graph-file keys of its own
  bool in_graph_files;  // false for ops only the Variable expansion makes
  ShapeFn infer;
};

const OpDef* FindOp(std::string_view type);
const std::vector<OpDef>& AllOps();

// TensorFlow's placer treats these specially (placer.cc IsGeneratorNode):
// no inputs and one non-reference output.
bool IsGenerator(const Node& node);

// "float32, float64" for messages.
std::string DTypeList(DTypeSet set);

}  // namespace tfrun
