// Which nodes TensorFlow places together, and what a group asks for
// (tensorflow/core/common_runtime/colocation_graph.cc): groups joined
// first along reference edges (a VariableV2 and its Assign), then by the
// `_class` "loc:@NAME" lists (Node::colocation) in node id order; each
// group's device request merged from its members' (MergeDevNames, soft
// placement clearing a conflicting type or id), and the device types
// every member has a kernel for. The placer (placer.h) places whole groups.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/placement_explanation.h"

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
  int GroupSize(int id) { return groups_[RootOf(id)].size; }
  // The group's merged request.
  const DeviceSpec& RequestOf(int id);
  // Whether every member of the group has a kernel for `device_type` (and
  // the group may go there: MaybeExcludeXlaDevices).
  bool Supports(int id, std::string_view device_type);
  // Those device types, in the DeviceSet's priority order.
  std::vector<std::string> SupportedTypes(int id);
  // The device the group's reference or resource generator asked for
  // (Member::resource_device_name_); empty when it has none.
  DeviceSpec ResourceDevice(int id) { return ResourceOf(RootOf(id)); }
  // The device types present, in priority order (device_types_).
  const std::vector<std::string>& device_types() const { return types_; }

  // Node `id` is assigned `device` (a TF2 call's _Arg): its request is
  // that device's full name (Member::InitializeMember). Call before
  // Initialize.
  void Assign(int id, const DeviceSpec& device) { assigned_.emplace_back(id, device); }

  // Keep every join Initialize makes, with its reason (for --explain);
  // call before Initialize. Off by default: a large graph keeps nothing.
  void RecordJoins() { record_joins_ = true; }
  // TensorFlow 2's InitializeMember check: a node that no device type of
  // the machine has a kernel for fails Initialize, before the groups are
  // built, with "No OpKernel was registered to support Op ...". The older
  // eras placed and failed later, in their own words.
  void ReportMissingKernels() { report_missing_kernels_ = true; }
  const std::vector<ColocationJoin>& joins() const { return joins_; }
  // What TensorFlow logs (LOG(INFO)) while it builds the groups, with
  // log_device_placement: a reference edge overriding a request.
  const std::vector<std::string>& log_notes() const { return log_notes_; }
  // The nodes whose request such a reference edge replaced (the consumer's
  // group at the time): they go where the producer's group goes.
  const std::vector<int>& overridden() const { return overridden_; }

 private:
  // Per node, small: a 100,000-node graph keeps one each. Meaningful at
  // roots; a root that never merged reads its node's own request.
  struct Group {
    int rank = 0;
    int size = 1;
    int next = 0;            // the members form a ring through `next`
    uint32_t types = 0;      // bit i: types_[i]
    int requested = -1;      // index into specs_, or -1: the node's own request
    int resource = -1;       // index into specs_, or -1: the node's (ref generators) or none
  };

  // ColocateNodes(x, y): the error without location; the groups merged.
  Status Colocate(int x, int y);
  // ColocateResourceOrRefEdge: `dst` reads `src` through a reference or
  // resource input (`input`, or -1); a request of dst's group that
  // conflicts gives way to src's.
  Status ColocateResourceOrRefEdge(int src, int dst, ColocationJoin::Why kind, int input);
  // The constraints a call the placer inspects puts on its neighbours.
  Status AddInspectionConstraints(int call);
  Status Located(int id, const std::string& message) const;
  DeviceSpec ResourceOf(int root) const;
  int TypeBit(std::string_view type) const;

  const Graph& graph_;
  const DeviceSet& devices_;
  const bool soft_;
  std::vector<std::string> types_;  // present device types, in priority order
  std::vector<int> parent_;
  std::vector<Group> groups_;       // by node id
  std::vector<DeviceSpec> specs_;   // merged requests and resource devices
  bool record_joins_ = false;
  bool report_missing_kernels_ = false;
  Status NoKernelAnywhere(const Node& node) const;
  std::vector<ColocationJoin> joins_;  // in the order Initialize made them
  std::vector<std::pair<int, DeviceSpec>> assigned_;  // Assign's, read by Initialize
  // The functions whose bodies enclose this graph, outermost first (a
  // call's body grouped for its caller; recursion stops there).
  std::vector<std::string> function_stack_;
  std::vector<std::string> log_notes_;
  std::vector<int> overridden_;
};

}  // namespace tfrun
