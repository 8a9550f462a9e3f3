// A graph file's Variable, expanded as TF1's tf.Variable builds it
// (tensorflow/python/ops/variables.py): `v/initial_value` (Const), `v`
// (VariableV2), `v/Assign` and `v/read` (Identity), colocated with `v`;
// and tf.global_variables_initializer()'s `init` (NoOp) after every node.
#pragma once

#include <string>
#include <vector>

#include "core/graph_file/graph_builder.h"
#include "core/graph_file/names_and_scopes.h"
#include "core/graph_file/tensor_literal.h"

namespace tfrun {

// Every pointer must outlive it; none is owned.
class VariableExpander {
 public:
  VariableExpander(GraphBuilder* builder, UniqueNamer* namer, TensorLiteralReader* literals)
      : builder_(builder), namer_(namer), literals_(literals) {}

  // The four nodes of the Variable `entry` named `base` in `scope`;
  // returns the VariableV2's id.
  StatusOr<int> Expand(const YamlNode& entry, const Scope& scope, const std::string& base);

  // The `init` NoOp, when the graph has variables.
  Status AddInitializer();

 private:
  GraphBuilder* builder_;
  UniqueNamer* namer_;
  TensorLiteralReader* literals_;
  std::vector<int> assign_ids_;
};

}  // namespace tfrun
