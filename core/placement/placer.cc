#include "core/placement/placer.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/base/device_types.h"
#include "core/graph/kernel_lookup.h"
#include "core/graph/op_registry.h"
#include "core/placement/colocation_graph.h"
#include "core/placement/placement_log.h"

namespace tfrun {

std::vector<int> ImportOrder(const Graph& graph, enum ImportOrder order) {
  const int n = static_cast<int>(graph.nodes.size());
  // A GraphDef's ids are GraphConstructor's order already, and the nodes
  // passes append come after them, as TensorFlow's op_nodes() walks them.
  if (order == ImportOrder::kFile && graph.source == GraphSource::kTensorFlow) {
    std::vector<int> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = i;
    return ids;
  }
  std::vector<int> pending(n, 0);
  // A while loop's back edges (NextIteration to Merge) never hold a node
  // back: GraphConstructor adds them after both ends.
  const auto back_edge = [&](int producer, int consumer) {
    return graph.nodes[consumer].cls == NodeClass::kMerge && graph.nodes[producer].cls == NodeClass::kNextIteration;
  };
  for (const Node& node : graph.nodes) {
    for (int in : node.inputs) pending[node.id] += back_edge(in, node.id) ? 0 : 1;
    for (int in : node.control_inputs) pending[node.id] += back_edge(in, node.id) ? 0 : 1;
  }
  std::vector<int> result;
  result.reserve(n);
  // A node is ready when all its inputs are imported; kFile takes the
  // lowest-index ready node (a min-heap), kStack the last one that became
  // ready, starting from the nodes without inputs in file order.
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  const bool file_order = order == ImportOrder::kFile;
  if (file_order) std::make_heap(ready.begin(), ready.end(), std::greater<int>());
  while (!ready.empty()) {
    if (file_order) std::pop_heap(ready.begin(), ready.end(), std::greater<int>());
    const int next = ready.back();
    ready.pop_back();
    result.push_back(next);
    for (int c : graph.nodes[next].consumers) {
      if (back_edge(next, c)) continue;
      if (--pending[c] == 0) {
        ready.push_back(c);
        if (file_order) std::push_heap(ready.begin(), ready.end(), std::greater<int>());
      }
    }
  }
  return result;
}

std::string SoftMoveNote(const std::string& node, std::string_view op, DType dtype, const DeviceSpec& requested,
                         const Device& to, const DeviceSet& devices, const Node* colocated_with) {
  const bool any_match = std::any_of(devices.devices().begin(), devices.devices().end(),
                                     [&](const Device& d) { return requested.Matches(d.spec); });
  if (any_match && colocated_with != nullptr) {
    // It could run there itself; the node it must stay with cannot, on the
    // device that node asks for (this one may ask for none).
    const DeviceSpec& theirs = colocated_with->requested_device;
    const bool theirs_match = std::any_of(devices.devices().begin(), devices.devices().end(),
                                          [&](const Device& d) { return theirs.Matches(d.spec); });
    if (!theirs_match) {
      return fmt::format("soft placement put '{}' ({}) on {}: it is colocated with '{}' ({}), and no device matches {}",
                         node, op, to.name, colocated_with->name, colocated_with->op, theirs.ToString());
    }
    return fmt::format("soft placement put '{}' ({}) on {}: it is colocated with '{}' ({}), which has no {} kernel "
                       "for {} on {}",
                       node, op, to.name, colocated_with->name, colocated_with->op, colocated_with->op,
                       Name(colocated_with->dtype), theirs.ToString());
  }
  return fmt::format("soft placement put '{}' ({}) on {}: {}", node, op, to.name,
                     any_match ? fmt::format("no {} kernel for {} on {}", op, Name(dtype), requested.ToString())
                               : fmt::format("no device matches {}", requested.ToString()));
}

namespace {

// placer.cc IsGeneratorNode: no data inputs (control inputs do not count)
// and one output that is not a reference (VariableV2's is).
bool IsGenerator(const Graph& graph, const Node& node) {
  if (!node.inputs.empty() || node.num_outputs != 1) return false;
  const NodeProperties* def = graph.PropertiesOf(node);
  return def != nullptr && !IsRefType(def->output_types[0]);
}

// Node::IsMetadata (graph.cc's node classes): ops that read only their
// input's shape, which Heuristic B places with that input.
bool IsMetadata(const Node& node) { return node.cls == NodeClass::kMetadata; }

class Placer {
 public:
  Placer(const Graph& graph, const DeviceSet& devices, bool soft, const CompatProfile& profile,
         const std::vector<int>& explain, const std::string& call_device)
      : graph_(graph), devices_(devices), soft_(soft), profile_(profile), colocation_(graph, devices, soft),
        explain_(explain), call_device_text_(call_device) {
    sorted_ = devices.InPlacementOrder();
    if (!explain_.empty()) colocation_.RecordJoins();
    if (profile.error_style == PlacementErrorStyle::kTf2) colocation_.ReportMissingKernels();
  }

