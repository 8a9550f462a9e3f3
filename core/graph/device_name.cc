#include "core/graph/device_name.h"
#include "core/base/device_types.h"

#include <fmt/format.h>

#include <cctype>
#include <vector>

namespace tfrun {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

// DeviceNameUtils' ConsumeJobName / ConsumeDeviceType: [A-Za-z][A-Za-z0-9_]*
bool IsIdentifier(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::optional<int> ParseIndex(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string Upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// Python's DeviceSpec upper-cases CPU and GPU in any case.
std::string CanonicalType(std::string_view type) {
  std::string u = Upper(type);
  return (u == kCpu || u == kGpu) ? u : std::string(type);
}

}  // namespace

StatusOr<DeviceSpec> DeviceSpec::Parse(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return BadInput(fmt::format("invalid device string '{}': {}", text, why));
  };
  DeviceSpec spec;
  bool has_type = false;
  for (std::string_view part : Split(text, '/')) {
    if (part.empty()) continue;
    std::vector<std::string_view> f = Split(part, ':');
    auto set_index = [&](std::string_view v, std::optional<int>& out,
                         std::string_view what) -> Status {
      if (v == "*") return Status::Ok();
      std::optional<int> n = ParseIndex(v);
      if (!n) return bad(fmt::format("{} '{}' is not a number", what, v));
      out = *n;
      return Status::Ok();
    };
    if (f.size() == 2 && f[0] == "job") {
      if (f[1] == "*") continue;
      if (!IsIdentifier(f[1])) return bad(fmt::format("bad job name '{}'", f[1]));
      spec.job = std::string(f[1]);
    } else if (f.size() == 2 && f[0] == "replica") {
      TFRUN_RETURN_IF_ERROR(set_index(f[1], spec.replica, "replica"));
    } else if (f.size() == 2 && f[0] == "task") {
      TFRUN_RETURN_IF_ERROR(set_index(f[1], spec.task, "task"));
    } else if ((f.size() == 1 || f.size() == 2) &&
               (Upper(f[0]) == kCpu || Upper(f[0]) == kGpu)) {
      if (has_type) return bad("more than one device type");
      has_type = true;
      spec.type = Upper(f[0]);
      if (f.size() == 2) TFRUN_RETURN_IF_ERROR(set_index(f[1], spec.id, "device index"));
    } else if ((f.size() == 2 || f.size() == 3) && f[0] == "device") {
      // "/device:GPU" (no index) is a valid partial spec in C++.
      if (has_type) return bad("more than one device type");
      has_type = true;
      if (f[1] != "*") {
        if (!IsIdentifier(f[1])) return bad(fmt::format("bad device type '{}'", f[1]));
        spec.type = CanonicalType(f[1]);
      }
      if (f.size() == 3) TFRUN_RETURN_IF_ERROR(set_index(f[2], spec.id, "device index"));
    } else {
      return bad(fmt::format("unknown component '{}'", part));
    }
  }
  return spec;
}

DeviceSpec DeviceSpec::Local(std::string type, int id) {
  DeviceSpec s;
  s.job = "localhost";
  s.replica = 0;
  s.task = 0;
  s.type = std::move(type);
  s.id = id;
  return s;
}

DeviceSpec DeviceSpec::SoftPlacementRelaxed() const {
  DeviceSpec relaxed = *this;
  relaxed.type.reset();
  relaxed.id.reset();
  return relaxed;
}

DeviceSpec DeviceSpec::MergedOver(const DeviceSpec& outer) const {
  DeviceSpec m = outer;
  if (job) m.job = job;
  if (replica) m.replica = replica;
  if (task) m.task = task;
  if (type) m.type = type;  // field by field, as DeviceSpec.make_merged_spec
  if (id) m.id = id;
  return m;
}

bool DeviceSpec::Matches(const DeviceSpec& d) const {
  return (!job || job == d.job) && (!replica || replica == d.replica) &&
         (!task || task == d.task) && (!type || type == d.type) &&
         (!id || id == d.id);
}

std::string DeviceSpec::ToString() const {
  std::string s;
  if (job) s += "/job:" + *job;
  if (replica) s += fmt::format("/replica:{}", *replica);
  if (task) s += fmt::format("/task:{}", *task);
  if (type) s += fmt::format("/device:{}:{}", *type, id ? std::to_string(*id) : "*");
  return s;
}

std::string DeviceSpec::ToLegacyString() const {
  std::string s;
  if (job) s += "/job:" + *job;
  if (replica) s += fmt::format("/replica:{}", *replica);
  if (task) s += fmt::format("/task:{}", *task);
  if (type) {
    std::string t = *type;
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    s += fmt::format("/{}:{}", t, id ? std::to_string(*id) : "*");
  }
  return s;
}

}  // namespace tfrun
