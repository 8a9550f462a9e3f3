#include "core/placement/placement_explanation.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "core/placement/placement_log.h"

namespace tfrun {
namespace {

std::string Quoted(const DeviceSpec& spec) { return "'" + spec.ToString() + "'"; }

std::string Types(const std::vector<std::string>& types) {
  return types.empty() ? "none" : fmt::format("{}", fmt::join(types, ", "));
}

// The line under member `member` for join `j`, which touched it.
std::string JoinLine(const ColocationJoin& j, int member, const Graph& graph) {
  const std::string& node = graph.nodes[j.node].name;
  const std::string& with = graph.nodes[j.with].name;
  switch (j.why) {
    case ColocationJoin::Why::kRefEdge:
    case ColocationJoin::Why::kResourceEdge:
      return fmt::format("joined '{}': its input {} is a {} (a {} edge){}", with, j.input,
                         j.why == ColocationJoin::Why::kRefEdge ? "reference to it" : "resource handle from it",
                         j.why == ColocationJoin::Why::kRefEdge ? "ref" : "resource",
                         j.request_gave_way ? fmt::format("; its group's request conflicted and gave way to the group of '{}'", with)
                                            : "");
    case ColocationJoin::Why::kClass:
      return j.name == with ? fmt::format("joined '{}': its _class asks for loc:@{}", with, j.name)
                            : fmt::format("joined '{}': its _class asks for loc:@{}, as '{}' did first", with,
                                          j.name, with);
    case ColocationJoin::Why::kNamedBy:
      return fmt::format("joined '{}': whose _class asks for loc:@{}", with, node);
    case ColocationJoin::Why::kIgnored:
    case ColocationJoin::Why::kRefused: {
      const char* outcome = j.why == ColocationJoin::Why::kIgnored ? "which soft placement ignored"
                                                                   : "which cannot hold, so placement failed";
      if (member == j.node) return fmt::format("asked to join '{}' (_class), {}: {}", with, outcome, j.name);
      return fmt::format("'{}' asked to join it (_class), {}: {}", node, outcome, j.name);
    }
  }
  return "";
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

const char* JoinName(ColocationJoin::Why why) {
  switch (why) {
    case ColocationJoin::Why::kRefEdge: return "ref_edge";
    case ColocationJoin::Why::kResourceEdge: return "resource_edge";
    case ColocationJoin::Why::kClass: return "class";
    case ColocationJoin::Why::kNamedBy: return "named_by_class";
    case ColocationJoin::Why::kIgnored: return "class_ignored";
    case ColocationJoin::Why::kRefused: return "class_refused";
  }
  return "";
}

const char* StageName(CandidateStage stage) {
  switch (stage) {
    case CandidateStage::kRequest: return "request";
    case CandidateStage::kPreferredSoft: return "soft_preferred";
    case CandidateStage::kSoftRelaxed: return "soft_relaxed";
    case CandidateStage::kNone: return "none";
  }
  return "";
}

const char* RuleName(PlacementRule rule) {
  switch (rule) {
    case PlacementRule::kFirstCandidate: return "first_candidate";
    case PlacementRule::kHeuristicA: return "heuristic_a";
    case PlacementRule::kHeuristicB: return "heuristic_b";
    case PlacementRule::kNotPlaced: return "not_placed";
  }
  return "";
}

std::string ExplanationText(const NodeExplanation& e, const Graph& graph, const DeviceSet& devices,
                            const CompatProfile& profile) {
  auto device_name = [&](int d) { return PrintedName(devices[d], profile); };
  const Node& node = graph.nodes[e.node];
  std::string out = fmt::format("Explain '{}' ({}):\n", node.name, node.op);
  out += fmt::format("  Colocation group: {} node{}\n", e.members.size(), e.members.size() == 1 ? "" : "s");
  // Each join under the members it touches, found by node id: a group of
  // 100,000 members scanned every join for each member (50 s).
  std::unordered_map<int, std::vector<size_t>> joins_of;
  for (size_t k = 0; k < e.joins.size(); ++k) {
    const ColocationJoin& j = e.joins[k];
    joins_of[j.node].push_back(k);
    const bool both_ways = j.why == ColocationJoin::Why::kIgnored || j.why == ColocationJoin::Why::kRefused;
    if (both_ways && j.with != j.node) joins_of[j.with].push_back(k);
  }
  for (const ExplainedMember& m : e.members) {
    const Node& member = graph.nodes[m.node];
    out += fmt::format("    {} ({}): requests '{}', has kernels for {}\n", member.name, member.op, m.requested,
                       Types(m.types));
    const auto touching = joins_of.find(m.node);
    if (touching == joins_of.end()) continue;
    std::vector<size_t> ks = touching->second;
    std::sort(ks.begin(), ks.end());  // in the order the placer joined them
    for (size_t k : ks) out += "      " + JoinLine(e.joins[k], m.node, graph) + "\n";
  }
  if (e.devices.empty()) {  // the colocation graph itself failed
    return out + fmt::format("  Placement failed building the colocation groups: {}\n", FirstLine(e.error));
  }
  out += fmt::format("  Merged request: {}", Quoted(e.merged_request));
  if (!e.resource_device.empty()) out += fmt::format(" (its resource's device: {})", Quoted(e.resource_device));
  out += fmt::format("\n  Device types every member has a kernel for: {}\n", Types(e.group_types));
  // Types every member runs but the group may not use: the XLA devices
  // a group goes to only when it asks for one (MaybeExcludeXlaDevices).
  std::vector<std::string> left_out = e.members[0].types;
  for (const ExplainedMember& m : e.members) {
    left_out.erase(std::remove_if(left_out.begin(), left_out.end(),
                                  [&](const std::string& t) {
                                    return std::find(m.types.begin(), m.types.end(), t) == m.types.end() ||
                                           std::find(e.group_types.begin(), e.group_types.end(), t) !=
                                               e.group_types.end();
                                  }),
                   left_out.end());
  }
  if (!left_out.empty()) {
    out += fmt::format("    ({} left out: the group did not ask for an XLA device)\n", Types(left_out));
  }
  switch (e.stage) {
    case CandidateStage::kRequest:
      break;
    case CandidateStage::kPreferredSoft:
      out += fmt::format("  Soft placement: no device fits {}; of the type and id it keeps what the group's resource "
                         "device names (GetPreferredSoftDeviceName): {}\n",
                         Quoted(e.merged_request), Quoted(e.matched));
      break;
    case CandidateStage::kSoftRelaxed:
      out += fmt::format("  Soft placement: no device fits {}, nor that with the resource device's type and id "
                         "only; it keeps job, replica and task (GetSoftDeviceName): {}\n",
                         Quoted(e.merged_request), Quoted(e.matched));
      break;
    case CandidateStage::kNone:
      out += "  No device fits: the group cannot be placed\n";
      break;
  }
  out += e.call_device_first
             ? "  Devices, in TensorFlow's order (the call's device first, then device type priority, then name):\n"
             : "  Devices, in TensorFlow's order (device type priority, then name):\n";
  int rank = 0;
  for (size_t i = 0; i < e.devices.size(); ++i) {
    const Device& d = devices[e.devices[i]];
    const std::string what = fmt::format("{} ({}, priority {})", device_name(e.devices[i]), d.type, d.priority());
    if (e.excluded[i].empty()) {
      out += fmt::format("    {}. {}{}\n", ++rank, what, e.devices[i] == e.device ? "  <- chosen" : "");
    } else {
      out += fmt::format("    -  {}: {}\n", what, e.excluded[i]);
    }
  }
  std::string rule;
  switch (e.rule) {
    case PlacementRule::kFirstCandidate:
      rule = "the first candidate";
      break;
    case PlacementRule::kHeuristicA:
      rule = fmt::format("Heuristic A: a generator goes where all its consumers went (as '{}')",
                         graph.nodes[e.rule_node].name);
      break;
    case PlacementRule::kHeuristicB:
      rule = fmt::format("Heuristic B: a metadata op goes with its input '{}'", graph.nodes[e.rule_node].name);
      break;
    case PlacementRule::kNotPlaced:
      out += e.error.empty() ? "  Not placed: placement failed before this group\n"
                             : fmt::format("  Placement fails here: {}\n", FirstLine(e.error));
      return out;
  }
  if (e.decided_by >= 0 && e.decided_by != e.node) {
    rule += fmt::format(", when '{}' was placed (its group's first in placement order)", graph.nodes[e.decided_by].name);
  }
  out += fmt::format("  Rule: {}\n", rule);
  if (!e.rule_note.empty()) out += fmt::format("    ({})\n", e.rule_note);
  out += fmt::format("  Placed on {}\n", device_name(e.device));
  return out;
}

}  // namespace tfrun
