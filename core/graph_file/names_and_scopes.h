// Node names and the scopes around them, as TF1's Python builds them:
// Graph.unique_name (tensorflow/python/framework/ops.py), tf.name_scope
// prefixes, and nested tf.device blocks merged field by field.
#pragma once

#include <string>
#include <string_view>

#include "core/device_name.h"
#include "core/flat_string_map.h"
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
};

// Reads graph-file entries into scopes. `fields` must outlive it.
class ScopeReader {
 public:
  ScopeReader(const FieldReader& fields, UniqueNamer* namer) : fields_(fields), namer_(namer) {}

  // A scope entry's own device and name_scope, inside `outer`.
  StatusOr<Scope> Enter(const YamlNode& entry, const Scope& outer) const;

  // `device` of node `node_name` merged over its scope's; `device: ""`
  // clears it, as tf.device(None) does.
  StatusOr<Scope> ForNode(const YamlNode& device, const Scope& scope, const std::string& node_name) const;

 private:
  Status MergeDevice(const YamlNode& d, const Scope& outer, Scope* inner, std::string_view node_name) const;

  const FieldReader& fields_;
  UniqueNamer* namer_;  // not owned
};

}  // namespace tfrun
