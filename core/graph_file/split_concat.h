// tf.split(value, num_split, axis) and tf.concat(values, axis) as
// array_ops.py builds them: inside name scope NAME, the axis as an int32
// Const (`split/split_dim`, `concat/axis`), then the op itself named NAME
// reading it (Split first, ConcatV2 last). tf.concat of one value is
// array_ops.concat's degenerate case: an unused `concat/concat_dim` Const
// and an Identity `concat/concat` (`NAME/NAME` for a given name), which the
// name `concat` then stands for.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/graph_file/graph_builder.h"
#include "core/graph_file/names_and_scopes.h"

namespace tfrun {

class SplitConcatExpander {
 public:
  // How many logical devices of a type ("GPU") the run has: `num_split:
  // GPU` makes one slice per device, as the tower sample's
  // tf.split(X, gpu_num).
  using DeviceCounter = std::function<StatusOr<int>(std::string_view type)>;

  // Every pointer must outlive it; none is owned.
  SplitConcatExpander(GraphBuilder* builder, UniqueNamer* namer, DeviceCounter count_devices)
      : builder_(builder), namer_(namer), count_devices_(std::move(count_devices)) {}

  static bool Expands(std::string_view op) { return op == "Split" || op == "ConcatV2"; }

  // Adds `node` (named, inputs read: the value(s) as the file lists them)
  // with its axis Const; returns the id its name stands for. `base` is the
  // name as written (tf.concat's `name` argument, "concat" by default).
  StatusOr<int> Add(const YamlNode& entry, Node node, const std::string& base);

 private:
  StatusOr<int> AddAxis(const YamlNode& entry, const Node& op, const std::string& suffix, int64_t axis);
  StatusOr<int64_t> ReadAxis(const YamlNode& entry, const Node& node, bool required) const;
  StatusOr<int> ReadNumSplit(const YamlNode& entry, const Node& node) const;

  GraphBuilder* builder_;
  UniqueNamer* namer_;
  DeviceCounter count_devices_;
};

}  // namespace tfrun
