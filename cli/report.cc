#include "cli/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tfrun {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// JSON has no NaN or infinity: those become strings, as Python's json
// module would need them spelled.
std::string Number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return fmt::format("{}", v);
}

constexpr int64_t kMaxJsonValues = 100000;

std::string Values(const Tensor& t) {
  std::string out = "[";
  const int64_t n = std::min<int64_t>(t.num_elements(), kMaxJsonValues);
  for (int64_t i = 0; i < n; ++i) {
    if (i) out += ",";
    if (t.dtype() == DType::kBool) {
      out += t.data<bool>()[i] ? "true" : "false";
    } else if (t.dtype() == DType::kInt64) {
      out += std::to_string(t.data<int64_t>()[i]);
    } else {
      out += Number(t.GetAsDouble(i));
    }
  }
  return out + "]";
}

}  // namespace

std::string ReportToJson(const Report& r) {
  std::vector<std::string> fields;
  if (r.graph) fields.push_back(fmt::format("\"graph\":{}", Quote(r.graph->path)));
  if (r.devices) {
    std::vector<std::string> devs;
    for (const Device& d : r.devices->devices()) {
      std::string dev = fmt::format("{{\"name\":{},\"type\":{}", Quote(d.name), Quote(d.type));
      if (d.type == "GPU") {
        dev += fmt::format(",\"cuda_ordinal\":{},\"gpu_name\":{},\"pci_bus_id\":{},\"compute_capability\":{},"
                           "\"simulated\":{}",
                           d.cuda_ordinal, Quote(d.gpu_name), Quote(d.pci_bus_id), Quote(d.compute_capability),
                           d.simulated ? "true" : "false");
      }
      if (d.type == "GPU") {
        // A real GPU's default limit is known once its allocator measured
        // free memory, on first use, and its pool says what it reserved.
        // Simulated GPUs reserve as TensorFlow would: the whole limit, or
        // with allow_growth what was used.
        const int64_t limit = d.memory_limit_bytes >= 0 ? d.memory_limit_bytes : d.allocator->limit_bytes();
        int64_t reserved = d.allocator->reserved_bytes();
        if (reserved < 0) {
          reserved = d.allow_growth ? static_cast<int64_t>(d.allocator->peak_bytes_in_use())
                                    : std::max<int64_t>(limit, 0);
        }
        dev += fmt::format(",\"memory_limit_bytes\":{},\"allow_growth\":{},\"reserved_bytes\":{}",
                           limit >= 0 ? std::to_string(limit) : "null", d.allow_growth ? "true" : "false", reserved);
      }
      if (d.allocator) dev += fmt::format(",\"peak_bytes\":{}", d.allocator->peak_bytes_in_use());
      devs.push_back(dev + "}");
    }
    fields.push_back(fmt::format("\"devices\":[{}]", fmt::join(devs, ",")));
  }
  if (r.graph && r.placement && r.devices) {
    std::vector<std::string> nodes;
    for (int id : r.placement->log_order) {
      const Node& n = r.graph->nodes[id];
      nodes.push_back(fmt::format("{{\"name\":{},\"op\":{},\"device\":{},\"requested\":{}}}", Quote(n.name),
                                  Quote(n.op), Quote((*r.devices)[r.placement->device_of[id]].name),
                                  Quote(n.requested_device.ToString())));
    }
    fields.push_back(fmt::format("\"placement\":[{}]", fmt::join(nodes, ",")));
  }
  if (r.graph && r.result) {
    std::vector<std::string> results;
    for (size_t i = 0; i < r.fetch.size() && i < r.result->fetched.size(); ++i) {
      const Node& n = r.graph->nodes[r.fetch[i]];
      const Tensor& t = r.result->fetched[i];
      std::string printed = i < r.printed.size() ? r.printed[i] : "";
      if (!t.is_valid()) {
        results.push_back(fmt::format("{{\"name\":{},\"printed\":{}}}", Quote(n.name), Quote(printed)));
        continue;
      }
      results.push_back(fmt::format("{{\"name\":{},\"dtype\":{},\"shape\":[{}],\"printed\":{},\"values\":{}{}}}",
                                    Quote(n.name), Quote(std::string(Name(t.dtype()))),
                                    fmt::join(t.shape(), ","), Quote(printed), Values(t),
                                    t.num_elements() > kMaxJsonValues ? ",\"values_truncated\":true" : ""));
    }
    fields.push_back(fmt::format("\"results\":[{}]", fmt::join(results, ",")));
    std::vector<std::string> copies;
    for (const CopyRecord& c : r.result->copies) {
      copies.push_back(fmt::format("{{\"from_node\":{},\"to_node\":{},\"from\":{},\"to\":{},\"bytes\":{}}}",
                                   Quote(r.graph->nodes[c.producer].name), Quote(r.graph->nodes[c.consumer].name),
                                   Quote(c.from), Quote(c.to), c.bytes));
    }
    fields.push_back(fmt::format("\"copies\":[{}]", fmt::join(copies, ",")));
  }
  fields.push_back(fmt::format("\"timings_ms\":{{\"load\":{},\"place\":{},\"run\":{},\"total\":{}}}",
                               Number(r.timings.load_ms), Number(r.timings.place_ms), Number(r.timings.run_ms),
                               Number(r.timings.total_ms)));
  fields.push_back(fmt::format("\"peak_rss_bytes\":{{\"load\":{},\"place\":{},\"run\":{}}}", r.peak_rss_bytes.load,
                               r.peak_rss_bytes.place, r.peak_rss_bytes.run));
  if (!r.benchmark_json.empty()) fields.push_back("\"benchmark\":" + r.benchmark_json);
  if (r.status.ok()) {
    fields.push_back("\"error\":null,\"exit_code\":0");
  } else {
    fields.push_back(fmt::format("\"error\":{},\"exit_code\":{}", Quote(r.status.message()),
                                 ExitCodeFor(r.status.kind())));
  }
  return "{" + fmt::format("{}", fmt::join(fields, ",")) + "}\n";
}

}  // namespace tfrun
