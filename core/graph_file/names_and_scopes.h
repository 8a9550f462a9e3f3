// Node names and the scopes around them, as TF1's Python builds them:
// Graph.unique_name (tensorflow/python/framework/ops.py), tf.name_scope
// prefixes, and nested tf.device blocks merged field by field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/flat_string_map.h"
#include "core/graph/device_name.h"
#include "core/graph/graph.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

// TensorFlow's op name rule (tensorflow/core/framework/node_def_util.cc).
bool IsValidNodeName(std::string_view s, bool allow_leading_underscore);

// Graph.unique_name: case-insensitive bookkeeping, "_N" suffixes that skip
// names already taken. ops.py rescans the taken suffixes from the base
// name's counter on every call (quadratic when many are taken); names are
// never released, so resuming the scan where the last one stopped gives
// the same names in amortised O(1).
class UniqueNamer {
 public:
  std::string Unique(const std::string& name);
  void Reserve(size_t names) { names_in_use_.Reserve(names); }

 private:
  FlatStringMap<int> names_in_use_;  // ops.py's _names_in_use
  FlatStringMap<int> scan_from_;     // base key -> first suffix not known taken
};

// What encloses a node: the merged device annotation (and its text as
// written, which TF 0.x echoes) and the name prefix of its name scopes.
struct Scope {
  DeviceSpec device;
  std::string device_text;
  std::string name_prefix;  // "tower_1/" or ""
  // The name scopes as written, never made unique: the prefix eager TF
  // gives variable names ("tower/").
  std::string eager_prefix;
  // tf.compat.v1.colocate_with blocks around it: the nodes, innermost last.
  std::vector<int> colocate_with;
};

// Op.colocation_groups(): a node's own `_class` names, else its name.
std::vector<std::string> ColocationGroupsOf(const Node& node);

// What _create_op_helper does to an op made inside colocate_with blocks:
// `_class` lists every group of the nodes colocated with, and the device
// is that of the innermost of them that has one (whatever tf.device said
// inside the blocks); without one, the device the blocks' insides gave.
void ApplyColocation(const Graph& graph, const Scope& scope, Node* node);

// Reads graph-file entries into scopes. `fields` must outlive it.
class ScopeReader {
 public:
  ScopeReader(const FieldReader& fields, UniqueNamer* namer) : fields_(fields), namer_(namer) {}

  // A scope entry's own device, name_scope and colocate_with, inside
  // `outer`; `graph` holds the nodes a colocate_with may name.
  StatusOr<Scope> Enter(const YamlNode& entry, const Scope& outer, const Graph& graph) const;

  // Node `node_name`'s scope: its `device` merged over the scope's
  // (`device: ""` clears it, as tf.device(None) does), inside its own
  // `colocate_with` when it has one.
  StatusOr<Scope> ForNode(const YamlNode& entry, const Scope& scope, const std::string& node_name,
                          const Graph& graph) const;

 private:
  Status MergeDevice(const YamlNode& d, const Scope& outer, Scope* inner, std::string_view node_name) const;
  // colocate_with: NAME, an earlier node: pushed on the block stack; the
  // device stack starts afresh inside, as colocate_with resets it.
  Status EnterColocation(const YamlNode& c, const Graph& graph, Scope* scope, std::string_view node_name) const;

  const FieldReader& fields_;
  UniqueNamer* namer_;  // not owned
};

}  // namespace tfrun
