#include "core/graph_file/yaml_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/base/did_you_mean.h"

namespace tfrun {

std::string FieldReader::Where(const YamlNode& n) const { return FormatLocation(path_, n.location()); }

Status FieldReader::ErrorAt(const YamlNode& n, std::string_view message) const {
  return LocatedError(ErrorKind::kBadInput, path_, n.location(), message);
}

Status FieldReader::NodeError(const YamlNode& n, std::string_view node_name, std::string_view message) const {
  return LocatedError(ErrorKind::kBadInput, path_, n.location(), fmt::format("node '{}': {}", node_name, message),
                      std::string(node_name));
}

Status FieldReader::FieldError(const YamlNode& n, std::string_view node_name, std::string_view message) const {
  return node_name.empty() ? ErrorAt(n, message) : NodeError(n, node_name, message);
}

Status FieldReader::CheckKeys(const YamlNode& map, const std::vector<std::string>& allowed,
                              std::string_view what) const {
  std::vector<std::string_view> seen;  // a handful of keys: a linear scan beats a set
  for (const YamlNode::Pair& pair : map.Pairs()) {
    if (!pair.key.IsScalar()) return ErrorAt(pair.key, fmt::format("{} keys must be strings", what));
    const std::string_view key = pair.key.Scalar();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return ErrorAt(pair.key, fmt::format("key '{}' appears twice in {}", key, what));
    }
    seen.push_back(key);
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    // A near miss gets its hint; anything else, where the keys are listed.
    std::string hint = DidYouMean(key, allowed);
    if (hint.empty()) hint = " (docs/graph-format.md lists the keys)";
    return ErrorAt(pair.key, fmt::format("unknown key '{}' in {}{}", ClipForMessage(key), what, hint));
  }
  return Status::Ok();
}

Status FieldReader::ReadBool(const YamlNode& n, std::string_view what, bool* out, std::string_view node_name) const {
  if (n.IsScalar() && !n.IsQuoted()) {
    const std::string_view s = n.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") {
      *out = true;
      return Status::Ok();
    }
    if (s == "false" || s == "False" || s == "FALSE") {
      *out = false;
      return Status::Ok();
    }
  }
  return FieldError(n, node_name, fmt::format("{} must be true or false", what));
}

Status FieldReader::ReadInt(const YamlNode& n, std::string_view what, int64_t lo, int64_t hi, int64_t* out,
                            std::string_view node_name) const {
  if (n.IsScalar() && !n.IsQuoted()) {
    const std::string_view s = n.Scalar();
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.data(), &end, 10);  // the document's scalars end in NUL
    if (!s.empty() && *end == '\0' && errno == 0 && v >= lo && v <= hi) {
      *out = v;
      return Status::Ok();
    }
  }
  return FieldError(n, node_name, fmt::format("{} must be an integer from {} to {}", what, lo, hi));
}

Status FieldReader::ReadDouble(const YamlNode& n, std::string_view what, double* out) const {
  if (n.IsScalar() && !n.IsQuoted()) {
    const std::string_view s = n.Scalar();
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.data(), &end);
    if (!s.empty() && *end == '\0' && errno == 0 && std::isfinite(v)) {
      *out = v;
      return Status::Ok();
    }
  }
  return ErrorAt(n, fmt::format("{} must be a finite number", what));
}

StatusOr<DType> FieldReader::ReadDType(const YamlNode& n, std::string_view node_name) const {
  std::vector<std::string> names;
  for (DType d : kAllDTypes) names.emplace_back(Name(d));
  if (!n.IsScalar()) {
    return FieldError(n, node_name, fmt::format("a dtype must be one of {}", fmt::join(names, ", ")));
  }
  if (std::optional<DType> d = ParseDType(n.ScalarString())) return *d;
  const std::string hint = ClosestMatch(n.Scalar(), names);
  return FieldError(n, node_name,
                    fmt::format("unknown dtype '{}'{} (one of {})", n.Scalar(),
                                hint.empty() ? "" : fmt::format(", did you mean '{}'?", hint), fmt::join(names, ", ")));
}

Status FieldReader::ReadShape(const YamlNode& n, std::string_view node_name, Shape* shape) const {
  return ReadDims(n, node_name, false, shape);
}

Status FieldReader::ReadPartialShape(const YamlNode& n, std::string_view node_name, Shape* shape) const {
  return ReadDims(n, node_name, true, shape);
}

Status FieldReader::ReadDims(const YamlNode& n, std::string_view node_name, bool partial, Shape* shape) const {
  if (!n.IsSequence()) {
    return NodeError(n, node_name,
                     partial ? "shape must be a list of dimensions, null for unknown ones, e.g. [null, 3]"
                             : "shape must be a list of dimensions, e.g. [2, 3]");
  }
  if (n.size() > static_cast<size_t>(kMaxRank)) {
    return NodeError(n, node_name, fmt::format("rank {} exceeds the maximum rank {}", n.size(), kMaxRank));
  }
  for (const YamlNode& d : n.Elements()) {
    if (partial && (d.IsNull() || (d.IsScalar() && d.Scalar() == "None"))) {
      shape->push_back(kUnknownDim);
      continue;
    }
    int64_t v = 0;
    Status s = ReadInt(d, "a dimension", 0, std::numeric_limits<int64_t>::max(), &v);
    if (!s.ok()) {
      return NodeError(
          d, node_name,
          fmt::format("dimension '{}' is not a non-negative 64-bit integer", d.IsScalar() ? d.Scalar() : "(a list)"));
    }
    shape->push_back(v);
  }
  Shape known;
  for (int64_t d : *shape) known.push_back(d == kUnknownDim ? 1 : d);
  if (!NumElements(known)) {
    return NodeError(n, node_name,
                     fmt::format("shape {} has more elements than fit in 64 bits", ShapeDebugString(*shape)));
  }
  return Status::Ok();
}

}  // namespace tfrun
