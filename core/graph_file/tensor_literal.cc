#include "core/graph_file/tensor_literal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/base/npy.h"
#include "core/base/parallel.h"
#include "core/base/random.h"

namespace tfrun {
namespace {

const std::vector<std::string> kRandomKeys = {"distribution", "min", "max", "mean", "stddev", "seed"};

// A literal value list longer than this is refused: YAML lists that long
// only come from alias bombs (npy, fill and random have no such limit).
constexpr int64_t kMaxLiteralElements = int64_t{1} << 20;

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (s == w) return true;
  }
  return false;
}

// The Python scalar the YAML scalar `text` stands for, as TF2 eager's
// scalar cache keys it (pywrap_tensor_conversion.h: equal values of the
// same Python type).
void SetPythonScalar(std::string_view text, DType dtype, double f, int64_t i, bool b, ConstLiteral* literal) {
  using Python = ConstLiteral::Python;
  if (dtype == DType::kBool) {
    literal->python = Python::kBool;
    literal->int_value = b ? 1 : 0;
    return;
  }
  std::string_view digits = text;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
  const bool is_int = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (Info(dtype).is_integer || is_int) {
    if (Info(dtype).is_integer) {
      literal->int_value = i;
    } else {
      errno = 0;
      char* end = nullptr;
      const long long v = std::strtoll(std::string(text).c_str(), &end, 10);
      if (errno == ERANGE) return;  // a Python int beyond int64: left uncached
      literal->int_value = v;
    }
    literal->python = Python::kInt;
    return;
  }
  if (!std::isfinite(f)) return;  // non-finite floats are not cached
  literal->python = Python::kFloat;
  literal->float_value = f == 0 ? 0.0 : f;
}

}  // namespace

Status TensorLiteralReader::Read(const YamlNode& entry, const std::string& node_name, Node* node) {
  DType dtype = DType::kFloat32;
  if (const YamlNode d = entry["dtype"]) {
    TFRUN_ASSIGN_OR_RETURN(dtype, fields_.ReadDType(d, node_name));
  }
  std::optional<Shape> shape;
  if (const YamlNode s = entry["shape"]) {
    shape.emplace();
    TFRUN_RETURN_IF_ERROR(fields_.ReadShape(s, node_name, &*shape));
  }
  std::vector<std::string> sources;
  for (const char* key : {"value", "fill", "random", "npy"}) {
    if (entry[key]) sources.emplace_back(key);
  }
  if (sources.size() != 1) {
    return fields_.NodeError(entry, node_name,
                             sources.empty() ? "needs its data: one of value, fill, random or npy"
                                             : fmt::format("give only one of value, fill, random or npy (got {})",
                                                           fmt::join(sources, ", ")));
  }
  const std::string& source = sources[0];
  const YamlNode src = entry[source];
  if (dtype == DType::kString && source != "value") {
    return fields_.NodeError(src, node_name, "a string constant takes value: a string or a list of strings");
  }
  if (source == "npy") return ReadNpy(src, node_name, dtype, entry["dtype"].defined(), shape, node);
  if (source == "value" && src.IsSequence()) return ReadValueList(src, node_name, dtype, shape, node);
  if (source == "value" || source == "fill") return ReadFilled(src, source, node_name, dtype, shape.value_or(Shape{}), node);
  return ReadRandom(src, node_name, dtype, shape.value_or(Shape{}), node);
}

Status TensorLiteralReader::ReadValue(const YamlNode& value, const std::string& node_name, DType dtype, Node* node) {
  if (value.IsSequence()) return ReadValueList(value, node_name, dtype, std::nullopt, node);
  return ReadFilled(value, "value", node_name, dtype, Shape{}, node);
}

