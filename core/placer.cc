#include "core/placer.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/colocation_graph.h"
#include "core/kernel_lookup.h"
#include "core/op_registry.h"

namespace tfrun {

std::vector<int> ImportOrder(const Graph& graph, enum ImportOrder order) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<int> pending(n, 0);
  for (const Node& node : graph.nodes) {
    pending[node.id] = static_cast<int>(node.inputs.size() + node.control_inputs.size());
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
    // It could run there itself; the node it must stay with cannot.
    return fmt::format("soft placement put '{}' ({}) on {}: it is colocated with '{}' ({}), which has no {} kernel "
                       "for {} on {}",
                       node, op, to.name, colocated_with->name, colocated_with->op, colocated_with->op,
                       Name(colocated_with->dtype), requested.ToString());
  }
  return fmt::format("soft placement put '{}' ({}) on {}: {}", node, op, to.name,
                     any_match ? fmt::format("no {} kernel for {} on {}", op, Name(dtype), requested.ToString())
                               : fmt::format("no device matches {}", requested.ToString()));
}

namespace {

class Placer {
 public:
  Placer(const Graph& graph, const DeviceSet& devices, bool soft, const CompatProfile& profile)
      : graph_(graph), devices_(devices), soft_(soft), profile_(profile), colocation_(graph, devices, soft) {
    sorted_ = devices.InPlacementOrder();
  }

  Status Run(Placement* p) {
    *p = Placement();
    p->device_of.assign(graph_.nodes.size(), -1);
    p->import_order = ImportOrder(graph_, profile_.import_order);
    TFRUN_RETURN_IF_ERROR(colocation_.Initialize());
    std::vector<int> first, second;
    for (int id : p->import_order) {
      (profile_.generators_last && IsGenerator(graph_.nodes[id]) ? second : first).push_back(id);
    }
    for (int id : first) {
      TFRUN_RETURN_IF_ERROR(PlaceNode(id, p));
      p->log_order.push_back(id);
    }
    for (int id : second) {
      TFRUN_RETURN_IF_ERROR(PlaceGenerator(id, p));
      p->log_order.push_back(id);
    }
    return Status::Ok();
  }

 private:

  // Where `id` alone could go under its own request.
  std::vector<int> OwnCandidates(int id) const {
    const Node& node = graph_.nodes[id];
    std::vector<int> out;
    for (int d : sorted_) {
      if (node.requested_device.Matches(devices_[d].spec) && TfHasKernel(graph_, node, devices_[d].type)) {
        out.push_back(d);
      }
    }
    return out;
  }

  // Where the group of `id` can go: its merged request, its types.
  std::vector<int> GroupCandidates(int id, bool relaxed) {
    const DeviceSpec& request = colocation_.RequestOf(id);
    const DeviceSpec spec = relaxed ? request.SoftPlacementRelaxed() : request;
    std::vector<int> out;
    for (int d : sorted_) {
      if (spec.Matches(devices_[d].spec) && colocation_.Supports(id, devices_[d].type)) out.push_back(d);
    }
    return out;
  }

  Status PlaceNode(int id, Placement* p) {
    if (p->device_of[id] >= 0) return Status::Ok();  // placed with its group
    std::vector<int> candidates = GroupCandidates(id, false);
    const std::vector<int> members = colocation_.MembersOf(id);
    if (candidates.empty()) {
      if (!soft_) return ExplicitError(members);
      candidates = GroupCandidates(id, true);
      if (candidates.empty()) return ExplicitError(members);
      // The member that cannot run on the requested device moves the group.
      std::vector<bool> fits_alone;
      const Node* blocker = nullptr;
      for (int m : members) {
        fits_alone.push_back(!OwnCandidates(m).empty());
        if (blocker == nullptr && !fits_alone.back()) blocker = &graph_.nodes[m];
      }
      for (size_t i = 0; i < members.size(); ++i) {
        NoteSoftMove(members[i], devices_[candidates[0]], p, fits_alone[i] ? blocker : nullptr);
      }
    }
    for (int m : members) p->device_of[m] = candidates[0];
    return Status::Ok();
  }

  // Heuristic A: a generator goes where all its consumers went, if it can;
  // one placed with its group (a colocated Const) stays there.
  Status PlaceGenerator(int id, Placement* p) {
    if (p->device_of[id] >= 0) return Status::Ok();
    if (colocation_.GroupSize(id) > 1) return PlaceNode(id, p);
    std::vector<int> candidates = GroupCandidates(id, false);
    bool moved = false;
    if (candidates.empty()) {
      if (!soft_) return ExplicitError({id});
      candidates = GroupCandidates(id, true);
      if (candidates.empty()) return ExplicitError({id});
      moved = true;
    }
    int chosen = candidates[0];
    int consumer_device = -2;
    bool same = true;
    for (int consumer : graph_.nodes[id].consumers) {
      if (consumer_device == -2) consumer_device = p->device_of[consumer];
      same = same && p->device_of[consumer] == consumer_device;
    }
    if (consumer_device >= 0 && same &&
        std::find(candidates.begin(), candidates.end(), consumer_device) != candidates.end()) {
      chosen = consumer_device;
    }
    if (moved) NoteSoftMove(id, devices_[chosen], p);
    p->device_of[id] = chosen;
    return Status::Ok();
  }

  void NoteSoftMove(int id, const Device& to, Placement* p, const Node* colocated_with = nullptr) const {
    const Node& node = graph_.nodes[id];
    p->soft_moves.push_back(
        SoftMoveNote(node.name, node.op, node.dtype, node.requested_device, to, devices_, colocated_with));
  }

  std::string DeviceName(const Device& d) const {
    return profile_.legacy_device_names ? d.spec.ToLegacyString() : d.name;
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
    for (const Device& d : devices_.devices()) names.push_back(DeviceName(d));
    std::sort(names.begin(), names.end());

    std::string message;
    if (any_match) {
      // The device exists but has no kernel for this op and dtype.
      std::string type = node.requested_device.type.value_or("CPU");
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
    return PlacementError(fmt::format("{}: InvalidArgumentError: {}", graph_.Where(node.location), message));
  }

  const Graph& graph_;
  const DeviceSet& devices_;
  bool soft_;
  const CompatProfile& profile_;
  std::vector<int> sorted_;
  ColocationGraph colocation_;
};

}  // namespace

Status PlaceGraph(const Graph& graph, const DeviceSet& devices, bool allow_soft_placement,
                  const CompatProfile& profile, Placement* placement) {
  return Placer(graph, devices, allow_soft_placement, profile).Run(placement);
}

}  // namespace tfrun
