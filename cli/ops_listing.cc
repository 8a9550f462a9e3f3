#include "cli/ops_listing.h"
#include "core/base/device_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cli/report.h"
#include "core/base/did_you_mean.h"
#include "core/runtime/kernel_registry.h"
#include "core/tables/tf_tables.h"
#include "kernels/backends.h"

namespace tfrun {
namespace {

// The device types `tfrun ops` lists: those tfrun can place on.
constexpr std::string_view kListedTypes[] = {kCpu, kGpu, "DEFAULT", kXlaCpu, kXlaGpu};

bool Listed(const TfKernelDef& k) {
  return std::find(std::begin(kListedTypes), std::end(kListedTypes), k.device_type) != std::end(kListedTypes);
}

// What tfrun runs, by op then device type: the backends' bindings.
std::map<std::string, std::map<std::string, DTypeSet>> Runs() {
  KernelRegistry registry;
  BindAllBackendKernels(&registry);
  std::map<std::string, std::map<std::string, DTypeSet>> runs;
  for (const auto& [key, binding] : registry.bindings()) runs[key.first][key.second] = binding.dtypes;
  return runs;
}

std::vector<std::string> DTypeNames(DTypeSet set) {
  std::vector<std::string> names;
  for (DType d : kAllDTypes) {
    if (set.Contains(d)) names.emplace_back(Name(d));
  }
  if (set.Contains(DType::kVariant)) names.emplace_back(Name(DType::kVariant));  // tensor lists
  return names;
}

// A constraint's values as Python names them: float32, "NHWC", 3, true.
std::vector<std::string> ValueNames(const TfKernelConstraint& c) {
  std::vector<std::string> names;
  for (const std::string& v : c.allowed()) names.push_back(c.kind == "type" ? PythonDTypeName(v) : v);
  return names;
}

std::string JsonValues(const TfKernelConstraint& c) {
  std::vector<std::string> items;
  for (const std::string& v : ValueNames(c)) items.push_back(c.kind == "int" || c.kind == "bool" ? v : Quote(v));
  return fmt::format("[{}]", fmt::join(items, ","));
}

std::string QuotedList(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const std::string& n : names) q.push_back(Quote(n));
  return fmt::format("[{}]", fmt::join(q, ","));
}

// The ops asked for, each known to TensorFlow, or every op.
StatusOr<std::vector<const TfOpDef*>> Select(const std::vector<std::string>& names) {
  std::vector<const TfOpDef*> ops;
  if (names.empty()) {
    for (std::string_view name : AllTfOpNames()) ops.push_back(FindTfOp(name));
    return ops;
  }
  for (const std::string& name : names) {
    const TfOpDef* op = FindTfOp(name);
    if (op == nullptr) {
      std::vector<std::string> all;
      for (std::string_view n : AllTfOpNames()) all.emplace_back(n);
      const std::string hint = ClosestMatch(name, all);
      return BadInput(fmt::format("tfrun ops: TensorFlow {} has no op '{}'{}", TfTablesVersion(), ClipForMessage(name),
                                  hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
    }
    ops.push_back(op);
  }
  return ops;
}

// Whether `b` differs from `a` only in its last constraint's values: a
// run of such kernels is one line ("T: float32, float64", or Cast's
// "SrcT: float32; DstT: int32, bool").
bool SameButLastValues(const TfKernelDef& a, const TfKernelDef& b) {
  if (a.device_type != b.device_type || a.label != b.label || a.priority != b.priority ||
      a.host_memory_args != b.host_memory_args || a.needs_xla_devices != b.needs_xla_devices ||
      a.constraints.empty() || a.constraints.size() != b.constraints.size()) {
    return false;
  }
  for (size_t i = 0; i < a.constraints.size(); ++i) {
    if (a.constraints[i].name != b.constraints[i].name) return false;
    if (i + 1 < a.constraints.size() && a.constraints[i].encoded != b.constraints[i].encoded) return false;
  }
  return true;
}

// One line per run of kernels (above), TensorFlow's listing order.
std::vector<std::string> KernelLines(const TfOpDef& op) {
  std::vector<const TfKernelDef*> listed;
  for (const TfKernelDef& k : op.kernels) {
    if (Listed(k)) listed.push_back(&k);
  }
  std::vector<std::string> lines;
  for (size_t i = 0; i < listed.size();) {
    const TfKernelDef& k = *listed[i];
    std::vector<std::string> last_values;
    size_t j = i;
    for (; j < listed.size() && (j == i || SameButLastValues(k, *listed[j])); ++j) {
      if (!k.constraints.empty()) {
        for (const std::string& v : ValueNames(listed[j]->constraints.back())) last_values.push_back(v);
      }
    }
    std::vector<std::string> parts;
    for (size_t c = 0; c < k.constraints.size(); ++c) {
      const bool last = c + 1 == k.constraints.size();
      parts.push_back(fmt::format("{}: {}", k.constraints[c].name,
                                  fmt::join(last ? last_values : ValueNames(k.constraints[c]), ", ")));
    }
    std::string line =
        fmt::format("  {:<8} {}", k.device_type, parts.empty() ? "any attrs" : fmt::format("{}", fmt::join(parts, "; ")));
    if (!k.label.empty()) line += fmt::format(" (label {})", k.label);
    if (!k.host_memory_args.empty()) line += fmt::format(" (host memory: {})", fmt::join(k.host_memory_args, ", "));
    if (k.priority != 0) line += fmt::format(" (priority {})", k.priority);
    if (k.needs_xla_devices) line += " (with XLA devices)";
    lines.push_back(line);
    i = j;
  }
  return lines;
}

}  // namespace

StatusOr<std::string> OpsListing(const std::vector<std::string>& names) {
  TFRUN_ASSIGN_OR_RETURN(const std::vector<const TfOpDef*> ops, Select(names));
  const auto runs = Runs();
  std::string out;
  if (names.empty()) {
    out += fmt::format("TensorFlow {}'s ops and kernels (CPU, GPU, DEFAULT, XLA_CPU, XLA_GPU); \"tfrun runs\" marks "
                       "what tfrun executes.\n",
                       TfTablesVersion());
  }
  for (const TfOpDef* op : ops) {
    std::string runs_text;
    if (auto it = runs.find(std::string(op->name)); it != runs.end()) {
      std::vector<std::string> parts;
      for (const auto& [type, dtypes] : it->second) parts.push_back(fmt::format("{} {}", type, fmt::join(DTypeNames(dtypes), " ")));
      runs_text = fmt::format("  [tfrun runs: {}]", fmt::join(parts, "; "));
    }
    out += fmt::format("{}{}\n", op->name, runs_text);
    const std::vector<std::string> lines = KernelLines(*op);
    if (lines.empty()) out += "  (no kernels)\n";
    for (const std::string& line : lines) out += line + "\n";
  }
  return out;
}

StatusOr<std::string> OpsJson(const std::vector<std::string>& names) {
  TFRUN_ASSIGN_OR_RETURN(const std::vector<const TfOpDef*> ops, Select(names));
  const auto runs = Runs();
  std::string out = fmt::format("{{\"tensorflow\":{},\"ops\":[", Quote(TfTablesVersion()));
  bool first_op = true;
  for (const TfOpDef* op : ops) {
    std::vector<std::string> kernels;
    for (const TfKernelDef& k : op->kernels) {
      if (!Listed(k)) continue;
      std::vector<std::string> constraints;
      for (const TfKernelConstraint& c : k.constraints) constraints.push_back(fmt::format("{}:{}", Quote(c.name), JsonValues(c)));
      std::vector<std::string> host;
      for (std::string_view h : k.host_memory_args) host.emplace_back(h);
      kernels.push_back(fmt::format(
          "{{\"device_type\":{},\"constraints\":{{{}}},\"host_memory\":{},\"priority\":{},\"label\":{}{}}}",
          Quote(k.device_type), fmt::join(constraints, ","), QuotedList(host), k.priority, Quote(k.label),
          k.needs_xla_devices ? ",\"needs_xla_devices\":true" : ""));
    }
    std::vector<std::string> run_parts;
    if (auto it = runs.find(std::string(op->name)); it != runs.end()) {
      for (const auto& [type, dtypes] : it->second) run_parts.push_back(fmt::format("{}:{}", Quote(type), QuotedList(DTypeNames(dtypes))));
    }
    out += fmt::format("{}\n{{\"op\":{},\"kernels\":[{}],\"runs\":{{{}}}}}", first_op ? "" : ",", Quote(op->name),
                       fmt::join(kernels, ","), fmt::join(run_parts, ","));
    first_op = false;
  }
  out += "\n]}\n";
  return out;
}

}  // namespace tfrun
