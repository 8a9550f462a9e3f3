#include "core/base/device_types.h"

#include <cstdlib>
#include <sstream>
#include <string>

namespace tfrun {
namespace {

constexpr DeviceTypeInfo kDeviceTypes[] = {
    {/*.name=*/kGpu, /*.priority=*/210, /*.is_xla=*/false, /*.runs_kernels_of=*/kGpu},
    {/*.name=*/kCpu, /*.priority=*/70, /*.is_xla=*/false, /*.runs_kernels_of=*/kCpu},
    {/*.name=*/kXlaCpu, /*.priority=*/50, /*.is_xla=*/true, /*.runs_kernels_of=*/kCpu},
    {/*.name=*/kXlaGpu, /*.priority=*/50, /*.is_xla=*/true, /*.runs_kernels_of=*/kGpu},
};

}  // namespace

const DeviceTypeInfo* FindDeviceType(std::string_view type) {
  for (const DeviceTypeInfo& t : kDeviceTypes) {
    if (t.name == type) return &t;
  }
  return nullptr;
}

bool XlaDevicesEnabled(bool by_default) {
  const char* flags = std::getenv("TF_XLA_FLAGS");
  if (flags == nullptr) return by_default;
  // Flags are whitespace-separated; a boolean flag is on alone or =true/=1.
  std::istringstream words(flags);
  bool enabled = by_default;
  for (std::string word; words >> word;) {
    if (word == "--tf_xla_enable_xla_devices" || word == "--tf_xla_enable_xla_devices=true" ||
        word == "--tf_xla_enable_xla_devices=1") {
      enabled = true;
    } else if (word == "--tf_xla_enable_xla_devices=false" || word == "--tf_xla_enable_xla_devices=0") {
      enabled = false;
    }
  }
  return enabled;
}

}  // namespace tfrun