  Status Run(Placement* p) {
    *p = Placement();
    const Status placed = PlaceAll(p);
    if (!explain_.empty()) {
      for (int id : explain_) p->explanations.push_back(Explain(id, *p, placed));
    }
    return placed;
  }

 private:
  // The candidates of a group and how they were found.
  struct Candidates {
    std::vector<int> devices;  // in TensorFlow's order
    CandidateStage stage = CandidateStage::kNone;
    DeviceSpec matched;        // the request they match
  };

  // What the placer decided for a group (--explain), by its root.
  struct Decision {
    Candidates candidates;
    PlacementRule rule = PlacementRule::kFirstCandidate;
    int decided_by = -1;
    int rule_node = -1;
    std::string rule_note;
  };

  Status PlaceAll(Placement* p) {
    p->device_of.assign(graph_.nodes.size(), -1);
    p->import_order = ImportOrder(graph_, profile_.import_order);
    TFRUN_RETURN_IF_ERROR(ResolvePinned());
    initialized_ = colocation_.Initialize();
    p->log_notes = colocation_.log_notes();
    p->request_overridden = colocation_.overridden();
    TFRUN_RETURN_IF_ERROR(initialized_);
    TFRUN_RETURN_IF_ERROR(PlacePinned(p));
    std::vector<int> first, second;
    for (int id : p->import_order) {
      const Node& node = graph_.nodes[id];
      // TensorFlow logs a node the function runtime assigned (a pinned
      // _Arg or _Retval) in the first pass; a generator it did not assign
      // waits for the second, even where a pinned member of its group has
      // decided its device (a VarHandleOp returned by a _Retval).
      const bool assigned = node.pin != Node::Pin::kNone || (p->device_of[id] >= 0 && call_device_text_.empty());
      const bool deferred = profile_.generators_last && IsGenerator(graph_, node) && !assigned;
      (deferred ? second : first).push_back(id);
    }
    for (int id : first) {
      TFRUN_RETURN_IF_ERROR(Failed(id, PlaceNode(id, p)));
      p->log_order.push_back(id);
    }
    for (int id : second) {
      TFRUN_RETURN_IF_ERROR(Failed(id, PlaceGenerator(id, p)));
      p->log_order.push_back(id);
    }
    // The import order holds every node (a cycle the loader let through
    // would leave some out): none may run unplaced.
    for (const Node& node : graph_.nodes) {
      if (p->device_of[node.id] < 0) {
        return graph_.ErrorAt(
            ErrorKind::kRuntime, node,
            fmt::format("node '{}' was never placed: it is on a cycle that is not a while loop's", node.name));
      }
    }
    return Status::Ok();
  }

