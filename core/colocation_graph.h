// Which nodes TensorFlow places together, and what a group asks for
// (tensorflow/core/common_runtime/colocation_graph.cc): groups joined
// first along reference edges (a VariableV2 and its Assign), then by the
// `_class` "loc:@NAME" lists (Node::colocation) in node id order; each
// group's device request merged from its members' (MergeDevNames, soft
// placement clearing a conflicting type or id), and the device types
// every member has a kernel for. The placer (placer.h) places whole groups.
#pragma once

#include <string>
#include <vector>

#include "core/device_set.h"
#include "core/graph.h"
#include "core/status.h"

namespace tfrun {

// DeviceNameUtils::MergeDevNames: `other`'s fields into `target`; a job,
// replica or task conflict fails, a type or id conflict fails unless
// `allow_soft_placement`, which then clears the type and id (or the id).
// The error is TensorFlow's text ("Cannot merge devices with incompatible
// ids: '/device:CPU:2' and '/device:CPU:1'").
Status MergeDevNames(DeviceSpec* target, const DeviceSpec& other, bool allow_soft_placement);

class ColocationGraph {
 public:
  // `graph` and `devices` must outlive it.
  ColocationGraph(const Graph& graph, const DeviceSet& devices, bool allow_soft_placement);

  // Builds the groups. Errors are TensorFlow's texts, located at the node
  // being colocated (exit 3). Under soft placement a colocation that cannot
  // hold is skipped, as TensorFlow skips it.
  Status Initialize();

  int RootOf(int id);
  // The group of `id`, in id order.
  std::vector<int> MembersOf(int id);
  // The group's merged request.
  const DeviceSpec& RequestOf(int id) { return groups_[RootOf(id)].requested; }
  // Device types every member of the group has a kernel for, in the
  // DeviceSet's type priority order.
  const std::vector<std::string>& TypesOf(int id) { return groups_[RootOf(id)].types; }

 private:
  struct Group {
    DeviceSpec requested;
    DeviceSpec resource;  // what a reference-producing member (VariableV2) asked for
    std::vector<std::string> types;
    std::vector<int> members;
    int rank = 0;
  };

  // ColocateNodes(x, y): the error without location; the groups merged.
  Status Colocate(int x, int y);
  Status Located(int id, const std::string& message) const;

  const Graph& graph_;
  const DeviceSet& devices_;
  const bool soft_;
  std::vector<int> parent_;
  std::vector<Group> groups_;  // by node id; meaningful at roots
};

}  // namespace tfrun
