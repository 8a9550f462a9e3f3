#include "cli/ops_listing.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "core/kernel_registry.h"
#include "core/op_registry.h"

namespace tfrun {
namespace {

std::vector<std::string> Names(DTypeSet set) {
  std::vector<std::string> names;
  for (DType d : kAllDTypes) {
    if (set.Contains(d)) names.emplace_back(Name(d));
  }
  return names;
}

struct OpKernels {
  DTypeSet dtypes, host_memory;
  HostInput host_input;
};

// Which input a kernel reads from host memory whatever the dtype.
std::string_view HostInputName(HostInput h) {
  switch (h) {
    case HostInput::kFirst: return "first";
    case HostInput::kLast: return "last";
    case HostInput::kNone: break;
  }
  return "";
}

// The graph-file ops, each with its kernels by device type (CPU first).
std::vector<std::pair<const OpDef*, std::vector<std::pair<std::string, OpKernels>>>> Listing() {
  std::vector<std::pair<const OpDef*, std::vector<std::pair<std::string, OpKernels>>>> out;
  for (const OpDef& def : AllOps()) {
    if (!def.in_graph_files) continue;
    // A Variable runs as VariableV2, Assign and Identity: list VariableV2's.
    const std::string_view kernel_op = def.type == "Variable" ? std::string_view("VariableV2") : def.type;
    std::vector<std::pair<std::string, OpKernels>> kernels;
    for (const KernelSupport& k : KernelTable()) {
      if (k.op != kernel_op || k.eager_only) continue;
      kernels.push_back({std::string(k.device_type), {k.dtypes, k.host_memory_dtypes, k.host_input}});
    }
    out.push_back({&def, kernels});
  }
  return out;
}

std::string Quoted(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const std::string& n : names) q.push_back("\"" + n + "\"");
  return fmt::format("[{}]", fmt::join(q, ","));
}

}  // namespace

std::string OpsListing() {
  std::string out;
  for (const auto& [def, kernels] : Listing()) {
    out += fmt::format("{}: {}\n", def->type, fmt::join(Names(def->allowed_dtypes), ", "));
    for (const auto& [device, k] : kernels) {
      const std::vector<std::string> host = Names(k.host_memory);
      out += fmt::format("  {}: {}{}{}\n", device, fmt::join(Names(k.dtypes), ", "),
                         host.empty() ? "" : fmt::format(" (in host memory: {})", fmt::join(host, ", ")),
                         k.host_input == HostInput::kNone
                             ? ""
                             : fmt::format(" (its {} input, the axis, in host memory)", HostInputName(k.host_input)));
    }
  }
  return out;
}

std::string OpsJson() {
  std::vector<std::string> ops;
  for (const auto& [def, kernels] : Listing()) {
    std::vector<std::string> ks;
    for (const auto& [device, k] : kernels) {
      ks.push_back(fmt::format("\"{}\":{{\"dtypes\":{},\"host_memory\":{}{}}}", device, Quoted(Names(k.dtypes)),
                               Quoted(Names(k.host_memory)),
                               k.host_input == HostInput::kNone
                                   ? ""
                                   : fmt::format(",\"host_memory_input\":\"{}\"", HostInputName(k.host_input))));
    }
    ops.push_back(fmt::format("{{\"op\":\"{}\",\"dtypes\":{},\"kernels\":{{{}}}}}", def->type,
                              Quoted(Names(def->allowed_dtypes)), fmt::join(ks, ",")));
  }
  return fmt::format("{{\"ops\":[{}]}}\n", fmt::join(ops, ","));
}

}  // namespace tfrun
