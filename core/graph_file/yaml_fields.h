// Typed fields of a graph file, and errors located at the YAML node they
// are about: "FILE:LINE:COLUMN: message", or "FILE:LINE:COLUMN: node 'n':
// message" while a graph node is being read (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/shape.h"
#include "core/base/status.h"
#include "core/graph_file/yaml_document.h"

namespace tfrun {

class FieldReader {
 public:
  explicit FieldReader(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  // "FILE:LINE:COLUMN", or FILE where the location is unknown.
  std::string Where(const YamlNode& n) const;

  Status ErrorAt(const YamlNode& n, std::string_view message) const;
  Status NodeError(const YamlNode& n, std::string_view node_name, std::string_view message) const;
  // NodeError, or ErrorAt for fields outside a node (`node_name` empty).
  Status FieldError(const YamlNode& n, std::string_view node_name, std::string_view message) const;

  // Unknown keys (with a "did you mean") and repeated keys, which YAML
  // readers would otherwise resolve silently; `what` names the mapping.
  Status CheckKeys(const YamlNode& map, const std::vector<std::string>& allowed, std::string_view what) const;

  // Unquoted true/True/TRUE or false/False/FALSE.
  Status ReadBool(const YamlNode& n, std::string_view what, bool* out, std::string_view node_name = "") const;
  Status ReadInt(const YamlNode& n, std::string_view what, int64_t lo, int64_t hi, int64_t* out,
                 std::string_view node_name = "") const;
  Status ReadDouble(const YamlNode& n, std::string_view what, double* out) const;
  StatusOr<DType> ReadDType(const YamlNode& n, std::string_view node_name) const;
  Status ReadShape(const YamlNode& n, std::string_view node_name, Shape* shape) const;
  // A shape whose dimensions may be unknown: null (or None) is kUnknownDim,
  // as tf.compat.v1.placeholder's shape=[None, 3].
  Status ReadPartialShape(const YamlNode& n, std::string_view node_name, Shape* shape) const;

 private:
  Status ReadDims(const YamlNode& n, std::string_view node_name, bool partial, Shape* shape) const;

  std::string path_;
};

}  // namespace tfrun