  // A TF2 call's function (PinArgsAndRets): the call's device, and each
  // _Arg's, which it is assigned before its groups are built (TensorFlow's
  // requested device too, so a resource reader asking for another gives way).
  Status ResolvePinned() {
    if (call_device_text_.empty()) return Status::Ok();
    if (call_device_text_ == "default") {
      call_device_ = sorted_.empty() ? -1 : sorted_[0];
    } else {
      StatusOr<DeviceSpec> spec = DeviceSpec::Parse(call_device_text_);
      if (!spec.ok()) return BadInput(fmt::format("--call-device: {}", spec.status().message()));
      const std::vector<int> matching = MatchingDevices(*spec);
      if (matching.empty()) {
        return BadInput(fmt::format("--call-device: no device matches '{}'", call_device_text_));
      }
      call_device_ = matching[0];
    }
    assigned_.assign(graph_.nodes.size(), -1);
    for (const Node& node : graph_.nodes) {
      if (node.pin != Node::Pin::kExact) continue;
      TFRUN_ASSIGN_OR_RETURN(const std::vector<int> matching, PinnedMatches(node));
      if (matching.empty()) {
        return graph_.ErrorAt(ErrorKind::kBadInput, node,
                              fmt::format("argument '{}': no device matches '{}'", node.name, node.pinned_device));
      }
      assigned_[node.id] = matching[0];
      colocation_.Assign(node.id, devices_[matching[0]].spec);
    }
    return Status::Ok();
  }

  // The devices a pinned node's device matches (the call's where it names none).
  StatusOr<std::vector<int>> PinnedMatches(const Node& node) const {
    if (node.pinned_device.empty()) return std::vector<int>{call_device_};
    StatusOr<DeviceSpec> spec = DeviceSpec::Parse(node.pinned_device);
    if (!spec.ok()) return graph_.ErrorAt(ErrorKind::kBadInput, node, spec.status().message());
    return MatchingDevices(*spec);
  }

  // Each pinned node's group placed, first: an _Arg's on its device, a
  // _Retval's on the one device its request matches.
  Status PlacePinned(Placement* p) {
    if (call_device_text_.empty()) return Status::Ok();
    p->call_device = call_device_;
    for (const Node& node : graph_.nodes) {
      if (node.pin == Node::Pin::kNone || p->device_of[node.id] >= 0) continue;
      if (node.pin == Node::Pin::kExact) {
        AssignGroup(node.id, assigned_[node.id], false, p);
        continue;
      }
      // A _Retval's request (PinArgsAndRets' rule).
      TFRUN_ASSIGN_OR_RETURN(const std::vector<int> matching, PinnedMatches(node));
      if (matching.empty()) {
        if (!soft_) {
          return graph_.ErrorAt(ErrorKind::kPlacement, node,
                                fmt::format("Unable to find any devices for spec {}", node.pinned_device));
        }
        AssignGroup(node.id, call_device_, false, p);
      } else if (matching.size() == 1) {
        AssignGroup(node.id, matching[0], false, p);
      } else if (!OnOneTask(matching)) {
        std::vector<std::string> names;
        for (int d : matching) names.push_back(devices_[d].name);
        return graph_.ErrorAt(
            ErrorKind::kPlacement, node,
            fmt::format("When FunctionLibraryRuntime::Options.output_devices are not specified for a multi-device "
                        "function, the device specification on the output node must match exactly one device. "
                        "Matched devices are [{}]",
                        fmt::join(names, ", ")));
      }
    }
    return Status::Ok();
  }

  // The devices that match `spec`, in placement order.
  std::vector<int> MatchingDevices(const DeviceSpec& spec) const {
    std::vector<int> out;
    for (int d : sorted_) {
      if (spec.Matches(devices_[d].spec)) out.push_back(d);
    }
    return out;
  }

  bool OnOneTask(const std::vector<int>& ds) const {
    for (int d : ds) {
      const DeviceSpec& a = devices_[d].spec;
      const DeviceSpec& b = devices_[ds[0]].spec;
      if (a.job != b.job || a.replica != b.replica || a.task != b.task) return false;
    }
    return true;
  }

  // Eager's default_local_device goes first among candidates it is one of
  // (ColocationGraph::FilterSupportedDevices).
  void CallDeviceFirst(std::vector<int>* candidates) const {
    if (call_device_ < 0) return;
    auto it = std::find(candidates->begin(), candidates->end(), call_device_);
    if (it != candidates->end()) std::rotate(candidates->begin(), it, it + 1);
  }

