// Why a node went where it went (--explain): what TensorFlow's placer did
// for its colocation group, recorded as the placer decides, so that the
// answer is the placement's own reasoning and not a second derivation.
// TensorFlow logs none of this; these are tfrun's words.
#pragma once

#include <string>
#include <vector>

#include "core/devices/device_set.h"
#include "core/graph/device_name.h"
#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"

namespace tfrun {

// One reason two nodes share a colocation group (ColocationGraph's steps).
struct ColocationJoin {
  enum class Why {
    kRefEdge,       // input `input` of `node` is a reference to `with`'s output
    kResourceEdge,  // ... a resource handle from `with`
    kClass,         // `node`'s `_class` lists loc:@`name`, which `with`'s group took first
    kNamedBy,       // `with`'s `_class` lists loc:@`node` (so `node` joins it)
    kIgnored,       // a `_class` request soft placement ignored; `name`: why
    kRefused,       // a `_class` request that cannot hold: the placement error (no soft placement); `name`: why
  };
  Why why;
  int node;
  int with;
  int input = -1;
  std::string name;
  // A ref or resource edge whose consumer's group asked for a device that
  // conflicts with the producer's: the consumer's request gave way.
  bool request_gave_way = false;
};

// How the candidates were found (ColocationGraph::GetDevicesForNode).
enum class CandidateStage {
  kRequest,        // the group's merged request, as it is
  kPreferredSoft,  // soft placement: the request keeping the resource's type and id
  kSoftRelaxed,    // soft placement: only job, replica and task kept
  kNone,           // nothing fits: the placement error
};

// Which rule picked the device among the candidates.
enum class PlacementRule {
  kFirstCandidate,
  kHeuristicA,  // a generator goes where all its consumers went
  kHeuristicB,  // a metadata op goes with its input
  kNotPlaced,   // placement failed at or before this group
};

struct ExplainedMember {
  int node;
  std::string requested;            // the device its NodeDef (or graph file) asks for
  std::vector<std::string> types;   // device types it has a kernel for, in priority order
};

struct NodeExplanation {
  int node = -1;
  std::vector<ExplainedMember> members;  // the colocation group, in id order
  std::vector<ColocationJoin> joins;   // every join that touched the group
  DeviceSpec merged_request;           // the group's request (MergeDevNames of the members')
  DeviceSpec resource_device;          // what its reference or resource generator asked for
  std::vector<std::string> group_types;  // types every member has a kernel for, in priority order
  // Every device in TensorFlow's candidate order; `excluded[i]` says why
  // devices[i] is not a candidate ("" when it is one).
  std::vector<int> devices;
  // A TF2 call's device went first (eager's default_local_device), ahead of
  // the type priority and name order.
  bool call_device_first = false;
  std::vector<std::string> excluded;
  CandidateStage stage = CandidateStage::kNone;
  DeviceSpec matched;  // the request the candidates matched (relaxed by soft placement)
  PlacementRule rule = PlacementRule::kNotPlaced;
  int decided_by = -1;   // the member whose placement placed the group
  int rule_node = -1;    // kHeuristicB: the input; kHeuristicA: a consumer
  std::string rule_note;  // a heuristic that did not apply, and why
  int device = -1;        // the device chosen, or -1
  std::string error;      // the placement error, when this group failed
};

// The --explain text of one node.
std::string ExplanationText(const NodeExplanation& e, const Graph& graph, const DeviceSet& devices,
                            const CompatProfile& profile);

// Short names, for the --json report.
const char* JoinName(ColocationJoin::Why why);
const char* StageName(CandidateStage stage);
const char* RuleName(PlacementRule rule);

}  // namespace tfrun
