#include "cli/report.h"
#include "core/base/device_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>

namespace tfrun {

// A JSON string. `bytes_as_latin1`: a string tensor's element, whose bytes
// need not be UTF-8, each byte >= 0x7f becoming \u00XX.
// Other text (a path, a message) is UTF-8 where it is well formed; a byte
// that is not (a file name in Latin-1) is \u00XX too, so the report is
// always valid JSON.
std::string Quote(std::string_view s, bool bytes_as_latin1) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: {
        const size_t n = bytes_as_latin1 ? (c < 0x7f ? 1 : 0) : Utf8Length(s, i);
        if (c < 0x20 || c == 0x7f || n == 0) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out.append(s, i, n);
          i += n;
          continue;
        }
      }
    }
    ++i;
  }
  return out + "\"";
}

namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

// Read by hand in one pass: libstdc++'s regular expressions recursed once per character and
// overflowed the stack on long messages (a 30,000-character --fetch name).
std::optional<MessageLocation> LocationInMessage(std::string_view m) {
  const size_t colon = m.find_first_of(":\n");
  if (colon == 0 || colon == std::string_view::npos || m[colon] != ':') return std::nullopt;
  size_t i = colon + 1;
  const size_t line_start = i;
  while (i < m.size() && IsDigit(m[i])) ++i;
  if (i == line_start || i >= m.size() || m[i] != ':') return std::nullopt;
  const size_t column_start = ++i;
  while (i < m.size() && IsDigit(m[i])) ++i;
  if (i == column_start || m.substr(i, 2) != ": ") return std::nullopt;
  return MessageLocation{std::string(m.substr(0, colon)), std::string(m.substr(line_start, column_start - 1 - line_start)),
                        std::string(m.substr(column_start, i - column_start))};
}

std::optional<std::string_view> NodeInMessage(std::string_view m) {
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.compare(i, 6, "node '") == 0) {
      const size_t end = m.find('\'', i + 6);
      if (end != std::string_view::npos && end > i + 6) return m.substr(i + 6, end - i - 6);
    } else if (m.compare(i, 10, "operation ") == 0) {
      size_t j = i + 10;
      if (j < m.size() && m[j] == '\'') ++j;
      const size_t name_start = j;
      while (j < m.size() && m[j] != '\'' && m[j] != ':' && !IsSpace(m[j])) ++j;
      if (j == name_start) continue;
      const size_t name_end = j;
      if (j < m.size() && m[j] == '\'') ++j;
      if (j < m.size() && (m[j] == ':' || IsSpace(m[j]))) return m.substr(name_start, name_end - name_start);
    }
  }
  return std::nullopt;
}

