#include "core/placement_log.h"

#include <fmt/format.h>

namespace tfrun {
namespace {

std::string PrintedName(const Device& d, const CompatProfile& profile) {
  return profile.legacy_device_names ? d.spec.ToLegacyString() : d.name;
}

}  // namespace

std::string DeviceMappingBlock(const DeviceSet& devices, const CompatProfile& profile) {
  if (profile.line_style == PlacementLineStyle::kExecutingOp) return "";
  std::string lines;
  for (const Device& d : devices.devices()) {
    if (d.type != "GPU") continue;
    lines += fmt::format("{} -> device: {}, name: {}, pci bus id: {}", PrintedName(d, profile),
                         d.cuda_ordinal, d.gpu_name, d.pci_bus_id);
    if (profile.mapping_compute_capability) {
      lines += fmt::format(", compute capability: {}", d.compute_capability);
    }
    lines += "\n";
  }
  return lines.empty() ? "Device mapping: no known devices.\n" : "Device mapping:\n" + lines;
}

std::string PlacementLines(const Graph& graph, const DeviceSet& devices,
                           const Placement& placement, const CompatProfile& profile,
                           const std::vector<int>& executed) {
  std::string out;
  if (profile.line_style == PlacementLineStyle::kExecutingOp) {
    for (int id : executed) {
      const Node& node = graph.nodes[id];
      if (node.op == "Const") continue;  // eager constants are not executed ops
      out += fmt::format("Executing op {} in device {}\n", node.op,
                         devices[placement.device_of[id]].name);
    }
    return out;
  }
  for (int id : placement.log_order) {
    const Node& node = graph.nodes[id];
    const std::string device = PrintedName(devices[placement.device_of[id]], profile);
    if (profile.line_style == PlacementLineStyle::kNameDevice) {
      out += fmt::format("{}: {}\n", node.name, device);
    } else {
      out += fmt::format("{}: ({}): {}\n", node.name, node.op, device);
    }
  }
  return out;
}

}  // namespace tfrun
