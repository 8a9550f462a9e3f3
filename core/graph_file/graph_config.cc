#include "core/graph_file/graph_config.h"

#include <fmt/format.h>

namespace tfrun {
namespace {

const std::vector<std::string> kConfigKeys = {"log_device_placement",
                                              "allow_soft_placement",
                                              "visible_device_list",
                                              "allow_growth",
                                              "per_process_gpu_memory_fraction",
                                              "virtual_devices",
                                              "tensor_float_32",
                                              "intra_op_parallelism_threads",
                                              "inter_op_parallelism_threads"};

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
    }
  }
  return Status::Ok();
}

}  // namespace tfrun