namespace {

// JSON has no NaN or infinity. In a number array they become null (so
// `jq add` still sums the array) and the element's index is listed in
// "non_finite" with protobuf's JSON spelling: "NaN", "Infinity",
// "-Infinity" (docs/json-report.md).
std::string Number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }
std::string NonFiniteName(double v) { return std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity"; }

constexpr int64_t kMaxJsonValues = 100000;

// The "values" array, and `non_finite` the "non_finite" object's members.
// int64 values are strings, as protobuf's JSON mapping writes them, so no
// reader rounds them through a double.
std::string Values(const Tensor& t, std::string* non_finite) {
  std::string out = "[";
  const int64_t n = std::min<int64_t>(t.num_elements(), kMaxJsonValues);
  for (int64_t i = 0; i < n; ++i) {
    if (i) out += ",";
    if (t.dtype() == DType::kString) {
      out += Quote(t.StringAt(i), /*bytes_as_latin1=*/true);
    } else if (t.dtype() == DType::kBool) {
      out += t.data<bool>()[i] ? "true" : "false";
    } else if (t.dtype() == DType::kInt64) {
      out += "\"" + std::to_string(t.data<int64_t>()[i]) + "\"";
    } else {
      const double v = t.GetAsDouble(i);
      out += Number(v);
      if (!std::isfinite(v)) {
        if (!non_finite->empty()) *non_finite += ",";
        *non_finite += fmt::format("\"{}\":\"{}\"", i, NonFiniteName(v));
      }
    }
  }
  return out + "]";
}

// A JSON object written field by field into one string: a report of a
// large graph is never held twice.
class JsonObject {
 public:
  // Starts field `key`; its value is appended to the returned string.
  std::string& Field(std::string_view key) {
    out_ += out_.size() > 1 ? ",\"" : "\"";
    out_ += key;
    out_ += "\":";
    return out_;
  }
  // Appends `items` as a JSON array, each written by `write(out, item)`.
  template <typename Items, typename Write>
  void Array(std::string_view key, const Items& items, Write write) {
    std::string& out = Field(key);
    out += '[';
    bool first = true;
    for (const auto& item : items) {
      if (!first) out += ',';
      first = false;
      write(out, item);
    }
    out += ']';
  }
  std::string Finish() {
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  std::string out_ = "{";
};

void AppendDevice(std::string& out, const Device& d) {
  auto to = std::back_inserter(out);
  fmt::format_to(to, "{{\"name\":{},\"type\":{}", Quote(d.name), Quote(d.type));
  if (d.type == kGpu) {
    fmt::format_to(to,
                   ",\"cuda_ordinal\":{},\"gpu_name\":{},\"pci_bus_id\":{},\"compute_capability\":{},"
                   "\"simulated\":{}",
                   d.cuda_ordinal, Quote(d.gpu_name), Quote(d.pci_bus_id), Quote(d.compute_capability),
                   d.simulated ? "true" : "false");
    // A real GPU's default limit is known once its allocator measured
    // free memory, on first use, and its pool says what it reserved.
    // Simulated GPUs reserve as TensorFlow would: the whole limit, or
    // with allow_growth what was used.
    const int64_t limit = d.memory_limit_bytes >= 0 ? d.memory_limit_bytes : d.allocator->limit_bytes();
    int64_t reserved = d.allocator->reserved_bytes();
    if (reserved < 0) {
      reserved = d.allow_growth ? static_cast<int64_t>(d.allocator->peak_bytes_in_use()) : std::max<int64_t>(limit, 0);
    }
    fmt::format_to(to, ",\"memory_limit_bytes\":{},\"allow_growth\":{},\"reserved_bytes\":{}",
                   limit >= 0 ? std::to_string(limit) : "null", d.allow_growth ? "true" : "false", reserved);
  }
  if (d.allocator) fmt::format_to(to, ",\"peak_bytes\":{}", d.allocator->peak_bytes_in_use());
  out += '}';
}

std::string OptionalName(const Graph& graph, int id) { return id >= 0 ? Quote(graph.nodes[id].name) : "null"; }

std::string QuotedList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& item : items) out += (out.size() > 1 ? "," : "") + Quote(item);
  return out + "]";
}

