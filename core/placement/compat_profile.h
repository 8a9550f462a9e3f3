// The --compat eras as data (tf-semantics.md, profile table): one printer and
// one placer read these fields; nothing branches on the profile's name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/graph/op_registry.h"

namespace tfrun {

enum class ImportOrder {
  kFile,   // lowest-index ready node first (TF 1.14+ importer)
  kStack,  // last ready node first (TF 0.x and early 1.x importer)
};

enum class PlacementLineStyle {
  kNameDevice,        // "b: /job:.../gpu:0"                      (tf0)
  kNameOpDevice,      // "b: (Const): /job:.../device:GPU:0"       (tf1, tf2)
  kExecutingOp,       // "Executing op MatMul in device /job:..."  (eager)
};

// Placement errors of the graph placer, by era (kEager: eager_program.cc
// words its own).
enum class PlacementErrorStyle { kTf0, kTf1, kTf2, kEager };

enum class ExecutionModel {
  kSession,  // a graph placed as a whole, then run (placer.h)
  kEager,    // TF2 eager: each Python line executes as it comes (eager_program.h)
};

// The line a kernel's error ends with, naming the node (the executor's
// FormatNodeLine): TF 1.x's NodeDef summary, or TF 1.14+'s bare name.
enum class NodeErrorLine {
  kNodeDef,  // "\t [[Node: x = Placeholder[dtype=DT_FLOAT, shape=[?,3], _device=\"...\"]()]]"
  kName,     // "\t [[{{node x}}]]"
};

struct CompatProfile {
  std::string_view name;
  bool legacy_device_names;         // ".../task:0/gpu:0"
  bool mapping_compute_capability;  // ", compute capability: 3.5"
  PlacementLineStyle line_style;
  ImportOrder import_order;
  bool generators_last;             // place and log Consts after the rest
  bool numpy_legacy_113;            // np.set_printoptions(legacy='1.13')
  // NumPy 2's printing: what TensorFlow 2.21 installs (tf2, eager); the
  // TF 1.x eras printed with NumPy 1 (--numpy overrides).
  bool numpy2;
  bool eager_tensor_repr;           // tf.Tensor(..., shape=..., dtype=...)
  bool soft_placement_default;      // TF 2 eager places softly by default
  PlacementErrorStyle error_style;
  ExecutionModel execution;
  NodeErrorLine node_error_line;
  // session.py's feed errors: TF 1.x formats with %r ("Tensor 'x:0', which
  // has shape '(?, 3)'"), TF 2 with f-strings ("Tensor x:0, which has shape
  // (None, 3)").
  bool feed_errors_quoted;
  // How graph-construction (shape and type) errors name their node.
  ConstructionErrors construction_errors;
  // TF 1.14 to 2.3 registered XLA_CPU:0 and one XLA_GPU per GPU unless
  // TF_XLA_FLAGS turned them off (TF 2.4's RELEASE.md: "no longer
  // registered by default"); later, only TF_XLA_FLAGS turns them on.
  bool xla_devices_by_default;
  // Heuristic B places a lone Identity with its input
  // (MatchIdentityOperation, TensorFlow 2.4 on).
  bool identity_follows_input;
};

// nullptr for an unknown name.
const CompatProfile* FindProfile(std::string_view name);

// Every profile's name, in the table's order (for --compat's choices).
std::vector<std::string> ProfileNames();

}  // namespace tfrun
