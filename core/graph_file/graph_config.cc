#include "core/graph_file/graph_config.h"
#include "core/base/device_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tfrun {
namespace {

const std::vector<std::string> kConfigKeys = {"log_device_placement",
                                              "allow_soft_placement",
                                              "visible_device_list",
                                              "allow_growth",
                                              "per_process_gpu_memory_fraction",
                                              "virtual_devices",
                                              "device_count",
                                              "tensor_float_32",
                                              "intra_op_parallelism_threads",
                                              "inter_op_parallelism_threads",
                                              "cluster",
                                              "operation_timeout_in_ms",
                                              "do_function_inlining"};

// More devices of one type than any machine here has; a larger count is a typo.
constexpr int kMaxDeviceCount = 4096;

// More tasks than any MPI job here would start; a larger count is a typo.
constexpr int kMaxClusterTasks = 4096;

bool IsJobName(std::string_view s) {
  // DeviceNameUtils: a letter, then letters, digits and '_'.
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// cluster: {job: [addresses...]} or {job: task count}, as ClusterSpec takes.
Status ReadCluster(const FieldReader& fields, const YamlNode& v, GraphConfig* cfg) {
  if (!v.IsMap() || v.size() == 0) {
    return fields.ErrorAt(v, "cluster must map job names to lists of task addresses or to task counts");
  }
  int total = 0;
  for (const YamlNode::Pair& job : v.Pairs()) {
    const std::string name = job.key.ScalarString();
    if (!IsJobName(name)) {
      return fields.ErrorAt(job.key, fmt::format("invalid job name '{}' (a letter, then letters, digits or '_')", name));
    }
    if (cfg->cluster.HasJob(name)) return fields.ErrorAt(job.key, fmt::format("job '{}' is listed twice", name));
    const YamlNode& tasks = job.value;
    if (tasks.IsSequence()) {
      std::vector<std::string> addresses;
      for (const YamlNode& a : tasks.Elements()) {
        if (!a.IsScalar()) return fields.ErrorAt(a, "a task address must be a string such as \"localhost:2222\"");
        addresses.push_back(a.ScalarString());
      }
      if (addresses.empty()) return fields.ErrorAt(tasks, fmt::format("job '{}' has no tasks", name));
      total += static_cast<int>(std::min<size_t>(addresses.size(), kMaxClusterTasks + 1));
      if (total > kMaxClusterTasks) break;
      cfg->cluster.AddJob(name, addresses);
    } else {
      int64_t count = 0;
      TFRUN_RETURN_IF_ERROR(fields.ReadInt(tasks, fmt::format("job '{}' task count", name), 1, kMaxClusterTasks, &count));
      total += static_cast<int>(count);
      if (total > kMaxClusterTasks) break;
      cfg->cluster.AddJob(name, static_cast<int>(count));
    }
  }
  if (total > kMaxClusterTasks) return fields.ErrorAt(v, fmt::format("cluster has more than {} tasks", kMaxClusterTasks));
  cfg->cluster.Finish();
  return Status::Ok();
}

// More logical GPUs than any machine has: only aliases repeating a long
// list could make this many, and reading them would take for ever.
constexpr int kMaxVirtualDevices = 4096;

// gpu_options.experimental.virtual_devices: MB per logical GPU, per GPU.
Status ReadVirtualDevices(const FieldReader& fields, const YamlNode& v, GraphConfig* cfg) {
  if (!v.IsSequence()) return fields.ErrorAt(v, "virtual_devices must be a list of lists of memory limits in MB");
  int count = 0;
  for (const YamlNode& gpu : v.Elements()) {
    if (!gpu.IsSequence()) return fields.ErrorAt(gpu, "each virtual_devices entry must be a list of memory limits in MB");
    std::vector<double> limits;
    for (const YamlNode& mb : gpu.Elements()) {
      if (++count > kMaxVirtualDevices) {
        return fields.ErrorAt(mb, fmt::format("virtual_devices lists more than {} logical GPUs", kMaxVirtualDevices));
      }
      double x = 0;
      TFRUN_RETURN_IF_ERROR(fields.ReadDouble(mb, "a virtual device memory limit", &x));
      if (x <= 0) return fields.ErrorAt(mb, "a virtual device memory limit must be positive");
      limits.push_back(x);
    }
    cfg->virtual_devices.push_back(std::move(limits));
  }
  return Status::Ok();
}

// ConfigProto.device_count: {CPU: 3, GPU: 2}.
Status ReadDeviceCount(const FieldReader& fields, const YamlNode& v, GraphConfig* cfg) {
  if (!v.IsMap()) return fields.ErrorAt(v, "device_count must be a mapping such as {CPU: 3, GPU: 2}");
  for (const YamlNode::Pair& pair : v.Pairs()) {
    const std::string_view type = pair.key.Scalar();
    int64_t n = 0;
    TFRUN_RETURN_IF_ERROR(fields.ReadInt(pair.value, "a device count", 0, kMaxDeviceCount, &n));
    if (type == kCpu) {
      cfg->cpu_device_count = static_cast<int>(n);
    } else if (type == kGpu) {
      cfg->gpu_device_count = static_cast<int>(n);
    } else {
      // TensorFlow ignores counts of types it has no factory for.
      return fields.ErrorAt(pair.key, fmt::format("device_count: unknown device type '{}' (CPU or GPU)",
                                                  ClipForMessage(type)));
    }
  }
  return Status::Ok();
}

Status ReadThreads(const FieldReader& fields, const YamlNode& v, std::string_view key, int* out) {
  int64_t i = 0;
  TFRUN_RETURN_IF_ERROR(fields.ReadInt(v, key, 0, 1024, &i));
  *out = static_cast<int>(i);
  return Status::Ok();
}

}  // namespace

Status ReadGraphConfig(const FieldReader& fields, const YamlNode& c, GraphConfig* cfg) {
  if (c.IsNull()) return Status::Ok();
  if (!c.IsMap()) return fields.ErrorAt(c, "config must be a mapping");
  TFRUN_RETURN_IF_ERROR(fields.CheckKeys(c, kConfigKeys, "config"));
  for (const YamlNode::Pair& pair : c.Pairs()) {
    const std::string_view key = pair.key.Scalar();
    const YamlNode& v = pair.value;
    if (key == "log_device_placement") {
      TFRUN_RETURN_IF_ERROR(fields.ReadBool(v, key, &cfg->log_device_placement));
    } else if (key == "allow_soft_placement") {
      TFRUN_RETURN_IF_ERROR(fields.ReadBool(v, key, &cfg->allow_soft_placement));
    } else if (key == "allow_growth") {
      TFRUN_RETURN_IF_ERROR(fields.ReadBool(v, key, &cfg->allow_growth));
    } else if (key == "do_function_inlining") {
      TFRUN_RETURN_IF_ERROR(fields.ReadBool(v, key, &cfg->do_function_inlining));
    } else if (key == "tensor_float_32") {
      TFRUN_RETURN_IF_ERROR(fields.ReadBool(v, key, &cfg->tensor_float_32));
    } else if (key == "visible_device_list") {
      if (!v.IsScalar()) return fields.ErrorAt(v, "visible_device_list must be a string such as \"1,2\"");
      cfg->visible_device_list = v.ScalarString();
    } else if (key == "per_process_gpu_memory_fraction") {
      TFRUN_RETURN_IF_ERROR(fields.ReadDouble(v, key, &cfg->per_process_gpu_memory_fraction));
      if (cfg->per_process_gpu_memory_fraction < 0) {
        return fields.ErrorAt(v, "per_process_gpu_memory_fraction must not be negative");
      }
    } else if (key == "intra_op_parallelism_threads") {
      TFRUN_RETURN_IF_ERROR(ReadThreads(fields, v, key, &cfg->intra_op_parallelism_threads));
    } else if (key == "inter_op_parallelism_threads") {
      TFRUN_RETURN_IF_ERROR(ReadThreads(fields, v, key, &cfg->inter_op_parallelism_threads));
    } else if (key == "virtual_devices") {
      TFRUN_RETURN_IF_ERROR(ReadVirtualDevices(fields, v, cfg));
    } else if (key == "device_count") {
      TFRUN_RETURN_IF_ERROR(ReadDeviceCount(fields, v, cfg));
    } else if (key == "cluster") {
      TFRUN_RETURN_IF_ERROR(ReadCluster(fields, v, cfg));
    } else if (key == "operation_timeout_in_ms") {
      TFRUN_RETURN_IF_ERROR(fields.ReadInt(v, key, 1, int64_t{1} << 40, &cfg->operation_timeout_in_ms));
    }
  }
  return Status::Ok();
}

}  // namespace tfrun