// docs/json-report.md, "explain".
void AppendExplanation(std::string& out, const NodeExplanation& e, const Graph& graph, const DeviceSet& devices) {
  auto to = std::back_inserter(out);
  const Node& node = graph.nodes[e.node];
  fmt::format_to(to, "{{\"node\":{},\"op\":{},\"group\":[", Quote(node.name), Quote(node.op));
  for (size_t i = 0; i < e.members.size(); ++i) {
    const ExplainedMember& m = e.members[i];
    fmt::format_to(to, "{}{{\"node\":{},\"op\":{},\"requested\":{},\"kernels\":{}}}", i ? "," : "",
                   Quote(graph.nodes[m.node].name), Quote(graph.nodes[m.node].op), Quote(m.requested),
                   QuotedList(m.types));
  }
  out += "],\"joins\":[";
  for (size_t i = 0; i < e.joins.size(); ++i) {
    const ColocationJoin& j = e.joins[i];
    fmt::format_to(to, "{}{{\"node\":{},\"with\":{},\"why\":\"{}\"", i ? "," : "", Quote(graph.nodes[j.node].name),
                   Quote(graph.nodes[j.with].name), JoinName(j.why));
    if (j.input >= 0) fmt::format_to(to, ",\"input\":{}", j.input);
    if (j.why == ColocationJoin::Why::kIgnored) {
      fmt::format_to(to, ",\"message\":{}", Quote(j.name));
    } else if (!j.name.empty()) {
      fmt::format_to(to, ",\"class\":{}", Quote("loc:@" + j.name));
    }
    out += '}';
  }
  out += ']';
  if (e.devices.empty()) {  // the colocation graph failed
    fmt::format_to(to, ",\"error\":{}}}", Quote(e.error));
    return;
  }
  fmt::format_to(to, ",\"merged_request\":{},\"resource_device\":{},\"supported_types\":{},\"stage\":\"{}\","
                 "\"matched\":{},\"call_device_first\":{},\"devices\":[",
                 Quote(e.merged_request.ToString()), Quote(e.resource_device.ToString()), QuotedList(e.group_types),
                 StageName(e.stage), Quote(e.matched.ToString()), e.call_device_first);
  int rank = 0;
  for (size_t i = 0; i < e.devices.size(); ++i) {
    const Device& d = devices[e.devices[i]];
    fmt::format_to(to, "{}{{\"device\":{},\"type\":{},\"priority\":{},", i ? "," : "", Quote(d.name),
                   Quote(d.type), d.priority());
    if (e.excluded[i].empty()) {
      fmt::format_to(to, "\"candidate\":{}}}", ++rank);
    } else {
      fmt::format_to(to, "\"candidate\":null,\"excluded\":{}}}", Quote(e.excluded[i]));
    }
  }
  fmt::format_to(to, "],\"rule\":\"{}\",\"decided_by\":{},\"rule_node\":{},\"note\":{},\"device\":{},"
                 "\"error\":{}}}",
                 RuleName(e.rule), OptionalName(graph, e.decided_by), OptionalName(graph, e.rule_node),
                 e.rule_note.empty() ? "null" : Quote(e.rule_note),
                 e.device >= 0 ? Quote(devices[e.device].name) : "null", e.error.empty() ? "null" : Quote(e.error));
}

}  // namespace

std::string ErrorJson(const Status& status) {
  const std::string& m = status.message();
  static const char* const kKinds[] = {"mismatch", "bad_input", "placement", "runtime"};
  std::string out = fmt::format("{{\"kind\":\"{}\",\"exit_code\":{},\"message\":{}",
                                kKinds[static_cast<int>(status.kind())], ExitCodeFor(status.kind()), Quote(m));
  // The site's fields where the error's maker set them; else read from the
  // message (errors made before the fields, or that passed through text:
  // another MPI task's, a re-worded one).
  const ErrorSite& site = status.site();
  if (!site.file.empty() && site.line > 0) {
    out += fmt::format(",\"file\":{},\"line\":{},\"column\":{}", Quote(site.file), site.line, site.column);
  } else if (const std::optional<MessageLocation> where = LocationInMessage(m)) {
    out += fmt::format(",\"file\":{},\"line\":{},\"column\":{}", Quote(where->file), where->line, where->column);
  }
  if (!site.node.empty()) {
    out += fmt::format(",\"node\":{}", Quote(site.node));
  } else if (const std::optional<std::string_view> node = NodeInMessage(m)) {
    out += fmt::format(",\"node\":{}", Quote(*node));
  }
  return out + "}";
}