  // Remembers which group failed, for --explain.
  Status Failed(int id, Status s) {
    if (!s.ok()) failed_root_ = colocation_.RootOf(id);
    return s;
  }

  bool explaining() const { return !explain_.empty(); }

  // Where `id` alone could go under its own request.
  std::vector<int> OwnCandidates(int id) const {
    const Node& node = graph_.nodes[id];
    return CandidateDevices(devices_, sorted_, node.requested_device,
                            [&](std::string_view type) { return TfHasKernel(graph_, node, type); });
  }

  // Where the group of `id` can go under `spec`: the devices that match it
  // and that every member has a kernel for.
  std::vector<int> Matching(int id, const DeviceSpec& spec) {
    return CandidateDevices(devices_, sorted_, spec,
                            [&](std::string_view type) { return colocation_.Supports(id, type); });
  }

  // ColocationGraph::GetDevicesForNode's search: the group's merged
  // request; under soft placement, first keeping what the group's
  // resource asked for (GetPreferredSoftDeviceName), then only job,
  // replica and task (GetSoftDeviceName).
  Candidates FindCandidates(int id) {
    Candidates c = FindRequestedCandidates(id);
    CallDeviceFirst(&c.devices);
    return c;
  }

  Candidates FindRequestedCandidates(int id) {
    Candidates c;
    const DeviceSpec& request = colocation_.RequestOf(id);
    c.matched = request;
    c.devices = Matching(id, request);
    if (!c.devices.empty()) {
      c.stage = CandidateStage::kRequest;
      return c;
    }
    if (soft_ && !request.empty()) {
      const DeviceSpec resource = colocation_.ResourceDevice(id);
      DeviceSpec preferred = request;
      if (!resource.type) preferred.type.reset();
      if (!resource.id) preferred.id.reset();
      c.devices = Matching(id, preferred);
      if (!c.devices.empty()) {
        c.stage = CandidateStage::kPreferredSoft;
        c.matched = preferred;
        return c;
      }
      c.matched = request.SoftPlacementRelaxed();
      c.devices = Matching(id, c.matched);
      if (!c.devices.empty()) {
        c.stage = CandidateStage::kSoftRelaxed;
        return c;
      }
      c.matched = request;
    }
    return c;
  }

  // The candidates for the group of `id`, the node being placed, or the
  // placement error.
  Status DevicesForGroup(int id, Candidates* c) {
    *c = FindCandidates(id);
    if (!c->devices.empty()) return Status::Ok();
    // A GraphDef gets the texts TensorFlow 2.21's Session prints for it;
    // a graph file's are its profile's era's (docs/differences.md).
    if (profile_.error_style == PlacementErrorStyle::kTf2 && graph_.source == GraphSource::kTensorFlow) return SessionError(id);
    return ExplicitError(colocation_.MembersOf(id));
  }

  void Decide(int id, Candidates candidates, PlacementRule rule, int rule_node, std::string note) {
    if (!explaining()) return;
    decisions_[colocation_.RootOf(id)] = {std::move(candidates), rule, id, rule_node, std::move(note)};
  }

  Status PlaceNode(int id, Placement* p) {
    if (p->device_of[id] >= 0) return Status::Ok();  // placed with its group
    Candidates found;
    TFRUN_RETURN_IF_ERROR(DevicesForGroup(id, &found));
    const std::vector<int>& candidates = found.devices;
    const bool relaxed = found.stage != CandidateStage::kRequest;
    // Heuristic B: a metadata op goes with its input, if it can; the first
    // member placed decides for its whole group (LimitToAssignedDevice).
    int chosen = candidates[0];
    PlacementRule rule = PlacementRule::kFirstCandidate;
    std::string note;
    const Node& node = graph_.nodes[id];
    if ((IsMetadata(node) || (profile_.identity_follows_input && MatchIdentityOperation(node))) &&
        !node.inputs.empty()) {
      const int input_device = p->device_of[node.inputs[0]];
      if (input_device >= 0 && std::find(candidates.begin(), candidates.end(), input_device) != candidates.end()) {
        chosen = input_device;
        rule = PlacementRule::kHeuristicB;
      } else if (explaining()) {
        note = input_device < 0 ? "Heuristic B did not apply: its input was not placed yet"
                                : fmt::format("Heuristic B did not apply: its input is on {}, not a candidate",
                                              devices_[input_device].name);
      }
    }
    Decide(id, std::move(found), rule, rule == PlacementRule::kHeuristicB ? node.inputs[0] : -1, std::move(note));
    AssignGroup(id, chosen, relaxed, p);
    return Status::Ok();
  }

