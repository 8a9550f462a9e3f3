// Device names with TensorFlow's semantics: what Python's DeviceSpec
// accepts (tensorflow/python/framework/device_spec.py), printed and matched
// as DeviceNameUtils does (tensorflow/core/util/device_name_utils.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace tfrun {

struct DeviceSpec {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // "CPU", "GPU", or as written for others
  std::optional<int> id;

  // Accepts "/cpu:0", "/GPU:1", "/device:GPU:1", "GPU:0", "/device:gpu:0",
  // "/job:localhost/replica:0/task:0/device:GPU:1", wildcards ("*") and
  // partial specs. The error text quotes the string.
  static StatusOr<DeviceSpec> Parse(std::string_view text);

  // A fully specified local device.
  static DeviceSpec Local(std::string type, int id);

  bool empty() const { return !job && !replica && !task && !type && !id; }

  // Nested tf.device scopes: fields set here win, the rest come from outer.
  DeviceSpec MergedOver(const DeviceSpec& outer) const;

  // What soft placement retries with when nothing matches (placer.cc): the
  // device type and id cleared, job, replica and task kept.
  DeviceSpec SoftPlacementRelaxed() const;

  // True when every field set here equals the device's.
  bool Matches(const DeviceSpec& device) const;

  // DeviceNameUtils::ParsedNameToString: "/job:localhost/replica:0/task:0/
  // device:GPU:0", only the fields that are set ("/device:GPU:2").
  std::string ToString() const;

  // TF 0.x's legacy spelling of a full name: ".../task:0/gpu:0".
  std::string ToLegacyString() const;

  bool operator==(const DeviceSpec& o) const {
    return job == o.job && replica == o.replica && task == o.task &&
           type == o.type && id == o.id;
  }
};

}  // namespace tfrun
