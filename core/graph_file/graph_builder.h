// Appends nodes to a Graph in program order, as the graph file lists them:
// input names resolved to earlier nodes (a Variable's name stands for its
// read, as tf.Variable converts to its value), arity checked against the
// op's definition, dtype and shape inferred by the op's shape function.
// Errors are located at the entry they come from.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/op_registry.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

class GraphBuilder {
 public:
  // Whether a name the file gives explicitly comes after the point of use:
  // asked only to word an error ("defined later" or "names no earlier node").
  using DefinedLater = std::function<bool(const std::string& name)>;

  // `fields` and `graph` must outlive it.
  GraphBuilder(const FieldReader& fields, Graph* graph, DefinedLater defined_later,
               ConstructionErrors errors = ConstructionErrors::kTf2)
      : fields_(fields), graph_(graph), defined_later_(std::move(defined_later)), errors_(errors) {}

  const FieldReader& fields() const { return fields_; }

  Graph& graph() { return *graph_; }

  // Resolves `entry`'s inputs into node->inputs (control inputs for NoOp).
  Status ReadInputs(const YamlNode& entry, const OpDef& def, Node* node) const;

  // Infers `node`'s dtype and shape, then appends it; returns its id.
  StatusOr<int> Add(Node node, const OpDef& def, const YamlNode& where);

  // From now on, inputs naming `variable` read `read` instead.
  void ReadVariableThrough(int variable, int read) { variable_reads_[variable] = read; }

  // From now on, inputs naming `name` (as the file writes it) mean `ids`,
  // as a Python name bound in a loop does: inside a for_each_device scope
  // the current copy, after it the list of every copy (empty when the
  // machine has no device of `device_type`).
  void Alias(const std::string& name, std::vector<int> ids, const std::string& device_type) {
    aliases_[name] = {std::move(ids), device_type};
  }
  bool HasAlias(const std::string& name) const { return aliases_.count(name) != 0; }
  bool HasAliases() const { return !aliases_.empty(); }

  // Inside a for_each_device scope, the copy being read: `{i}` in an input
  // name becomes it ("split:{i}" reads copy i's slice, as X_A[i] does).
  void set_copy_index(std::optional<int> index) { copy_index_ = index; }

 private:
  const FieldReader& fields_;
  Graph* graph_;  // not owned
  DefinedLater defined_later_;
  ConstructionErrors errors_;  // how shape and type errors name the node
  std::unordered_map<int, int> variable_reads_;  // VariableV2 id -> read id
  struct AliasTarget {
    std::vector<int> ids;
    std::string device_type;  // of the for_each_device scope that made them
  };
  std::unordered_map<std::string, AliasTarget> aliases_;
  std::optional<int> copy_index_;
};

}  // namespace tfrun