  // The whole group of `id` goes to `chosen` (AssignAndLog, then
  // LimitToAssignedDevice: its other members have no other candidate).
  void AssignGroup(int id, int chosen, bool relaxed, Placement* p) {
    const std::vector<int> members = colocation_.MembersOf(id);
    if (relaxed) {
      // The member that cannot run on the requested device moves the group.
      std::vector<bool> fits_alone;
      const Node* blocker = nullptr;
      for (int m : members) {
        fits_alone.push_back(!OwnCandidates(m).empty());
        if (blocker == nullptr && !fits_alone.back()) blocker = &graph_.nodes[m];
      }
      for (size_t i = 0; i < members.size(); ++i) {
        NoteSoftMove(members[i], devices_[chosen], p, fits_alone[i] ? blocker : nullptr);
      }
    }
    for (int m : members) p->device_of[m] = chosen;
  }

  // Heuristic A: a generator goes where all its consumers went, if it can.
  // One whose group a first-pass member placed stays there; the first
  // generator of a group of generators (Consts colocated with each other)
  // places the group.
  Status PlaceGenerator(int id, Placement* p) {
    if (p->device_of[id] >= 0) return Status::Ok();
    Candidates found;
    TFRUN_RETURN_IF_ERROR(DevicesForGroup(id, &found));
    const std::vector<int>& candidates = found.devices;
    const bool moved = found.stage != CandidateStage::kRequest;
    int chosen = candidates[0];
    int consumer_device = -2;
    bool same = true;
    const std::vector<int>& consumers = graph_.nodes[id].consumers;
    for (int consumer : consumers) {
      if (consumer_device == -2) consumer_device = p->device_of[consumer];
      same = same && p->device_of[consumer] == consumer_device;
    }
    const bool applies = consumer_device >= 0 && same &&
                         std::find(candidates.begin(), candidates.end(), consumer_device) != candidates.end();
    if (applies) chosen = consumer_device;
    if (explaining()) {
      std::string note;
      if (consumers.empty()) {
        note = "Heuristic A did not apply: it has no consumers";
      } else if (!same) {
        note = "Heuristic A did not apply: its consumers are on different devices";
      } else if (consumer_device < 0) {
        note = "Heuristic A did not apply: its consumers were not placed yet";
      } else if (!applies) {
        note = fmt::format("Heuristic A did not apply: its consumers are on {}, not a candidate",
                           devices_[consumer_device].name);
      }
      Decide(id, std::move(found), applies ? PlacementRule::kHeuristicA : PlacementRule::kFirstCandidate,
             applies ? consumers[0] : -1, std::move(note));
    }
    AssignGroup(id, chosen, moved, p);
    return Status::Ok();
  }

  void NoteSoftMove(int id, const Device& to, Placement* p, const Node* colocated_with = nullptr) const {
    const Node& node = graph_.nodes[id];
    p->soft_moves.push_back(
        SoftMoveNote(node.name, node.op, node.dtype, node.requested_device, to, devices_, colocated_with));
  }

  // placer.cc MatchIdentityOperation (TensorFlow 2.4 on): an Identity
  // with no device of its own, one in-edge and one out-edge (the sink's
  // when nothing reads it), whose producer and consumer request the same
  // device string, goes with its input like a metadata op.
  bool MatchIdentityOperation(const Node& node) const {
    if (node.cls != NodeClass::kIdentity || !NodeDefDevice(node).empty()) return false;
    if (node.inputs.size() != 1 || !node.control_inputs.empty() || node.consumers.size() > 1) return false;
    const std::string consumer = node.consumers.empty() ? "" : NodeDefDevice(graph_.nodes[node.consumers[0]]);
    return NodeDefDevice(graph_.nodes[node.inputs[0]]) == consumer;
  }

