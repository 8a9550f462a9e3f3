#include "core/colocation_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/device_types.h"
#include "core/kernel_lookup.h"
#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

template <typename T>
Status MergeField(std::optional<T>* target, const std::optional<T>& other, std::string_view what,
                  const DeviceSpec& target_spec, const DeviceSpec& other_spec) {
  if (!other) return Status::Ok();
  if (*target && **target != *other) {
    return PlacementError(fmt::format("Cannot merge devices with incompatible {}: '{}' and '{}'", what,
                                      target_spec.ToString(), other_spec.ToString()));
  }
  *target = other;
  return Status::Ok();
}

// IsRefOrResourceGeneratorNode: no inputs, one reference (or resource)
// output; its request is also the group's resource device.
bool IsRefGenerator(const Node& node) {
  if (!node.inputs.empty() || node.num_outputs != 1) return false;
  const TfOpDef* op = FindTfOp(node.op);
  return op != nullptr && op->outputs.size() == 1 && (op->outputs[0].is_ref || op->outputs[0].type == "RESOURCE");
}

// Whether input `i` of `node` is a reference input (Assign's `ref`).
bool IsRefInput(const Node& node, size_t i) {
  const TfOpDef* op = FindTfOp(node.op);
  return op != nullptr && i < op->inputs.size() && op->inputs.size() == node.inputs.size() && op->inputs[i].is_ref;
}

}  // namespace

Status MergeDevNames(DeviceSpec* target, const DeviceSpec& other, bool allow_soft_placement) {
  const DeviceSpec original = *target;
  TFRUN_RETURN_IF_ERROR(MergeField(&target->job, other.job, "jobs", original, other));
  TFRUN_RETURN_IF_ERROR(MergeField(&target->replica, other.replica, "replicas", original, other));
  TFRUN_RETURN_IF_ERROR(MergeField(&target->task, other.task, "tasks", original, other));
  if (other.type) {
    if (target->type && *target->type != *other.type) {
      if (!allow_soft_placement) {
        return PlacementError(fmt::format("Cannot merge devices with incompatible types: '{}' and '{}'",
                                          original.ToString(), other.ToString()));
      }
      target->type.reset();
      target->id.reset();
      return Status::Ok();
    }
    target->type = other.type;
  }
  if (other.id) {
    if (target->id && *target->id != *other.id) {
      if (!allow_soft_placement) {
        return PlacementError(fmt::format("Cannot merge devices with incompatible ids: '{}' and '{}'",
                                          original.ToString(), other.ToString()));
      }
      target->id.reset();
      return Status::Ok();
    }
    target->id = other.id;
  }
  return Status::Ok();
}

ColocationGraph::ColocationGraph(const Graph& graph, const DeviceSet& devices, bool allow_soft_placement)
    : graph_(graph), devices_(devices), soft_(allow_soft_placement) {}

int ColocationGraph::RootOf(int id) {
  while (parent_[id] != id) {
    parent_[id] = parent_[parent_[id]];  // path halving
    id = parent_[id];
  }
  return id;
}

std::vector<int> ColocationGraph::MembersOf(int id) {
  std::vector<int> members = groups_[RootOf(id)].members;
  std::sort(members.begin(), members.end());
  return members;
}

Status ColocationGraph::Located(int id, const std::string& message) const {
  const Node& node = graph_.nodes[id];
  return PlacementError(fmt::format("{}: InvalidArgumentError: {}", graph_.Where(node.location), message));
}