Status TensorLiteralReader::ReadValueList(const YamlNode& src, const std::string& node_name, DType dtype,
                                          std::optional<Shape> shape, Node* node) {
  std::vector<Scalar> leaves;
  Shape nested;
  int leaf_depth = -1;
  TFRUN_RETURN_IF_ERROR(
      Flatten(src, node_name, dtype, 0, shape ? NumElements(*shape).value() : -1, &leaves, &nested, &leaf_depth));
  if (leaf_depth >= 0 && static_cast<int>(nested.size()) != leaf_depth + 1) {
    return fields_.NodeError(src, node_name, "value is ragged: numbers and lists mixed at one level");
  }
  if (!shape) {
    shape = nested;
  } else if (nested != *shape && !(nested.size() == 1 && nested[0] == NumElements(*shape).value())) {
    return fields_.NodeError(
        src, node_name,
        fmt::format("value has shape {} ({} elements) but shape is {} ({} elements)", ShapeDebugString(nested),
                    leaves.size(), ShapeDebugString(*shape), NumElements(*shape).value()));
  }
  if (dtype == DType::kString) {
    TFRUN_RETURN_IF_ERROR(AllocateStrings(src, node_name, *shape, leaves, node));
  } else {
    TFRUN_RETURN_IF_ERROR(Allocate(src, node_name, dtype, *shape, node));
    for (size_t i = 0; i < leaves.size(); ++i) Store(leaves[i], node->value, i);
  }
  node->literal.form = nested == *shape ? ConstLiteral::Form::kNested : ConstLiteral::Form::kFlat;
  return Status::Ok();
}

Status TensorLiteralReader::ReadFilled(const YamlNode& src, const std::string& source, const std::string& node_name,
                                       DType dtype, const Shape& shape, Node* node) {
  if (!src.IsScalar()) {
    return fields_.NodeError(src, node_name,
                             fmt::format("{} must be a number{}", source, source == "value" ? " or a list" : ""));
  }
  Scalar v;
  TFRUN_RETURN_IF_ERROR(ParseElement(src, node_name, dtype, &v));
  if (dtype == DType::kString) {
    node->literal.form = ConstLiteral::Form::kScalar;
    return AllocateStrings(src, node_name, shape, {v}, node);
  }
  TFRUN_RETURN_IF_ERROR(Allocate(src, node_name, dtype, shape, node));
  node->literal.form = ConstLiteral::Form::kScalar;
  SetPythonScalar(src.Scalar(), dtype, v.f, v.i, v.b, &node->literal);
  if (node->value.num_elements() == 0) return Status::Ok();
  Store(v, node->value, 0);
  const size_t elem = Info(dtype).size;
  char* base = static_cast<char*>(node->value.raw());
  ParallelFor(node->value.num_elements(), [&](int64_t begin, int64_t end) {
    for (int64_t i = std::max<int64_t>(begin, 1); i < end; ++i) std::memcpy(base + i * elem, base, elem);
  });
  return Status::Ok();
}

// Flattens a nested value list, parsing each element as `dtype` and
// inferring the shape. Rectangular means: every list at one depth has the
// same length and every number sits at the same depth.
Status TensorLiteralReader::Flatten(const YamlNode& n, const std::string& node_name, DType dtype, int depth,
                                    int64_t expected, std::vector<Scalar>* leaves, Shape* shape,
                                    int* leaf_depth) const {
  if (depth >= kMaxRank) {
    return fields_.NodeError(n, node_name, fmt::format("value nests deeper than the maximum rank {}", kMaxRank));
  }
  const int64_t size = static_cast<int64_t>(n.size());
  if (static_cast<int>(shape->size()) == depth) {
    shape->push_back(size);
  } else if ((*shape)[depth] != size) {
    return fields_.NodeError(
        n, node_name,
        fmt::format("value is ragged: a list of {} where lists of {} came before", size, (*shape)[depth]));
  }
  for (const YamlNode& child : n.Elements()) {
    if (child.IsSequence()) {
      TFRUN_RETURN_IF_ERROR(Flatten(child, node_name, dtype, depth + 1, expected, leaves, shape, leaf_depth));
      continue;
    }
    if (*leaf_depth < 0) *leaf_depth = depth;
    if (*leaf_depth != depth || static_cast<int>(shape->size()) != depth + 1) {
      return fields_.NodeError(child, node_name, "value is ragged: numbers and lists mixed at one level");
    }
    if (expected >= 0 && static_cast<int64_t>(leaves->size()) == expected) {
      return fields_.NodeError(child, node_name,
                               fmt::format("value has more than the {} elements its shape holds", expected));
    }
    if (static_cast<int64_t>(leaves->size()) == kMaxLiteralElements) {
      return fields_.NodeError(
          child, node_name,
          fmt::format("value lists more than {} elements; use npy, fill or random", kMaxLiteralElements));
    }
    Scalar v;
    TFRUN_RETURN_IF_ERROR(ParseElement(child, node_name, dtype, &v));
    leaves->push_back(v);
  }
  return Status::Ok();
}

