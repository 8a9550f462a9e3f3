#include "core/devices/simulated_platform.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>


#include "core/base/did_you_mean.h"
#include "core/devices/visibility.h"
#include "core/graph/device_name.h"

namespace tfrun {
namespace {

class SimulatedPlatform final : public GpuPlatform {
 public:
  explicit SimulatedPlatform(std::vector<PhysicalGpu> visible) : visible_(std::move(visible)) {}
  StatusOr<std::vector<PhysicalGpu>> VisibleGpus(bool) override { return visible_; }
  bool simulated() const override { return true; }

 private:
  std::vector<PhysicalGpu> visible_;
};

// "0000:02:00.0": domain (4 to 8 hex digits), bus, device, function 0-7.
bool IsPciBusId(const std::string& id) {
  const size_t colon = id.find(':');
  if (colon == std::string::npos || colon < 4 || colon > 8 || id.size() != colon + 8) return false;
  auto hex = [&](size_t from, size_t n) {
    for (size_t i = from; i < from + n; ++i) {
      if (!std::isxdigit(static_cast<unsigned char>(id[i]))) return false;
    }
    return true;
  };
  return hex(0, colon) && hex(colon + 1, 2) && id[colon + 3] == ':' && hex(colon + 4, 2) && id[colon + 6] == '.' &&
         id[colon + 7] >= '0' && id[colon + 7] <= '7';
}

// "8.0": one or two digits, a dot, one or two digits.
bool ReadCapability(const std::string& cc, int* major, int* minor) {
  const size_t dot = cc.find('.');
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 2 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  };
  if (dot == std::string::npos || !digits(cc.substr(0, dot)) || !digits(cc.substr(dot + 1))) return false;
  *major = std::stoi(cc.substr(0, dot));
  *minor = std::stoi(cc.substr(dot + 1));
  return true;
}

const std::vector<std::string> kGpuKeys = {"name", "pci_bus_id", "compute_capability", "memory_mb", "free_mb", "uuid"};

}  // namespace

StatusOr<std::unique_ptr<GpuPlatform>> LoadSimulatedPlatform(const std::string& path,
                                                             const std::optional<std::string>& cuda_visible_devices,
                                                             const std::optional<std::pair<std::string, int>>& task) {
  auto where = [&](const YAML::Node& n) {
    return n.Mark().line >= 0 ? fmt::format("{}:{}:{}", path, n.Mark().line + 1, n.Mark().column + 1) : path;
  };
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return BadInput(fmt::format("{}: cannot read topology file", path));
  } catch (const YAML::ParserException& e) {
    return BadInput(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (!root.IsMap() || !root["gpus"]) {
    return BadInput(fmt::format("{}: a topology file is a mapping with a 'gpus' list", path));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it->first.Scalar() != "gpus" && it->first.Scalar() != "tasks") {
      return BadInput(fmt::format("{}: unknown key '{}' in the topology file", where(it->first), it->first.Scalar()));
    }
  }
  // tasks: {/job:J/task:T: {gpus: [...]}}: a cluster task's own GPUs; the
  // top-level list is every other task's (and a single process's).
  YAML::Node gpus = root["gpus"];
  if (const YAML::Node tasks = root["tasks"]) {
    if (!tasks.IsMap()) return BadInput(fmt::format("{}: 'tasks' must map tasks to their GPUs", where(tasks)));
    for (auto it = tasks.begin(); it != tasks.end(); ++it) {
      StatusOr<DeviceSpec> spec = DeviceSpec::Parse(it->first.Scalar());
      if (!spec.ok() || !spec->job || !spec->task || spec->type || spec->id) {
        return BadInput(fmt::format("{}: '{}' is not a task such as /job:worker/task:1", where(it->first),
                                    it->first.Scalar()));
      }
      if (!it->second.IsMap() || !it->second["gpus"] || it->second.size() != 1) {
        return BadInput(fmt::format("{}: a task's entry is a mapping with a 'gpus' list", where(it->second)));
      }
      if (task && *spec->job == task->first && *spec->task == task->second) gpus = it->second["gpus"];
    }
  }
  if (!gpus.IsSequence()) return BadInput(fmt::format("{}: 'gpus' must be a list", where(gpus)));
  std::vector<PhysicalGpu> all;
  for (const YAML::Node& g : gpus) {
    if (!g.IsMap()) return BadInput(fmt::format("{}: each GPU must be a mapping", where(g)));
    for (auto it = g.begin(); it != g.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(kGpuKeys.begin(), kGpuKeys.end(), key) == kGpuKeys.end()) {
        return BadInput(
            fmt::format("{}: unknown key '{}' for a GPU{}", where(it->first), key, DidYouMean(key, kGpuKeys)));
      }
    }
    for (const char* key : {"name", "pci_bus_id", "compute_capability", "memory_mb"}) {
      if (!g[key] || !g[key].IsScalar()) {
        return BadInput(fmt::format("{}: a GPU needs '{}'", where(g), key));
      }
    }
    PhysicalGpu gpu;
    gpu.name = g["name"].Scalar();
    gpu.pci_bus_id = g["pci_bus_id"].Scalar();
    if (!IsPciBusId(gpu.pci_bus_id)) {
      return BadInput(
          fmt::format("{}: pci_bus_id '{}' is not like 0000:02:00.0", where(g["pci_bus_id"]),
                      ClipForMessage(gpu.pci_bus_id)));
    }
    const std::string cc = g["compute_capability"].Scalar();
    if (!ReadCapability(cc, &gpu.cc_major, &gpu.cc_minor)) {
      return BadInput(fmt::format("{}: compute_capability '{}' is not like 8.0", where(g["compute_capability"]),
                                  ClipForMessage(cc)));
    }
    auto read_mb = [&](const char* key, int64_t* bytes) -> Status {
      const YAML::Node n = g[key];
      char* end = nullptr;
      long long mb = std::strtoll(n.Scalar().c_str(), &end, 10);
      if (n.Scalar().empty() || *end != '\0' || mb <= 0 || mb > (int64_t{1} << 32)) {
        return BadInput(fmt::format("{}: {} must be a positive whole number of MB", where(n), key));
      }
      *bytes = mb * (int64_t{1} << 20);
      return Status::Ok();
    };
    TFRUN_RETURN_IF_ERROR(read_mb("memory_mb", &gpu.total_bytes));
    gpu.free_bytes = gpu.total_bytes;
    if (g["free_mb"]) TFRUN_RETURN_IF_ERROR(read_mb("free_mb", &gpu.free_bytes));
    if (gpu.free_bytes > gpu.total_bytes) {
      return BadInput(fmt::format("{}: free_mb exceeds memory_mb", where(g["free_mb"])));
    }
    gpu.uuid = g["uuid"] ? g["uuid"].Scalar() : fmt::format("GPU-{:08x}-sim", all.size());
    all.push_back(gpu);
  }
  std::vector<PhysicalGpu> visible;
  for (int i : CudaVisibleDevices(cuda_visible_devices, all)) visible.push_back(all[i]);
  return std::unique_ptr<GpuPlatform>(new SimulatedPlatform(std::move(visible)));
}

}  // namespace tfrun