Status ColocationGraph::Colocate(int x, int y) {
  const int x_root = RootOf(x), y_root = RootOf(y);
  if (x_root == y_root) return Status::Ok();
  // Union by rank; a tie keeps x's root (ColocationGraph::ColocateNodes).
  int new_root = x_root, old_root = y_root;
  if (groups_[x_root].rank < groups_[y_root].rank) std::swap(new_root, old_root);
  Group merged = groups_[new_root];
  const Group& old = groups_[old_root];
  const std::string nodes = fmt::format("Cannot colocate nodes {{{{colocation_node {}}}}} and "
                                        "{{{{colocation_node {}}}}}",
                                        graph_.nodes[x].name, graph_.nodes[y].name);
  Status merged_names = MergeDevNames(&merged.resource, old.resource, false);
  if (merged_names.ok()) merged_names = MergeDevNames(&merged.requested, old.requested, soft_);
  if (!merged_names.ok()) return PlacementError(nodes + ": " + merged_names.message());
  std::vector<std::string> types;
  for (const std::string& t : merged.types) {
    if (std::find(old.types.begin(), old.types.end(), t) != old.types.end()) types.push_back(t);
  }
  if (types.empty()) {
    return PlacementError(nodes + " because no device type supports both of those nodes and the other nodes "
                                  "colocated with them.");
  }
  merged.types = std::move(types);
  merged.members.insert(merged.members.end(), old.members.begin(), old.members.end());
  if (groups_[x_root].rank == groups_[y_root].rank) ++merged.rank;
  groups_[new_root] = std::move(merged);
  groups_[old_root] = Group();
  parent_[old_root] = new_root;
  return Status::Ok();
}

Status ColocationGraph::Initialize() {
  const int n = static_cast<int>(graph_.nodes.size());
  parent_.resize(n);
  groups_.resize(n);
  // Device types in the DeviceSet's priority order, each once.
  std::vector<std::string> present;
  for (int d : devices_.InPlacementOrder()) {
    if (std::find(present.begin(), present.end(), devices_[d].type) == present.end()) {
      present.push_back(devices_[d].type);
    }
  }
  for (const Node& node : graph_.nodes) {
    parent_[node.id] = node.id;
    Group& g = groups_[node.id];
    g.members = {node.id};
    g.requested = node.requested_device;
    if (IsRefGenerator(node)) g.resource = node.requested_device;
    for (const std::string& type : present) {
      if (TfHasKernel(graph_, node, type)) g.types.push_back(type);
    }
  }
  // ColocateResourceAndRefEdges: a reference edge joins its ends; a request
  // of the consumer's group that conflicts gives way to the producer's.
  for (const Node& node : graph_.nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!IsRefInput(node, i)) continue;
      const int src = node.inputs[i];
      DeviceSpec check = groups_[RootOf(node.id)].requested;
      if (!MergeDevNames(&check, groups_[RootOf(src)].requested, false).ok()) {
        groups_[RootOf(node.id)].requested = groups_[RootOf(src)].requested;
      }
      const Status s = Colocate(src, node.id);
      if (!s.ok()) {
        return Located(node.id, "Nodes were connected by a reference or resource connection (requiring them to be "
                                "on the same device), but the two nodes were assigned two different devices: " +
                                    s.message());
      }
    }
  }
  // ColocateAllNodes: each `_class` name, then the node's own name, joins
  // the group whose first node took that name.
  std::map<std::string, int, std::less<>> root_of_name;
  auto join = [&](const Node& node, const std::string& name) -> Status {
    auto [it, first] = root_of_name.emplace(name, node.id);
    if (first) return Status::Ok();
    const Status s = Colocate(node.id, it->second);
    if (s.ok() || soft_) return Status::Ok();  // soft placement ignores the request
    return Located(node.id, s.message());
  };
  for (const Node& node : graph_.nodes) {
    for (const std::string& name : node.colocation) TFRUN_RETURN_IF_ERROR(join(node, name));
    TFRUN_RETURN_IF_ERROR(join(node, node.name));
  }
  // MaybeExcludeXlaDevices: a group that did not ask for an XLA device
  // does not go to one while another type can take it.
  auto is_xla = [](const std::string& type) {
    const DeviceTypeInfo* info = FindDeviceType(type);
    return info != nullptr && info->is_xla;
  };
  for (const Node& node : graph_.nodes) {
    if (RootOf(node.id) != node.id) continue;
    Group& g = groups_[node.id];
    if (g.requested.type && is_xla(*g.requested.type)) continue;
    if (std::all_of(g.types.begin(), g.types.end(), is_xla)) continue;
    g.types.erase(std::remove_if(g.types.begin(), g.types.end(), is_xla), g.types.end());
  }
  return Status::Ok();
}

}  // namespace tfrun
