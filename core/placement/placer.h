// Assigns every node a device as TensorFlow's Placer does
// (tensorflow/core/common_runtime/placer.cc, colocation_graph.cc): kernel
// candidates from the kernel table, type priority, name order, generators
// placed after their consumers, Variables colocated with their Assign and
// read, soft placement. Pure logic: no CUDA, no execution.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placement_explanation.h"

namespace tfrun {

struct Placement {
  std::vector<int> device_of;   // per node id: index into the DeviceSet
  std::vector<int> import_order;  // node ids in the profile's import order
  std::vector<int> log_order;     // node ids in the order they were placed
  // One line per node that soft placement moved, for standard error.
  std::vector<std::string> soft_moves;
  // TensorFlow's own LOG(INFO) lines of the placement (log_device_placement
  // only), for standard error: "Ignoring device specification ...".
  std::vector<std::string> log_notes;
  // The nodes whose own request a reference edge overrode (those notes):
  // they may be on a device their request does not match, as in TensorFlow.
  std::vector<int> request_overridden;
  // A TF2 call's device (PlaceGraph's `call_device`, found); -1 for a
  // Session's graph.
  int call_device = -1;
  // --explain: one per node asked about, in the order asked, also when
  // placement failed.
  std::vector<NodeExplanation> explanations;
};

// The line standard error gets when soft placement moved `op` of node
// `node` (requested on `requested`) to `to`, saying why: no kernel for it
// there, no such device, or (`colocated_with`) a node of its colocation
// group that has no kernel there.
std::string SoftMoveNote(const std::string& node, std::string_view op, DType dtype, const DeviceSpec& requested,
                         const Device& to, const DeviceSet& devices, const Node* colocated_with = nullptr);

// Graph import order (graph_constructor.cc) for the profile.
std::vector<int> ImportOrder(const Graph& graph, ImportOrder order);

// Fails with TensorFlow's InvalidArgumentError text (exit 3). On failure
// `placement->log_order` still lists the nodes placed before it, which
// TensorFlow has already logged by then.
// `explain`: node ids to explain (--explain), into
// `placement->explanations`.
// `call_device`: placing the body of a function a TF2 call runs (--call):
// eager's default_local_device, the call's device, goes first among every
// node's candidates, and the pinned _Arg and _Retval nodes (Node::pin) are
// placed before the rest; "" in a Session's graph. `call_device` is a
// device spec; "default" names eager's default device (the first device in
// placement order: GPU:0 where there is one).
Status PlaceGraph(const Graph& graph, const DeviceSet& devices,
                  bool allow_soft_placement, const CompatProfile& profile,
                  Placement* placement, const std::vector<int>& explain = {},
                  const std::string& call_device = "");

}  // namespace tfrun
