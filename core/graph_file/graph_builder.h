// Appends nodes to a Graph in program order, as the graph file lists them:
// input names resolved to earlier nodes (a Variable's name stands for its
// read, as tf.Variable converts to its value), arity checked against the
// op's definition, dtype and shape inferred by the op's shape function.
// Errors are located at the entry they come from.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

#include "core/graph.h"
#include "core/graph_file/yaml_fields.h"
#include "core/op_registry.h"

namespace tfrun {

class GraphBuilder {
 public:
  // Whether a name the file gives explicitly comes after the point of use:
  // asked only to word an error ("defined later" or "names no earlier node").
  using DefinedLater = std::function<bool(const std::string& name)>;

  // `fields` and `graph` must outlive it.
  GraphBuilder(const FieldReader& fields, Graph* graph, DefinedLater defined_later)
      : fields_(fields), graph_(graph), defined_later_(std::move(defined_later)) {}

  Graph& graph() { return *graph_; }

  // Resolves `entry`'s inputs into node->inputs (control inputs for NoOp).
  Status ReadInputs(const YamlNode& entry, const OpDef& def, Node* node) const;

  // Infers `node`'s dtype and shape, then appends it; returns its id.
  StatusOr<int> Add(Node node, const OpDef& def, const YamlNode& where);

  // From now on, inputs naming `variable` read `read` instead.
  void ReadVariableThrough(int variable, int read) { variable_reads_[variable] = read; }

 private:
  const FieldReader& fields_;
  Graph* graph_;  // not owned
  DefinedLater defined_later_;
  std::unordered_map<int, int> variable_reads_;  // VariableV2 id -> read id
};

}  // namespace tfrun