Status TensorLiteralReader::OverBudget(const YamlNode& where, const std::string& node_name) const {
  return fields_.NodeError(where, node_name,
                           fmt::format("constants would need more than {} bytes (the tensor-bytes limit, "
                                       "--max-tensor-bytes)",
                                       max_tensor_bytes_));
}

Status TensorLiteralReader::Allocate(const YamlNode& where, const std::string& node_name, DType dtype,
                                     const Shape& shape, Node* node) {
  const int64_t n = NumElements(shape).value();
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(Info(dtype).size), &bytes)) {
    return fields_.NodeError(
        where, node_name,
        fmt::format("shape {} of {} needs more bytes than fit in 64 bits", ShapeDebugString(shape), Name(dtype)));
  }
  if (total_bytes_ + bytes > max_tensor_bytes_) return OverBudget(where, node_name);
  total_bytes_ += bytes;
  StatusOr<Tensor> t = Tensor::AllocateHost(dtype, shape);
  if (!t.ok()) return fields_.NodeError(where, node_name, t.status().message());
  node->value = std::move(*t);
  node->dtype = dtype;
  node->shape = shape;
  return Status::Ok();
}

Status TensorLiteralReader::AllocateStrings(const YamlNode& where, const std::string& node_name, const Shape& shape,
                                            const std::vector<Scalar>& leaves, Node* node) {
  const int64_t n = NumElements(shape).value();
  // A scalar filling a shape repeats its one element.
  const auto element = [&](int64_t i) -> std::string_view { return leaves.size() == 1 ? leaves[0].text : leaves[i].text; };
  int64_t bytes = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (__builtin_add_overflow(bytes, static_cast<int64_t>(element(i).size() + sizeof(uint64_t)), &bytes) ||
        total_bytes_ + bytes > max_tensor_bytes_) {
      return OverBudget(where, node_name);
    }
  }
  total_bytes_ += bytes;
  StatusOr<Tensor> t = Tensor::FromStringElements(shape, element);
  if (!t.ok()) return fields_.NodeError(where, node_name, t.status().message());
  node->value = std::move(*t);
  node->dtype = DType::kString;
  node->shape = shape;
  return Status::Ok();
}

