// What --log-placement prints on standard output, per profile: the
// "Device mapping:" block (direct_session.cc / gpu_device.cc) and one line
// per node in the profile's order.
#pragma once

#include <string>

#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/placement/eager_program.h"
#include "core/placement/placer.h"

namespace tfrun {

// A device's name as the profile prints it (tf0: ".../task:0/gpu:0").
std::string PrintedName(const Device& d, const CompatProfile& profile);

// "Device mapping: no known devices.\n" or "Device mapping:\n<one line per
// GPU>\n". Empty for profiles that print none (eager).
std::string DeviceMappingBlock(const DeviceSet& devices, const CompatProfile& profile);

// The per-node lines of a session profile, each ending in "\n".
std::string PlacementLines(const Graph& graph, const DeviceSet& devices,
                           const Placement& placement, const CompatProfile& profile);

// Eager's log: "Executing op MatMul in device /job:...\n" per executed op.
std::string ExecutedOpLines(const std::vector<EagerOp>& ops, const DeviceSet& devices);

// The placed graph as Graphviz DOT: one cluster and colour per device,
// edges that cross devices drawn bold.
std::string PlacementDot(const Graph& graph, const DeviceSet& devices, const Placement& placement);

}  // namespace tfrun