  // The requested device as the NodeDef holds it (node->requested_device()).
  std::string NodeDefDevice(const Node& node) const {
    return graph_.source == GraphSource::kTensorFlow ? node.requested_device_text : node.requested_device.ToString();
  }

  // ColocationGraph::DebugInfo: the group's root, each op type's supported
  // device types (in an unordered_map's order, as TensorFlow keeps them:
  // libstdc++'s, which TensorFlow's Linux builds use), and the members.
  std::string DebugInfo(int id) {
    const DeviceSpec resource = colocation_.ResourceDevice(id);
    std::string text = "\nColocation Debug Info:\nColocation group had the following types and supported devices: \n";
    text += fmt::format(
        "Root Member(assigned_device_name_index_=-1 requested_device_name_='{}' assigned_device_name_='' "
        "resource_device_name_='{}' supported_device_types_=[{}] possible_devices_=[]\n",
        colocation_.RequestOf(id).ToString(), resource.ToString(), fmt::join(colocation_.SupportedTypes(id), ", "));
    std::unordered_map<std::string, std::string> type_to_devices;
    const std::vector<int> members = colocation_.MembersOf(id);
    for (int m : members) {
      const Node& member = graph_.nodes[m];
      std::string types;
      for (const std::string& t : colocation_.device_types()) {
        if (TfHasKernel(graph_, member, t)) types += t + " ";
      }
      type_to_devices[member.op] = std::move(types);
    }
    for (const auto& [op, types] : type_to_devices) text += fmt::format("{}: {}\n", op, types);
    text += "\nColocation members, user-requested devices, and framework assigned devices, if any:";
    for (int m : members) {
      const Node& member = graph_.nodes[m];
      text += fmt::format("\n  {} ({}) {}", member.name, member.op, NodeDefDevice(member));
    }
    return text + "\n";
  }

  // GetDevicesForNode's errors, as placer.cc reports them for `id`, the
  // node being placed: its own request against the group's merged one.
  Status SessionError(int id) {
    const Node& node = graph_.nodes[id];
    const DeviceSpec& request = colocation_.RequestOf(id);
    const std::string requested = NodeDefDevice(node);
    std::vector<std::string> all;  // the DeviceSet's order
    for (const Device& d : devices_.devices()) all.push_back(d.name);
    std::string message;
    if (request.empty()) {
      std::vector<std::string> inputs;
      if (const NodeProperties* def = graph_.PropertiesOf(node)) {
        for (const std::string& t : def->input_types) inputs.push_back(DataTypeString(t));
      }
      message = fmt::format("Node had no OpKernel registered to support this operation: Operation was {} and inputs "
                            "were [{}].\n{}",
                            node.op, fmt::join(inputs, ", "), DebugInfo(id));
    } else if (node.requested_device == request) {
      const bool any_match = std::any_of(devices_.devices().begin(), devices_.devices().end(),
                                         [&](const Device& d) { return request.Matches(d.spec); });
      if (!any_match) {
        std::vector<std::string> sorted = all;
        std::sort(sorted.begin(), sorted.end());
        message = fmt::format("{{{{node {}}}}} was explicitly assigned to {} but available devices are [ {} ]. Make "
                              "sure the device specification refers to a valid device.",
                              node.name, requested, fmt::join(sorted, ", "));
      } else if (request.type) {
        const TfOpDef* op = FindTfOp(node.op);
        const NodeProperties* def = graph_.PropertiesOf(node);
        message = fmt::format(
            "Could not satisfy explicit device specification '{}' because no supported kernel for {} devices is "
            "available.{}\nOp: {}\nNode attrs: {}\nRegistered kernels:\n{}",
            requested, *request.type, DebugInfo(id), node.op, def != nullptr ? SummarizeAttrs(def->attrs) : "",
            op != nullptr ? KernelsRegisteredForOp(*op, devices_.HasXlaDevices()) : "");
      } else {
        message = fmt::format("Could not satisfy explicit device specification '{}{}", requested, DebugInfo(id));
      }
    } else {
      message = fmt::format(
          "Could not satisfy explicit device specification '{}' because the node {{{{colocation_node {}}}}} was "
          "colocated with a group of nodes that required incompatible device '{}'. All available devices [{}]. {}",
          requested, node.name, request.ToString(), fmt::join(all, ", "), DebugInfo(id));
    }
    // The "\t [[{{node x}}]]" TensorFlow appends is the file location here.
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return graph_.ErrorAt(ErrorKind::kPlacement, node,
                          fmt::format("InvalidArgumentError: Cannot assign a device for operation {}: {}", node.name,
                                      message));
  }