// Parses one YAML scalar as a value of `dtype`.
Status TensorLiteralReader::ParseElement(const YamlNode& n, const std::string& node_name, DType dtype,
                                         Scalar* out) const {
  if (dtype == DType::kString) {
    // Any scalar is its text's bytes (UTF-8, as Python encodes a str).
    if (!n.IsScalar()) return fields_.NodeError(n, node_name, "each value must be a string");
    out->text = n.Scalar();
    return Status::Ok();
  }
  if (!n.IsScalar()) return fields_.NodeError(n, node_name, "each value must be a number");
  const std::string_view s = n.Scalar();
  if (n.IsQuoted()) return fields_.NodeError(n, node_name, fmt::format("value '{}' is a string, not a number", s));
  if (dtype == DType::kBool) {
    if (IsOneOf(s, {"true", "True", "TRUE"})) {
      out->b = true;
      return Status::Ok();
    }
    if (IsOneOf(s, {"false", "False", "FALSE"})) {
      out->b = false;
      return Status::Ok();
    }
    return fields_.NodeError(n, node_name, fmt::format("value '{}' is not a bool (true or false)", s));
  }
  if (Info(dtype).is_integer) {
    char* end = nullptr;
    errno = 0;
    // The document's scalars end in NUL. uint64 reads its whole range (its
    // bits kept in the int64 field), a minus sign refused.
    const bool is_u64 = dtype == DType::kUInt64;
    const long long v = is_u64 ? static_cast<long long>(std::strtoull(s.data(), &end, 10))
                               : std::strtoll(s.data(), &end, 10);
    if (s.empty() || *end != '\0') {
      return fields_.NodeError(n, node_name,
                               fmt::format("value '{}' is not an integer, as {} needs", s, Name(dtype)));
    }
    bool fits = errno != ERANGE;
    if (dtype == DType::kInt32) fits = fits && v >= INT32_MIN && v <= INT32_MAX;
    if (dtype == DType::kUInt8) fits = fits && v >= 0 && v <= UINT8_MAX;
    if (is_u64) fits = fits && s.find('-') == std::string_view::npos;
    if (!fits) return fields_.NodeError(n, node_name, fmt::format("value {} does not fit {}", s, Name(dtype)));
    out->i = v;
    return Status::Ok();
  }
  std::string_view body = s;
  double sign = 1;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    sign = body[0] == '-' ? -1 : 1;
    body = body.substr(1);
  }
  if (IsOneOf(body, {"nan", "NaN", "NAN", ".nan", ".NaN", ".NAN"})) {
    out->f = std::numeric_limits<double>::quiet_NaN();
    return Status::Ok();
  }
  if (IsOneOf(body, {"inf", "Inf", "INF", ".inf", ".Inf", ".INF", "infinity", "Infinity"})) {
    out->f = sign * std::numeric_limits<double>::infinity();
    return Status::Ok();
  }
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.data(), &end);
  if (s.empty() || *end != '\0' || std::isnan(v) || std::isinf(v) || s.find_first_of("xX") != std::string::npos) {
    if (errno == ERANGE || std::isinf(v)) {
      return fields_.NodeError(n, node_name, fmt::format("value {} does not fit {}", s, Name(dtype)));
    }
    return fields_.NodeError(n, node_name, fmt::format("value '{}' is not a number", s));
  }
  const double max = dtype == DType::kFloat32    ? std::numeric_limits<float>::max()
                     : dtype == DType::kFloat16  ? 65504.0
                     : dtype == DType::kBFloat16 ? 3.3895313892515355e38
                                                 : std::numeric_limits<double>::max();
  // Values that round to the largest finite value still fit.
  double rounded = dtype == DType::kFloat32   ? static_cast<double>(static_cast<float>(v))
                   : dtype == DType::kFloat16 ? static_cast<double>(static_cast<float>(Eigen::half(v)))
                   : dtype == DType::kBFloat16
                       ? static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(v))))
                       : v;
  if (std::isinf(rounded) || std::fabs(rounded) > max) {
    return fields_.NodeError(n, node_name, fmt::format("value {} does not fit {}", s, Name(dtype)));
  }
  out->f = v;
  return Status::Ok();
}

void TensorLiteralReader::Store(const Scalar& v, Tensor& t, int64_t index) {
  DispatchDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      t.data<T>()[index] = v.b;
    } else if constexpr (std::is_integral_v<T>) {
      t.data<T>()[index] = static_cast<T>(v.i);
    } else if constexpr (std::is_same_v<T, double>) {
      t.data<T>()[index] = v.f;
    } else {
      t.data<T>()[index] = T(static_cast<float>(v.f));  // float32, and via float for 16-bit types
    }
  });
}

