#include "core/placement/placement_log.h"
#include "core/base/device_types.h"

#include <fmt/format.h>

namespace tfrun {
std::string PrintedName(const Device& d, const CompatProfile& profile) {
  return profile.legacy_device_names ? d.spec.ToLegacyString() : d.name;
}

std::string DeviceMappingBlock(const DeviceSet& devices, const CompatProfile& profile) {
  if (profile.line_style == PlacementLineStyle::kExecutingOp) return "";
  std::string lines;
  // TensorFlow lists the XLA devices first ("XLA_CPU device"), then the GPUs.
  for (const Device& d : devices.devices()) {
    if (d.type == kXlaCpu || d.type == kXlaGpu) {
      lines += fmt::format("{} -> device: {} device\n", PrintedName(d, profile), d.type);
    }
  }
  for (const Device& d : devices.devices()) {
    if (d.type != kGpu) continue;
    lines += fmt::format("{} -> device: {}, name: {}, pci bus id: {}", PrintedName(d, profile),
                         d.cuda_ordinal, d.gpu_name, d.pci_bus_id);
    if (profile.mapping_compute_capability) {
      lines += fmt::format(", compute capability: {}", d.compute_capability);
    }
    lines += "\n";
  }
  return lines.empty() ? "Device mapping: no known devices.\n" : "Device mapping:\n" + lines;
}

std::string PlacementLines(const Graph& graph, const DeviceSet& devices, const Placement& placement,
                           const CompatProfile& profile) {
  std::string out;
  out.reserve(placement.log_order.size() * 72);  // a line is about that long
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

std::string ExecutedOpLines(const std::vector<EagerOp>& ops, const DeviceSet& devices) {
  std::string out;
  for (const EagerOp& op : ops) out += fmt::format("Executing op {} in device {}\n", op.op, devices[op.device].name);
  return out;
}

std::string PlacementDot(const Graph& graph, const DeviceSet& devices, const Placement& placement) {
  static constexpr const char* kPalette[] = {"#cfe2f3", "#d9ead3", "#fce5cd", "#ead1dc", "#fff2cc",
                                             "#d0e0e3", "#f4cccc", "#d9d2e9"};
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  std::string dot = "digraph tfrun {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n";
  std::vector<std::string> members(devices.size());  // one pass over the nodes, not one per device
  for (const Node& node : graph.nodes) {
    const int d = placement.device_of[node.id];
    // DOT's own "\n" escape splits the label: name, then op.
    std::string label = quote(node.name);
    label.insert(label.size() - 1, "\\n(" + node.op + ")");
    members[d] += fmt::format("    {} [label={}, fillcolor=\"{}\"];\n", quote(node.name), label, kPalette[d % 8]);
  }
  for (int d = 0; d < devices.size(); ++d) {
    if (members[d].empty()) continue;
    dot += fmt::format("  subgraph cluster_{} {{\n    label={};\n    style=filled;\n    color=\"#f3f3f3\";\n{}  }}\n",
                       d, quote(devices[d].name), members[d]);
  }
  for (const Node& node : graph.nodes) {
    auto edge = [&](int from, bool control) {
      const bool crosses = placement.device_of[from] != placement.device_of[node.id];
      std::string attrs;
      if (crosses) attrs = "style=bold, penwidth=3, color=\"#cc0000\"";
      if (control) attrs += std::string(attrs.empty() ? "" : ", ") + "style=dashed";
      dot += fmt::format("  {} -> {}{};\n", quote(graph.nodes[from].name), quote(node.name),
                         attrs.empty() ? "" : " [" + attrs + "]");
    };
    for (int in : node.inputs) edge(in, false);
    for (int in : node.control_inputs) edge(in, true);
  }
  return dot + "}\n";
}

}  // namespace tfrun