  Status ExplicitError(const std::vector<int>& members) const {
    // The member whose own request cannot be met is the one TensorFlow names.
    int id = members[0];
    for (int m : members) {
      if (OwnCandidates(m).empty()) {
        id = m;
        break;
      }
    }
    const Node& node = graph_.nodes[id];
    const std::string spec = node.requested_device.ToString();
    bool any_match = false;
    for (const Device& d : devices_.devices()) any_match = any_match || node.requested_device.Matches(d.spec);

    std::vector<std::string> names;  // sorted, as TensorFlow lists them
    for (const Device& d : devices_.devices()) names.push_back(PrintedName(d, profile_));
    std::sort(names.begin(), names.end());

    std::string message;
    if (any_match) {
      // The device exists but has no kernel for this op and dtype.
      std::string type = node.requested_device.type.value_or(std::string(kCpu));
      message = profile_.error_style == PlacementErrorStyle::kTf0
                    ? fmt::format("Cannot assign a device to node '{}': Could not satisfy explicit device "
                                  "specification '{}' because no supported kernel for {} devices is available.",
                                  node.name, node.requested_device_text, type)
                    : fmt::format("Cannot assign a device for operation {}: Could not satisfy explicit device "
                                  "specification '{}' because no supported kernel for {} devices is available.",
                                  node.name, spec, type);
    } else {
      switch (profile_.error_style) {
        case PlacementErrorStyle::kTf2:
          message = fmt::format(
              "Cannot assign a device for operation {0}: node {0} (defined at {1}:{2}) was explicitly "
              "assigned to {3} but available devices are [ {4} ]. Make sure the device specification "
              "refers to a valid device.",
              node.name, graph_.path, node.location.line, spec, fmt::join(names, ", "));
          break;
        case PlacementErrorStyle::kTf1:
          message = fmt::format(
              "Cannot assign a device for operation '{}': Could not satisfy explicit device specification "
              "'{}' because no devices matching that specification are registered in this process; "
              "available devices: {}",
              node.name, spec, fmt::join(names, ", "));
          break;
        default:
          message = fmt::format(
              "Cannot assign a device to node '{}': Could not satisfy explicit device specification '{}' "
              "because no devices matching that specification are registered in this process; available "
              "devices: {}",
              node.name, node.requested_device_text, fmt::join(names, ", "));
      }
    }
    // The message may lead with a colocated node's name: the site gives the location only.
    return graph_.ErrorAt(ErrorKind::kPlacement, node, "InvalidArgumentError: " + message, false);
  }

