#include "core/placement/colocation_graph.h"

#include "core/graph/node_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <optional>

#include "core/base/device_types.h"
#include "core/graph/function_library.h"
#include "core/graph/kernel_lookup.h"
#include "core/graph/placer_inspection.h"
#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

// How deep calls the placer inspects may nest (AddInspectionConstraints).
constexpr size_t kMaxInspectionDepth = 64;

Status Incompatible(std::string_view what, const DeviceSpec& target, const DeviceSpec& other) {
  return PlacementError(fmt::format("Cannot merge devices with incompatible {}: '{}' and '{}'", what,
                                    target.ToString(), other.ToString()));
}

// One field of MergeDevNames: `other`'s value where `target` has none;
// false (and `target` untouched) on a conflict.
template <typename T>
bool MergeField(std::optional<T>* target, const std::optional<T>& other) {
  if (!other) return true;
  if (*target && **target != *other) return false;
  *target = other;
  return true;
}

// IsRefOrResourceGeneratorNode: no inputs, one reference (or resource)
// output; its request is also the group's resource device.
bool IsRefGenerator(const Graph& graph, const Node& node) {
  if (!node.inputs.empty() || node.num_outputs != 1) return false;
  const NodeProperties* def = graph.PropertiesOf(node);
  return def != nullptr && IsRefOrResourceType(def->output_types[0]);
}

// TensorFlow 2.21's InputColocationExemptionRegistry: ops whose resource
// inputs do not pull them into the resource's group (each kernel file's
// REGISTER_INPUT_COLOCATION_EXEMPTION): IdentityN (the fetchable stand-in
// for a lowered or inlined op), function calls, and the dataset ops that
// take functions.
bool ExemptFromResourceInputColocation(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "IdentityN", "PartitionedCall", "StatefulPartitionedCall", "DeleteMultiDeviceIterator", "MapDataset",
      "ParallelMapDataset", "ParallelMapDatasetV2", "FilterDataset", "FlatMapDataset", "InterleaveDataset",
      "ParallelInterleaveDataset", "ParallelInterleaveDatasetV2", "ParallelInterleaveDatasetV3",
      "ParallelInterleaveDatasetV4", "LegacyParallelInterleaveDatasetV2", "ExperimentalParallelInterleaveDataset",
      "MapAndBatchDataset", "ExperimentalMapAndBatchDataset", "ScanDataset", "ExperimentalScanDataset",
      "GroupByWindowDataset", "ExperimentalGroupByWindowDataset", "GroupByReducerDataset",
      "ExperimentalGroupByReducerDataset", "ParallelFilterDataset", "TakeWhileDataset", "ExperimentalTakeWhileDataset"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// Whether input `i` of `node` is a reference input (Assign's `ref`) or a
// resource input (ReadVariableOp's `resource`, an Identity of a resource):
// kRefEdge or kResourceEdge; nullopt for a plain input.
std::optional<ColocationJoin::Why> RefInputKind(const Graph& graph, const Node& node, size_t i) {
  const NodeProperties* def = graph.PropertiesOf(node);
  if (def == nullptr || i >= def->input_types.size()) return std::nullopt;
  if (def->input_types[i] == "RESOURCE") return ColocationJoin::Why::kResourceEdge;
  if (IsRefType(def->input_types[i])) return ColocationJoin::Why::kRefEdge;
  return std::nullopt;
}

}  // namespace