Status TensorLiteralReader::ReadRandom(const YamlNode& r, const std::string& node_name, DType dtype,
                                       const Shape& shape, Node* node) {
  if (!r.IsMap()) {
    return fields_.NodeError(r, node_name,
                             "random must be a mapping such as {distribution: uniform, min: 0, max: 1, seed: 7}");
  }
  TFRUN_RETURN_IF_ERROR(fields_.CheckKeys(r, kRandomKeys, "random"));
  std::string dist = "uniform";
  if (const YamlNode d = r["distribution"]) {
    if (!d.IsScalar() || (d.Scalar() != "uniform" && d.Scalar() != "normal")) {
      return fields_.NodeError(d, node_name, "distribution must be uniform or normal");
    }
    dist = d.ScalarString();
  }
  if (dist == "uniform" && (r["mean"] || r["stddev"])) {
    return fields_.NodeError(r, node_name, "uniform takes min and max, not mean or stddev");
  }
  if (dist == "normal" && (r["min"] || r["max"])) {
    return fields_.NodeError(r, node_name, "normal takes mean and stddev, not min or max");
  }
  if (dtype == DType::kBool || dtype == DType::kUInt8 || dtype == DType::kUInt64) {
    return fields_.NodeError(r, node_name, "random needs a float, int32 or int64 dtype");
  }
  if (dist == "normal" && Info(dtype).is_integer) {
    return fields_.NodeError(r, node_name, "a normal distribution needs a float dtype");
  }
  double a = 0, b = 1;  // min/max or mean/stddev
  int64_t seed = 0;
  auto read = [&](const char* key, double* out) -> Status {
    if (const YamlNode v = r[key]) {
      Status s = fields_.ReadDouble(v, key, out);
      if (!s.ok()) return fields_.NodeError(v, node_name, fmt::format("{} must be a finite number", key));
    }
    return Status::Ok();
  };
  TFRUN_RETURN_IF_ERROR(read(dist == "uniform" ? "min" : "mean", &a));
  TFRUN_RETURN_IF_ERROR(read(dist == "uniform" ? "max" : "stddev", &b));
  if (const YamlNode s = r["seed"]) {
    TFRUN_RETURN_IF_ERROR(fields_.ReadInt(s, "seed", 0, std::numeric_limits<int64_t>::max(), &seed, node_name));
  }
  if (dist == "uniform" && !(a < b)) return fields_.NodeError(r, node_name, "uniform needs min < max");
  if (dist == "normal" && b < 0) return fields_.NodeError(r, node_name, "stddev must not be negative");
  TFRUN_RETURN_IF_ERROR(Allocate(r, node_name, dtype, shape, node));
  const uint64_t useed = static_cast<uint64_t>(seed);
  const bool uniform = dist == "uniform";
  DispatchDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = node->value.data<T>();
    ParallelFor(node->value.num_elements(), [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        if constexpr (std::is_integral_v<T>) {
          // [min, max) like tf.random.uniform for integers.
          const double lo = std::ceil(a), span = std::ceil(b) - lo;
          out[k] = static_cast<T>(lo + std::floor(UniformUnit(useed, k) * span));
        } else {
          double x = uniform ? a + (b - a) * UniformUnit(useed, k) : a + b * StandardNormal(useed, k);
          if constexpr (std::is_same_v<T, double>) {
            out[k] = x;
          } else {
            out[k] = T(static_cast<float>(x));
          }
        }
      }
    });
  });
  return Status::Ok();
}

Status TensorLiteralReader::ReadNpy(const YamlNode& src, const std::string& node_name, DType dtype, bool dtype_given,
                                    const std::optional<Shape>& shape, Node* node) {
  if (!src.IsScalar()) return fields_.NodeError(src, node_name, "npy must be a file path");
  const std::string file = src.ScalarString();
  const std::string path = !file.empty() && file[0] == '/' ? file : directory_ + file;
  StatusOr<Tensor> t = tfrun::ReadNpy(path);
  if (!t.ok()) return fields_.NodeError(src, node_name, t.status().message());
  if (dtype_given && t->dtype() != dtype) {
    return fields_.NodeError(src, node_name,
                             fmt::format("{} holds {} but dtype is {}", file, Name(t->dtype()), Name(dtype)));
  }
  if (shape && t->shape() != *shape) {
    return fields_.NodeError(src, node_name,
                             fmt::format("{} has shape {} but shape is {}", file, ShapeDebugString(t->shape()),
                                         ShapeDebugString(*shape)));
  }
  total_bytes_ += static_cast<int64_t>(t->num_bytes());
  if (total_bytes_ > max_tensor_bytes_) return OverBudget(src, node_name);
  node->dtype = t->dtype();
  node->shape = t->shape();
  node->value = std::move(*t);
  return Status::Ok();
}

}  // namespace tfrun
