// The device types tfrun places on, each registered once with what
// TensorFlow's DeviceFactory registration says about it (its priority in
// candidate order) and which of tfrun's backends runs its kernels. Every
// other file asks here rather than spelling a type's properties itself.
#pragma once

#include <string_view>

namespace tfrun {

// The names of the types tfrun has backends for, as device names spell
// them; the table in device_types.cc says what each one is.
inline constexpr std::string_view kCpu = "CPU";
inline constexpr std::string_view kGpu = "GPU";
inline constexpr std::string_view kXlaCpu = "XLA_CPU";
inline constexpr std::string_view kXlaGpu = "XLA_GPU";

struct DeviceTypeInfo {
  std::string_view name;  // "GPU", as device names spell it
  // DeviceFactory::Register priority: GPU 210, CPU 70, the XLA devices 50.
  int priority;
  // The XLA devices TF_XLA_FLAGS=--tf_xla_enable_xla_devices adds: the
  // placer leaves them out of a group's candidates unless it asked for one
  // (ColocationGraph::MaybeExcludeXlaDevices).
  bool is_xla;
  // Whose kernel implementations run there: an XLA device's memory is its
  // host's (XLA_CPU) or its GPU's (XLA_GPU).
  std::string_view runs_kernels_of;
};

// nullptr for a type tfrun does not know.
const DeviceTypeInfo* FindDeviceType(std::string_view type);

// Whether there are XLA devices (XLA_CPU:0 and one XLA_GPU per GPU):
// TF_XLA_FLAGS's --tf_xla_enable_xla_devices (=true, =false; TensorFlow's
// own switch) where it says, else `by_default` (the era's default,
// CompatProfile::xla_devices_by_default).
bool XlaDevicesEnabled(bool by_default = false);

}  // namespace tfrun
