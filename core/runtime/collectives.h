// Collective ops across the devices of one process (TensorFlow's
// CollectiveParamResolverLocal, RingReducer and RingGatherer): a
// MirroredStrategy step holds one CollectiveReduceV2 per replica, each on
// its replica's device, and the members of one group meet at run time by
// their group and instance keys.
//
// tfrun runs a graph's nodes from one thread, so the members cannot wait
// for each other as TensorFlow's kernels do. Instead the executor finds
// each run's groups before it starts (ResolveCollectiveGroups), orders the
// run so that every member of a group runs after all the group's inputs
// exist (CollectiveRunOrder), and the group's first member to run computes
// the group's result once (RingAllReduce, in TensorFlow's ring order of
// sums) for every member to copy into its own memory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/graph/graph.h"
#include "core/runtime/kernel_registry.h"

namespace tfrun {

// CollectiveReduceV2, CollectiveGatherV2 and NcclAllReduce: the ops the
// executor runs by group.
bool IsCollective(const Node& node);

// One group instance of a run: its members in TensorFlow's rank order
// (their devices' full names sorted, as the resolver sorts one task's
// devices).
struct CollectiveGroup {
  int64_t group_key = 0;     // 0 for an NcclAllReduce's (named) group
  int64_t instance_key = 0;
  int64_t group_size = 0;
  std::vector<int> members;  // node ids
};

// A scalar input's value where the run knows it before it starts: a Const
// (through Identity), or a fed output. nullopt: computed by the run.
using KnownScalar = std::function<std::optional<int64_t>(NodeOutput)>;

// The groups of the collective nodes `needed` marks: by group and
// instance key, or an NcclAllReduce's by its shared_name (num_devices its
// size). `device_name(id)`:
// node `id`'s full device name. Fails (one line, naming the node) where a
// key is computed by the run, a group has other than group_size members
// (TensorFlow would wait for the missing ones until its timeout), or two
// members share a device; `fail` makes each error.
// The error for `node` (its location and device added by the caller).
using CollectiveError = std::function<Status(const Node& node, std::string message)>;
StatusOr<std::vector<CollectiveGroup>> ResolveCollectiveGroups(
    const Graph& graph, const std::vector<bool>& needed, const KnownScalar& known,
    const std::function<std::string(int)>& device_name, const CollectiveError& fail);

// A run order of the `needed` nodes (each after its producers, data and
// control) in which every member of a group runs after everything each
// member reads: `base` (a topological order) where that holds already.
std::vector<int> CollectiveRunOrder(const Graph& graph, const std::vector<int>& base, const std::vector<bool>& needed,
                                    const std::vector<CollectiveGroup>& groups);

// What every member of an all-reduce gets: `inputs` (host memory, one per
// rank) merged elementwise by `merge_op` (Add, Mul, Min, Max) in
// TensorFlow's ring order, then `final_op` (Id, Div: by the group size)
// applied. The tensor is cut into group_size * subdivs chunks (aligned as
// TensorFlow's CollectiveAdapter aligns them; a second subdivision, a ring
// in reversed order, once a chunk would pass 4 MiB); chunk c of a ring
// starts at rank c and each next rank adds its own chunk to what it
// received, so the sum ends at rank c - 1. `node` names errors.
StatusOr<Tensor> RingAllReduce(const std::vector<Tensor>& inputs, std::string_view merge_op,
                               std::string_view final_op, const std::string& node);

// CollectiveGatherV2: the members' inputs concatenated along the first
// dimension in rank order.
StatusOr<Tensor> GatherAll(const std::vector<Tensor>& inputs, const std::string& node);

// CollectiveReduceV2, CollectiveGatherV2 and NcclAllReduce (its
// `reduction` as the merge, NCCL's own order of sums replaced by the
// ring's) on every device: the group's result (computed once, on the
// host) copied into the member's memory.
void BindCollectiveKernels(KernelRegistry* registry, std::string_view device_type);

}  // namespace tfrun