Status MergeDevNames(DeviceSpec* target, const DeviceSpec& other, bool allow_soft_placement) {
  // Field by field, as DeviceNameUtils does: an error quotes the target
  // with the fields merged before the conflict.
  if (!MergeField(&target->job, other.job)) return Incompatible("jobs", *target, other);
  if (!MergeField(&target->replica, other.replica)) return Incompatible("replicas", *target, other);
  if (!MergeField(&target->task, other.task)) return Incompatible("tasks", *target, other);
  // A type or id conflict: soft placement drops the type and id, or the id.
  if (!MergeField(&target->type, other.type)) {
    if (!allow_soft_placement) return Incompatible("types", *target, other);
    target->type.reset();
    target->id.reset();
    return Status::Ok();
  }
  if (!MergeField(&target->id, other.id)) {
    if (!allow_soft_placement) return Incompatible("ids", *target, other);
    target->id.reset();
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
  std::vector<int> members = {id};
  for (int m = groups_[id].next; m != id; m = groups_[m].next) members.push_back(m);
  std::sort(members.begin(), members.end());
  return members;
}

const DeviceSpec& ColocationGraph::RequestOf(int id) {
  const int root = RootOf(id);
  const int spec = groups_[root].requested;
  return spec < 0 ? graph_.nodes[root].requested_device : specs_[spec];
}

DeviceSpec ColocationGraph::ResourceOf(int root) const {
  const int spec = groups_[root].resource;
  if (spec >= 0) return specs_[spec];
  return IsRefGenerator(graph_, graph_.nodes[root]) ? graph_.nodes[root].requested_device : DeviceSpec();
}

int ColocationGraph::TypeBit(std::string_view type) const {
  for (size_t i = 0; i < types_.size(); ++i) {
    if (types_[i] == type) return static_cast<int>(i);
  }
  return -1;
}

bool ColocationGraph::Supports(int id, std::string_view device_type) {
  const int bit = TypeBit(device_type);
  return bit >= 0 && (groups_[RootOf(id)].types & (1u << bit)) != 0;
}

std::vector<std::string> ColocationGraph::SupportedTypes(int id) {
  std::vector<std::string> types;
  const uint32_t bits = groups_[RootOf(id)].types;
  for (size_t t = 0; t < types_.size(); ++t) {
    if ((bits & (1u << t)) != 0) types.push_back(types_[t]);
  }
  return types;
}

Status ColocationGraph::Located(int id, const std::string& message) const {
  const Node& node = graph_.nodes[id];
  // The message may name another member first: the site gives the location only.
  return graph_.ErrorAt(ErrorKind::kPlacement, node, "InvalidArgumentError: " + message, false);
}

Status ColocationGraph::Colocate(int x, int y) {
  const int x_root = RootOf(x), y_root = RootOf(y);
  if (x_root == y_root) return Status::Ok();
  // Union by rank; a tie keeps x's root (ColocationGraph::ColocateNodes).
  int new_root = x_root, old_root = y_root;
  if (groups_[x_root].rank < groups_[y_root].rank) std::swap(new_root, old_root);
  const std::string nodes = fmt::format("Cannot colocate nodes {{{{colocation_node {}}}}} and "
                                        "{{{{colocation_node {}}}}}",
                                        graph_.nodes[x].name, graph_.nodes[y].name);
  DeviceSpec resource = ResourceOf(new_root);
  DeviceSpec requested = RequestOf(new_root);
  Status merged_names = MergeDevNames(&resource, ResourceOf(old_root), false);
  if (merged_names.ok()) merged_names = MergeDevNames(&requested, RequestOf(old_root), soft_);
  if (!merged_names.ok()) return PlacementError(nodes + ": " + merged_names.message());
  // Member::MergeDeviceNames keeps the request a specialization of the
  // resource device (EnsureSpecification): what soft placement cleared
  // comes back from the resource's name.
  if (resource.job) requested.job = resource.job;
  if (resource.replica) requested.replica = resource.replica;
  if (resource.task) requested.task = resource.task;
  if (resource.type) requested.type = resource.type;
  if (resource.id) requested.id = resource.id;
  Group& root = groups_[new_root];
  Group& old = groups_[old_root];
  const uint32_t types = root.types & old.types;
  if (types == 0) {
    return PlacementError(nodes + " because no device type supports both of those nodes and the other nodes "
                                  "colocated with them.");
  }
  root.types = types;
  specs_.push_back(std::move(requested));
  root.requested = static_cast<int>(specs_.size()) - 1;
  specs_.push_back(std::move(resource));
  root.resource = static_cast<int>(specs_.size()) - 1;
  std::swap(root.next, old.next);  // splice the two rings
  root.size += old.size;
  if (root.rank == old.rank) ++root.rank;
  parent_[old_root] = new_root;
  return Status::Ok();
}

Status ColocationGraph::ColocateResourceOrRefEdge(int src, int dst, ColocationJoin::Why kind, int input) {
  const Node& node = graph_.nodes[dst];
  DeviceSpec check = RequestOf(dst);
  const bool gives_way = !MergeDevNames(&check, RequestOf(src), false).ok();
  if (gives_way) {
    // Member::EnsureCompatibilityAcrossResourceEdge's LOG(INFO) line.
    for (int m : MembersOf(dst)) overridden_.push_back(m);
    log_notes_.push_back(fmt::format("Ignoring device specification {} for node '{}' because the input edge from "
                                     "'{}' is a reference connection and already has a device field set to {}",
                                     RequestOf(dst).ToString(), node.name, graph_.nodes[src].name,
                                     RequestOf(src).ToString()));
    specs_.push_back(RequestOf(src));
    groups_[RootOf(dst)].requested = static_cast<int>(specs_.size()) - 1;
  }
  if (record_joins_) joins_.push_back({kind, dst, src, input, "", gives_way});
  const Status s = Colocate(src, dst);
  if (!s.ok()) {
    return Located(dst, "Nodes were connected by a reference or resource connection (requiring them to be on the "
                        "same device), but the two nodes were assigned two different devices: " +
                            s.message());
  }
  return Status::Ok();
}

// InspectingPlacer::ComputeIOColocationGroups, then ApplyIOColocationGroups:
// the body of the function `call` calls is grouped as a graph of its own
// (its calls isolated and inspected in turn); the call's inputs and
// consumers that stand for arguments and results of one body group join
// (a consumer through a resource input as a resource edge), and each such
// group is limited to what the body's group asked for and can run on.
Status ColocationGraph::AddInspectionConstraints(int call) {
  const Node& node = graph_.nodes[call];
  const std::string function = CalledFunction(graph_, node);
  if (std::find(function_stack_.begin(), function_stack_.end(), function) != function_stack_.end()) {
    // InspectingPlacer's words, without the stack's listing.
    return Located(call, fmt::format("Recursive function calls are not supported. Node {{{{node {}}}}} inside the "
                                     "body of {{{{function_node {}}}}} calls function {{{{function_node {}}}}} which "
                                     "is already present in the call stack",
                                     node.name, function_stack_.back(), function));
  }
  // Each level is a nested grouping on the stack: bounded, where
  // TensorFlow has no bound.
  if (function_stack_.size() >= kMaxInspectionDepth) {
    return Located(call, fmt::format("calls of functions that return resources are nested more than {} deep here "
                                     "(the placer inspects each body in turn)",
                                     kMaxInspectionDepth));
  }
  StatusOr<FunctionBody> body = graph_.functions->Instantiate(function);
  if (!body.ok()) return body.status();
  TFRUN_RETURN_IF_ERROR(IsolatePlacerInspectionRequiredOps(&body->graph));
  ColocationGraph inner(body->graph, devices_, soft_);
  inner.function_stack_ = function_stack_;
  inner.function_stack_.push_back(function);
  TFRUN_RETURN_IF_ERROR(inner.Initialize());
  // Group ids in order of first appearance: the arguments, then the results.
  std::vector<int> group_roots;
  auto group_of = [&](int body_node) {
    const int root = inner.RootOf(body_node);
    auto it = std::find(group_roots.begin(), group_roots.end(), root);
    if (it != group_roots.end()) return static_cast<int>(it - group_roots.begin());
    group_roots.push_back(root);
    return static_cast<int>(group_roots.size()) - 1;
  };
  std::vector<int> input_groups, output_groups;
  for (int arg : body->args) input_groups.push_back(group_of(arg));
  for (int ret : body->rets) output_groups.push_back(group_of(ret));
  if (input_groups.size() != node.inputs.size()) {
    return Located(call, fmt::format("Cannot apply input/output device constraints to node {} because "
                                     "input_groups.size() ({}) is different from number of inputs into the op node "
                                     "({})",
                                     node.name, input_groups.size(), node.inputs.size()));
  }
  // GetGroupNodes: each argument's producer; each data edge out, by
  // consumer and input, with whether the consumer reads a resource there.
  std::vector<std::vector<std::pair<int, bool>>> group_nodes(group_roots.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) group_nodes[input_groups[i]].emplace_back(node.inputs[i], false);
  std::vector<int> readers = node.consumers;
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  for (int c : readers) {
    const Node& reader = graph_.nodes[c];
    for (size_t i = 0; i < reader.inputs.size(); ++i) {
      if (reader.inputs[i] != call) continue;
      const int output = reader.input(i).index;
      if (output < 0 || static_cast<size_t>(output) >= output_groups.size()) continue;
      const std::optional<ColocationJoin::Why> kind = RefInputKind(graph_, reader, i);
      group_nodes[output_groups[output]].emplace_back(c, kind == ColocationJoin::Why::kResourceEdge);
    }
  }
  for (const auto& members : group_nodes) {
    for (size_t j = 1; j < members.size(); ++j) {
      if (members[j].second) {
        TFRUN_RETURN_IF_ERROR(ColocateResourceOrRefEdge(members[0].first, members[j].first,
                                                        ColocationJoin::Why::kResourceEdge, -1));
        continue;
      }
      const Status s = Colocate(members[0].first, members[j].first);
      if (!s.ok()) return Located(members[j].first, s.message());
    }
  }
  // LimitToPossibleDevices: the body group's request, resource device and
  // device types (the same device set: the same type bits).
  for (size_t g = 0; g < group_roots.size(); ++g) {
    if (group_nodes[g].empty()) continue;
    const int root = RootOf(group_nodes[g][0].first);
    DeviceSpec requested = RequestOf(root);
    TFRUN_RETURN_IF_ERROR(MergeDevNames(&requested, inner.RequestOf(group_roots[g]), soft_));
    DeviceSpec resource = ResourceOf(root);
    TFRUN_RETURN_IF_ERROR(MergeDevNames(&resource, inner.ResourceDevice(group_roots[g]), false));
    specs_.push_back(std::move(requested));
    groups_[root].requested = static_cast<int>(specs_.size()) - 1;
    specs_.push_back(std::move(resource));
    groups_[root].resource = static_cast<int>(specs_.size()) - 1;
    groups_[root].types &= inner.groups_[group_roots[g]].types;
  }
  return Status::Ok();
}

Status ColocationGraph::NoKernelAnywhere(const Node& node) const {
  std::set<std::string> registered(types_.begin(), types_.end());
  const TfOpDef* op = FindTfOp(node.op);
  const NodeAttrs attrs = graph_.PropertiesOf(node) != nullptr ? graph_.PropertiesOf(node)->attrs : NodeAttrs();
  std::string kernels = op != nullptr ? KernelsRegisteredForOp(*op, devices_.HasXlaDevices()) : "";
  while (!kernels.empty() && kernels.back() == '\n') kernels.pop_back();
  return Located(node.id, fmt::format("No OpKernel was registered to support Op '{}' used by {{{{node {}}}}} with "
                                      "these attrs: [{}]\nRegistered devices: [{}]\nRegistered kernels:\n{}",
                                      node.op, node.name, SummarizeAttrs(attrs), fmt::join(registered, ", "),
                                      kernels));
}

Status ColocationGraph::Initialize() {
  const int n = static_cast<int>(graph_.nodes.size());
  parent_.resize(n);
  groups_.resize(n);
  // Device types in the DeviceSet's priority order, each once.
  for (int d : devices_.InPlacementOrder()) {
    if (TypeBit(devices_[d].type) < 0) types_.push_back(devices_[d].type);
  }
  for (const Node& node : graph_.nodes) {
    parent_[node.id] = node.id;
    Group& g = groups_[node.id];
    g.next = node.id;
    for (size_t t = 0; t < types_.size(); ++t) {
      if (TfHasKernel(graph_, node, types_[t])) g.types |= 1u << t;
    }
    // InitializeMember: a node no device of the machine has a kernel for
    // fails the graph before anything is placed (TensorFlow 2's words).
    if (g.types == 0 && report_missing_kernels_) TFRUN_RETURN_IF_ERROR(NoKernelAnywhere(node));
  }
  for (const auto& [id, device] : assigned_) {
    specs_.push_back(device);
    groups_[id].requested = static_cast<int>(specs_.size()) - 1;
  }
  // ColocateResourceAndRefEdges: a reference edge joins its ends; a request
  // of the consumer's group that conflicts gives way to the producer's.
  // Edges in TensorFlow's edge order: as imported, a while loop's back
  // edges last.
  std::vector<std::pair<int, size_t>> back_edges;
  // A call the placer inspects (core/graph/placer_inspection.h) joins
  // nothing along its own edges: its body decides, below.
  std::vector<bool> inspected(n, false);
  for (const Node& node : graph_.nodes) inspected[node.id] = NeedsPlacerInspection(graph_, node);
  const auto ref_edge = [&](const Node& node, size_t i) -> Status {
    const std::optional<ColocationJoin::Why> kind = RefInputKind(graph_, node, i);
    if (!kind || inspected[node.id] || inspected[node.inputs[i]] || ExemptFromResourceInputColocation(node.op)) {
      return Status::Ok();
    }
    return ColocateResourceOrRefEdge(node.inputs[i], node.id, *kind, static_cast<int>(i));
  };
  for (const Node& node : graph_.nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (graph_.IsBackEdge(node, i)) {
        back_edges.emplace_back(node.id, i);
        continue;
      }
      TFRUN_RETURN_IF_ERROR(ref_edge(node, i));
    }
  }
  for (const auto& [id, i] : back_edges) TFRUN_RETURN_IF_ERROR(ref_edge(graph_.nodes[id], i));
  // AddInspectionConstraints, call by call.
  for (const Node& node : graph_.nodes) {
    if (inspected[node.id]) TFRUN_RETURN_IF_ERROR(AddInspectionConstraints(node.id));
  }
  // ColocateAllNodes: each `_class` name, then the node's own name, joins
  // the group whose first node took that name. Most nodes have no _class:
  // their own name is new unless another node named it before them.
  std::map<std::string_view, int, std::less<>> root_of_name;
  auto join = [&](const Node& node, std::string_view name) -> Status {
    auto [it, first] = root_of_name.emplace(name, node.id);
    if (first) return Status::Ok();
    const Status s = Colocate(node.id, it->second);
    if (record_joins_ && it->second != node.id) {
      const bool own = name == node.name;
      const auto why = !s.ok() ? (soft_ ? ColocationJoin::Why::kIgnored : ColocationJoin::Why::kRefused)
                       : own   ? ColocationJoin::Why::kNamedBy
                               : ColocationJoin::Why::kClass;
      joins_.push_back({why, node.id, it->second, -1, s.ok() ? std::string(name) : s.message()});
    }
    if (s.ok() || soft_) return Status::Ok();  // soft placement ignores the request
    return Located(node.id, s.message());
  };
  std::vector<bool> named(n, false);  // a node some _class names
  for (const Node& node : graph_.nodes) {
    for (const std::string& name : node.colocation) {
      if (const Node* target = graph_.Find(name)) named[target->id] = true;
    }
  }
  for (const Node& node : graph_.nodes) {
    for (const std::string& name : node.colocation) TFRUN_RETURN_IF_ERROR(join(node, name));
    // A name nothing refers to starts a group of one, which it already is.
    if (named[node.id] || root_of_name.count(node.name) > 0) TFRUN_RETURN_IF_ERROR(join(node, node.name));
  }
  // MaybeExcludeXlaDevices: a group that did not ask for an XLA device
  // does not go to one while another type can take it.
  uint32_t xla = 0;
  for (size_t t = 0; t < types_.size(); ++t) {
    const DeviceTypeInfo* info = FindDeviceType(types_[t]);
    if (info != nullptr && info->is_xla) xla |= 1u << t;
  }
  if (xla == 0) return Status::Ok();
  for (const Node& node : graph_.nodes) {
    if (RootOf(node.id) != node.id) continue;
    Group& g = groups_[node.id];
    const DeviceSpec& requested = RequestOf(node.id);
    if (requested.type) {
      const DeviceTypeInfo* info = FindDeviceType(*requested.type);
      if (info != nullptr && info->is_xla) continue;
    }
    if ((g.types & ~xla) != 0) g.types &= ~xla;
  }
  return Status::Ok();
}

}  // namespace tfrun