std::string ReportToJson(const Report& r) {
  JsonObject json;
  json.Field("schema") += std::to_string(kReportSchema);
  if (!r.version.empty()) json.Field("version") += Quote(r.version);
  if (r.graph) json.Field("graph") += Quote(r.graph->path);
  if (r.devices) json.Array("devices", r.devices->devices(), AppendDevice);
  if (r.graph && r.placement && r.devices) {
    json.Array("placement", r.placement->log_order, [&](std::string& out, int id) {
      const Node& n = r.graph->nodes[id];
      fmt::format_to(std::back_inserter(out), "{{\"name\":{},\"op\":{},\"device\":{},\"requested\":{}}}",
                     Quote(n.name), Quote(n.op), Quote((*r.devices)[r.placement->device_of[id]].name),
                     Quote(n.requested_device.ToString()));
    });
  }
  if (r.graph && r.devices && r.explanations) {
    json.Array("explain", *r.explanations, [&](std::string& out, const NodeExplanation& e) {
      AppendExplanation(out, e, *r.graph, *r.devices);
    });
  }
  if (r.graph && r.devices && r.executed) {
    json.Array("executed", *r.executed, [&](std::string& out, const EagerOp& op) {
      fmt::format_to(std::back_inserter(out), "{{\"op\":{},\"device\":{},\"node\":{}}}", Quote(op.op),
                     Quote((*r.devices)[op.device].name), Quote(r.graph->nodes[op.node].name));
    });
  }
  if (r.graph && r.feeds && !r.feeds->empty()) {
    json.Array("feeds", *r.feeds, [&](std::string& out, const Feed& f) {
      fmt::format_to(std::back_inserter(out), "{{\"name\":{},\"dtype\":{},\"shape\":[{}]}}",
                     Quote(r.graph->OutputName(f.output, false)), Quote(std::string(Name(f.value.dtype()))),
                     fmt::join(f.value.shape(), ","));
    });
  }
  if (r.graph && !r.fetch.empty()) {  // also when the run failed before results
    json.Array("fetch", r.fetch, [&](std::string& out, const NodeOutput& f) {
      out += Quote(r.graph->OutputName(f));
    });
  }
  if (r.graph && r.result) {
    std::vector<size_t> fetched;
    for (size_t i = 0; i < r.fetch.size() && i < r.result->fetched.size(); ++i) fetched.push_back(i);
    json.Array("results", fetched, [&](std::string& out, size_t i) {
      const std::string name = r.graph->OutputName(r.fetch[i]);
      const Tensor& t = r.result->fetched[i];
      const std::string printed = i < r.printed.size() ? r.printed[i] : "";
      auto to = std::back_inserter(out);
      if (!t.is_valid()) {
        fmt::format_to(to, "{{\"name\":{},\"printed\":{}}}", Quote(name), Quote(printed));
        return;
      }
      std::string non_finite;
      const std::string values = Values(t, &non_finite);
      fmt::format_to(to, "{{\"name\":{},\"dtype\":{},\"shape\":[{}],\"printed\":{},\"values\":{}{}{}}}",
                     Quote(name), Quote(std::string(Name(t.dtype()))), fmt::join(t.shape(), ","), Quote(printed),
                     values, non_finite.empty() ? "" : ",\"non_finite\":{" + non_finite + "}",
                     t.num_elements() > kMaxJsonValues ? ",\"values_truncated\":true" : "");
    });
    json.Array("copies", r.result->copies, [&](std::string& out, const CopyRecord& c) {
      fmt::format_to(std::back_inserter(out), "{{\"from_node\":{},\"to_node\":{},\"from\":{},\"to\":{},\"bytes\":{}}}",
                     Quote(r.graph->nodes[c.producer].name), Quote(r.graph->nodes[c.consumer].name), Quote(c.from),
                     Quote(c.to), c.bytes);
    });
  }
  // A phase that did not finish has no time and no memory (not 0).
  std::vector<std::string> times, peaks;
  const bool loaded = r.graph != nullptr, placed = r.placement != nullptr, ran = r.result != nullptr;
  if (loaded) times.push_back(fmt::format("\"load\":{}", Number(r.timings.load_ms)));
  if (placed) times.push_back(fmt::format("\"place\":{}", Number(r.timings.place_ms)));
  if (ran) times.push_back(fmt::format("\"run\":{}", Number(r.timings.run_ms)));
  if (r.status.ok()) times.push_back(fmt::format("\"total\":{}", Number(r.timings.total_ms)));
  if (loaded) peaks.push_back(fmt::format("\"load\":{}", r.peak_rss_bytes.load));
  if (placed) peaks.push_back(fmt::format("\"place\":{}", r.peak_rss_bytes.place));
  if (ran) peaks.push_back(fmt::format("\"run\":{}", r.peak_rss_bytes.run));
  json.Field("timings_ms") += fmt::format("{{{}}}", fmt::join(times, ","));
  json.Field("peak_rss_bytes") += fmt::format("{{{}}}", fmt::join(peaks, ","));
  if (!r.benchmark_json.empty()) json.Field("benchmark") += r.benchmark_json;
  json.Field("error") += r.status.ok() ? "null" : ErrorJson(r.status);
  json.Field("exit_code") += std::to_string(r.status.ok() ? 0 : ExitCodeFor(r.status.kind()));
  return json.Finish();
}

}  // namespace tfrun