  // --explain: the group of `id` as the placement left it.
  NodeExplanation Explain(int id, const Placement& p, const Status& placed) {
    NodeExplanation e;
    e.node = id;
    const std::vector<std::string>& types = colocation_.device_types();
    if (!initialized_.ok()) {
      // The colocation graph failed: its error is the whole answer, with
      // the node's own kernels.
      ExplainedMember member{id, NodeDefDevice(graph_.nodes[id]), {}};
      for (const std::string& t : types) {
        if (TfHasKernel(graph_, graph_.nodes[id], t)) member.types.push_back(t);
      }
      e.members.push_back(std::move(member));
      e.joins = colocation_.joins();
      e.error = placed.message();
      return e;
    }
    const int root = colocation_.RootOf(id);
    const std::vector<int> members = colocation_.MembersOf(id);
    for (int m : members) {
      ExplainedMember member{m, NodeDefDevice(graph_.nodes[m]), {}};
      for (const std::string& t : types) {
        if (TfHasKernel(graph_, graph_.nodes[m], t)) member.types.push_back(t);
      }
      e.members.push_back(std::move(member));
    }
    for (const ColocationJoin& j : colocation_.joins()) {
      if (colocation_.RootOf(j.node) == root || colocation_.RootOf(j.with) == root) e.joins.push_back(j);
    }
    e.merged_request = colocation_.RequestOf(id);
    e.resource_device = colocation_.ResourceDevice(id);
    e.group_types = colocation_.SupportedTypes(id);
    const auto decision = decisions_.find(root);
    Candidates candidates = decision != decisions_.end() ? decision->second.candidates : FindCandidates(id);
    if (decision != decisions_.end()) {
      e.rule = decision->second.rule;
      e.decided_by = decision->second.decided_by;
      e.rule_node = decision->second.rule_node;
      e.rule_note = decision->second.rule_note;
      e.device = p.device_of[id];
    } else if (failed_root_ == root) {
      e.error = placed.message();
    }
    e.stage = candidates.stage;
    e.matched = candidates.matched;
    std::vector<int> order = sorted_;
    if (std::find(candidates.devices.begin(), candidates.devices.end(), call_device_) != candidates.devices.end()) {
      CallDeviceFirst(&order);
    }
    e.call_device_first = order != sorted_;
    for (int d : order) {
      e.devices.push_back(d);
      e.excluded.push_back(WhyNotCandidate(d, members, candidates));
    }
    return e;
  }

  // "" for a candidate; else why the device is not one.
  std::string WhyNotCandidate(int d, const std::vector<int>& members, const Candidates& c) const {
    if (std::find(c.devices.begin(), c.devices.end(), d) != c.devices.end()) return "";
    const Device& device = devices_[d];
    if (!c.matched.Matches(device.spec)) return fmt::format("does not match '{}'", c.matched.ToString());
    // The members without a kernel there, by op, in member order.
    std::vector<std::pair<std::string_view, std::vector<std::string_view>>> lacking;
    for (int m : members) {
      const Node& member = graph_.nodes[m];
      if (TfHasKernel(graph_, member, device.type)) continue;
      auto op = std::find_if(lacking.begin(), lacking.end(), [&](const auto& l) { return l.first == member.op; });
      if (op == lacking.end()) op = lacking.insert(lacking.end(), {member.op, {}});
      op->second.push_back(member.name);
    }
    if (lacking.empty()) return "an XLA device: the group goes to one only when it asks for one";
    if (members.size() == 1) return fmt::format("no {} kernel for {}", device.type, lacking[0].first);
    std::vector<std::string> parts;
    for (const auto& [op, names] : lacking) {
      parts.push_back(names.size() == 1 ? fmt::format("{} ('{}')", op, names[0])
                                        : fmt::format("{} ('{}' and {} more)", op, names[0], names.size() - 1));
    }
    return fmt::format("no {} kernel for {}", device.type, fmt::join(parts, ", "));
  }

  const Graph& graph_;
  const DeviceSet& devices_;
  bool soft_;
  const CompatProfile& profile_;
  std::vector<int> sorted_;
  ColocationGraph colocation_;
  const std::vector<int>& explain_;
  // A TF2 call's _Args: each one's device (ResolvePinned), or -1.
  std::vector<int> assigned_;
  // --explain only: each placed group's decision, by root; the group that
  // failed; whether the colocation graph was built.
  std::unordered_map<int, Decision> decisions_;
  int failed_root_ = -1;
  Status initialized_;
  // A TF2 call's device, as given and as found (-1: a Session's graph).
  const std::string call_device_text_;
  int call_device_ = -1;
};

}  // namespace

Status PlaceGraph(const Graph& graph, const DeviceSet& devices, bool allow_soft_placement,
                  const CompatProfile& profile, Placement* placement, const std::vector<int>& explain,
                  const std::string& call_device) {
  return Placer(graph, devices, allow_soft_placement, profile, explain, call_device).Run(placement);
}

}  // namespace tfrun
