#include "cli/coverage.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "cli/run_graph.h"
#include "core/runtime/executor.h"
#include "kernels/backends.h"

namespace tfrun {
namespace {

// What tfrun lacks for a graph: by (op, dtype, device type), its nodes.
struct Missing {
  int64_t count = 0;
  std::vector<std::string> examples;  // the first few node names
};
using MissingKey = std::tuple<std::string, std::string, std::string>;

constexpr size_t kExamples = 3;

std::string GraphCoverage(const std::string& path, const Graph& graph, const DeviceSet& devices,
                          const Placement& placement, const KernelRegistry& kernels) {
  std::map<MissingKey, Missing> missing;
  std::set<std::string> ops;
  int64_t placed = 0;
  for (const Node& node : graph.nodes) {
    const int d = node.id < static_cast<int>(placement.device_of.size()) ? placement.device_of[node.id] : -1;
    if (d < 0) continue;
    ++placed;
    ops.insert(node.op);
    const Device& device = devices[d];
    if (ChooseKernel(graph, node, device, kernels, /*as_real=*/true).fn != nullptr) continue;
    const std::optional<DType> dtype = node.has_output() ? graph.OutputDType({node.id, 0}) : std::nullopt;
    const std::string type = !node.has_output() ? "no output"
                             : dtype           ? std::string(Name(*dtype))
                                               : graph.OutputTypeString({node.id, 0});
    Missing& m = missing[{node.op, type, device.type}];
    ++m.count;
    if (m.examples.size() < kExamples) m.examples.push_back(node.name);
  }
  std::set<std::string> missing_ops;
  for (const auto& [key, unused] : missing) missing_ops.insert(std::get<0>(key));
  std::string out = fmt::format("{}: {} nodes of {} ops; ", path, placed, ops.size());
  if (missing.empty()) return out + "tfrun runs every one as placed\n";
  out += fmt::format("tfrun cannot run {} of the ops as placed:\n", missing_ops.size());
  for (const auto& [key, m] : missing) {
    const auto& [op, type, device_type] = key;
    out += fmt::format("  {} ({}) on {}: {} node{} ('{}'{})\n", op, type, device_type, m.count, m.count == 1 ? "" : "s",
                       fmt::join(m.examples, "', '"), m.count > static_cast<int64_t>(m.examples.size()) ? ", ..." : "");
  }
  return out;
}

}  // namespace

Coverage CoverageListing(const std::vector<std::string>& graphs, const RunOptions& options) {
  KernelRegistry kernels;
  BindAllBackendKernels(&kernels);
  Coverage coverage;
  for (const std::string& path : graphs) {
    RunOptions one = options;
    one.graph_path = path;
    const Status placed = PlaceGraphQuietly(one, [&](const Graph& graph, const DeviceSet& devices,
                                                     const Placement& placement) {
      coverage.text += GraphCoverage(path, graph, devices, placement, kernels);
      return Status::Ok();
    });
    if (placed.ok()) continue;
    // The message names the file already.
    coverage.text += fmt::format("{}: not placed: {}\n", path, placed.message());
    if (coverage.first_error.ok()) coverage.first_error = placed;
  }
  return coverage;
}

}  // namespace tfrun
