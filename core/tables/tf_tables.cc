#include "core/tables/tf_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace tfrun {
namespace {

// core/tables/tf_ops.tsv (tools/gen_tf_tables.py describes its format).
constexpr char kTableBytes[] =
#include "core/tables/tf_ops_tsv.inc"
    ;
constexpr std::string_view kTable(kTableBytes, sizeof(kTableBytes) - 1);

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  if (text.empty()) return parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return c - 'a' + 10;
}

// A string value: %XX escapes undone.
std::string Unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(HexDigit(text[i + 1]) * 16 + HexDigit(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// Elements of a value: a scalar is one element; a list's are comma-separated.
std::vector<std::string> Items(std::string_view text, bool is_list) {
  std::vector<std::string> items;
  if (!is_list) {
    items.push_back(Unescape(text));
    return items;
  }
  for (std::string_view item : Split(text, ',')) items.push_back(Unescape(item));
  return items;
}

TfArgDef ParseArg(std::string_view text) {
  TfArgDef arg;
  const size_t colon = text.find(':');
  arg.name = text.substr(0, colon);
  std::string_view spec = text.substr(colon + 1);
  if (!spec.empty() && spec.back() == '&') {
    arg.is_ref = true;
    spec.remove_suffix(1);
  }
  if (spec.front() == '[') {
    arg.type_list_attr = spec.substr(1, spec.size() - 2);
    return arg;
  }
  if (const size_t star = spec.find('*'); star != std::string_view::npos) {
    arg.number_attr = spec.substr(0, star);
    spec = spec.substr(star + 1);
  }
  if (spec.front() == '=') {
    arg.type = spec.substr(1);
  } else {
    arg.type_attr = spec;
  }
  return arg;
}

// NAME:TYPE[=DEFAULT][@ALLOWED][>MINIMUM]; no separator appears inside a
// value (strings are %-escaped).
TfAttrDef ParseAttr(std::string_view text) {
  TfAttrDef attr;
  const size_t colon = text.find(':');
  attr.name = text.substr(0, colon);
  std::string_view rest = text.substr(colon + 1);
  if (const size_t gt = rest.find('>'); gt != std::string_view::npos) {
    attr.minimum = std::stoll(std::string(rest.substr(gt + 1)));
    rest = rest.substr(0, gt);
  }
  std::string_view allowed;
  bool has_allowed = false;
  if (const size_t at = rest.find('@'); at != std::string_view::npos) {
    allowed = rest.substr(at + 1);
    has_allowed = true;
    rest = rest.substr(0, at);
  }
  const size_t eq = rest.find('=');
  attr.type = rest.substr(0, eq);
  if (eq != std::string_view::npos) {
    AttrValue value;
    value.type = attr.type;
    value.items = Items(rest.substr(eq + 1), value.is_list());
    attr.default_value = std::move(value);
  }
  if (has_allowed) attr.allowed = Items(allowed, true);
  return attr;
}

// DEVICE_TYPE|PRIORITY|LABEL|HOST_MEMORY_ARGS|CONSTRAINTS
TfKernelDef ParseKernel(std::string_view text) {
  TfKernelDef kernel;
  if (!text.empty() && text.front() == '+') {
    kernel.needs_xla_devices = true;
    text.remove_prefix(1);
  }
  const std::vector<std::string_view> fields = Split(text, '|');
  kernel.device_type = fields[0];
  kernel.priority = std::stoi(std::string(fields[1]));
  kernel.label = fields[2];
  kernel.host_memory_args = Split(fields[3], ',');
  for (std::string_view c : Split(fields[4], ';')) {
    TfKernelConstraint constraint;
    const size_t colon = c.find(':');
    const size_t eq = c.find('=', colon);
    constraint.name = c.substr(0, colon);
    constraint.kind = c.substr(colon + 1, eq - colon - 1);
    constraint.encoded = c.substr(eq + 1);
    kernel.constraints.push_back(std::move(constraint));
  }
  return kernel;
}

std::unique_ptr<TfOpDef> ParseLine(std::string_view line) {
  const std::vector<std::string_view> fields = Split(line, '\t');
  auto op = std::make_unique<TfOpDef>();
  op->name = fields[0];
  for (std::string_view flag : Split(fields[1], ',')) {
    if (flag == "stateful") op->is_stateful = true;
    if (flag == "no_op_def") op->has_op_def = false;
  }
  for (std::string_view a : Split(fields[2], ';')) op->inputs.push_back(ParseArg(a));
  for (std::string_view a : Split(fields[3], ';')) op->outputs.push_back(ParseArg(a));
  for (std::string_view a : Split(fields[4], ';')) op->attrs.push_back(ParseAttr(a));
  for (size_t i = 5; i < fields.size(); ++i) {
    if (!fields[i].empty() && fields[i].front() == '@') {
      for (std::string_view index : Split(fields[i].substr(1), ',')) {
        op->xla_listing_order.push_back(std::stoi(std::string(index)));
      }
      continue;
    }
    op->kernels.push_back(ParseKernel(fields[i]));
  }
  return op;
}

std::string_view LineAt(size_t offset, size_t* start) {
  *start = kTable.rfind('\n', offset == 0 ? 0 : offset - 1);
  *start = *start == std::string_view::npos || offset == 0 ? 0 : *start + 1;
  size_t end = kTable.find('\n', *start);
  if (end == std::string_view::npos) end = kTable.size();
  return kTable.substr(*start, end - *start);
}

std::string_view NameOf(std::string_view line) { return line.substr(0, line.find('\t')); }

// The op's line, found by binary search over the byte offsets of the
// sorted table; empty if absent.
std::string_view FindLine(std::string_view op) {
  size_t lo = 0, hi = kTable.size();  // the line is within [lo, hi)
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    size_t start = 0;
    const std::string_view line = LineAt(mid, &start);
    const bool header = !line.empty() && line.front() == '#';  // the header lines sort first
    if (!header && NameOf(line) == op) return line;
    if (header || NameOf(line) < op) {
      lo = start + line.size() + 1;
    } else {
      hi = start;
    }
  }
  return {};
}

struct Cache {
  std::mutex mutex;
  // Keyed by views of the table's own bytes; unknown names are not kept.
  std::unordered_map<std::string_view, std::unique_ptr<TfOpDef>> ops;
};

Cache& TheCache() {
  static Cache* cache = new Cache();  // never destroyed: results outlive static destructors
  return *cache;
}

bool AttrMatches(const TfKernelConstraint& constraint, const AttrValue& value) {
  for (const std::string& item : value.items) {
    if (!constraint.Allows(item)) return false;
  }
  return true;
}

// KernelAttrsMatch: every constraint's attr present and allowed.
StatusOr<bool> KernelMatches(const TfOpDef& op, const TfKernelDef& kernel, const NodeAttrs& attrs) {
  for (const TfKernelConstraint& c : kernel.constraints) {
    auto it = attrs.find(c.name);
    if (it == attrs.end()) {
      return PlacementError(fmt::format("OpKernel '{}' has constraint on attr '{}' not in NodeDef '[{}]', "
                                         "KernelDef: '{}'",
                                         op.name, c.name, SummarizeAttrs(attrs), kernel.device_type));
    }
    if (!AttrMatches(c, it->second)) return false;
  }
  return true;
}

// The table's type names and Python's (tf.dtypes.as_dtype(x).name), which
// tfrun's dtypes share (dtype.h).
std::string_view const kTypeNames[][2] = {
    {"FLOAT", "float32"},
    {"DOUBLE", "float64"},
    {"HALF", "float16"},
    {"BFLOAT16", "bfloat16"},
    {"INT32", "int32"},
    {"INT64", "int64"},
    {"BOOL", "bool"},
    {"STRING", "string"},
    {"UINT8", "uint8"},
    {"INT16", "int16"},
    {"INT8", "int8"},
    {"COMPLEX64", "complex64"},
    {"COMPLEX128", "complex128"},
    {"QINT8", "qint8"},
    {"QUINT8", "quint8"},
    {"QINT32", "qint32"},
    {"QINT16", "qint16"},
    {"QUINT16", "quint16"},
    {"UINT16", "uint16"},
    {"UINT32", "uint32"},
    {"UINT64", "uint64"},
    {"RESOURCE", "resource"},
    {"VARIANT", "variant"},
    {"FLOAT8_E5M2", "float8_e5m2"},
    {"FLOAT8_E4M3FN", "float8_e4m3fn"},
    {"FLOAT8_E4M3FNUZ", "float8_e4m3fnuz"},
    {"FLOAT8_E4M3B11FNUZ", "float8_e4m3b11fnuz"},
    {"FLOAT8_E5M2FNUZ", "float8_e5m2fnuz"},
    {"INT4", "int4"},
    {"UINT4", "uint4"},
    {"INT2", "int2"},
    {"UINT2", "uint2"},
    {"FLOAT4_E2M1FN", "float4_e2m1fn"},
};

// absl::CEscape, as SummarizeString quotes strings.
std::string CEscape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += fmt::format("\\{:03o}", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

std::string SummarizeString(std::string_view s) {
  const std::string escaped = CEscape(s);
  if (escaped.size() >= 80) {
    return fmt::format("\"{}...{}\"", escaped.substr(0, 10), escaped.substr(escaped.size() - 10));
  }
  return "\"" + escaped + "\"";
}

// One element as SummarizeAttrValue prints it; `type` is the element type.
std::string SummarizeItem(std::string_view type, const std::string& item) {
  if (type == "type") return "DT_" + item;
  if (type == "string") return SummarizeString(item);
  if (type == "shape") {
    if (item == "?") return "<unknown>";
    std::string dims = item.substr(1, item.size() - 2);
    std::vector<std::string> out;
    for (std::string_view d : Split(dims, 'x')) out.push_back(d == "-1" ? "?" : std::string(d));
    return "[" + fmt::format("{}", fmt::join(out, ",")) + "]";
  }
  return item;
}

}  // namespace

std::vector<std::string> TfKernelConstraint::allowed() const { return Items(encoded, true); }

bool TfKernelConstraint::Allows(std::string_view value) const {
  // Only strings carry %-escapes; types, ints and bools compare as written.
  const bool escaped = kind == "string" && encoded.find('%') != std::string_view::npos;
  size_t start = 0;
  while (start <= encoded.size()) {
    size_t end = encoded.find(',', start);
    if (end == std::string_view::npos) end = encoded.size();
    const std::string_view item = encoded.substr(start, end - start);
    if (escaped ? Unescape(item) == value : item == value) return true;
    start = end + 1;
  }
  return false;
}

const TfAttrDef* TfOpDef::FindAttr(std::string_view attr) const {
  for (const TfAttrDef& a : attrs) {
    if (a.name == attr) return &a;
  }
  return nullptr;
}

const TfOpDef* FindTfOp(std::string_view op) {
  Cache& cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.ops.find(op);
  if (it != cache.ops.end()) return it->second.get();
  const std::string_view line = FindLine(op);
  if (line.empty()) return nullptr;
  std::unique_ptr<TfOpDef> parsed = ParseLine(line);
  const std::string_view key = parsed->name;  // outlives the caller's `op`
  return cache.ops.emplace(key, std::move(parsed)).first->second.get();
}

std::vector<std::string_view> AllTfOpNames() {
  std::vector<std::string_view> names;
  size_t start = 0;
  while (start < kTable.size()) {
    size_t end = kTable.find('\n', start);
    if (end == std::string_view::npos) end = kTable.size();
    const std::string_view line = kTable.substr(start, end - start);
    if (!line.empty() && line.front() != '#') names.push_back(NameOf(line));
    start = end + 1;
  }
  return names;
}

std::string_view TfTablesVersion() {
  // "# TensorFlow 2.21.0 (...": the first line names the version.
  constexpr std::string_view kPrefix = "# TensorFlow ";
  const std::string_view rest = kTable.substr(kPrefix.size());
  return rest.substr(0, rest.find(' '));
}

std::string_view TableTypeName(DType dtype) {
  for (const auto& row : kTypeNames) {
    if (row[1] == Name(dtype)) return row[0];
  }
  return {};
}

std::optional<DType> DTypeOfTableType(std::string_view table_type) {
  if (table_type == "VARIANT") return DType::kVariant;
  return ParseDType(PythonDTypeName(table_type));
}

std::string PythonDTypeName(std::string_view table_type) {
  for (const auto& row : kTypeNames) {
    if (row[0] == table_type) return std::string(row[1]);
  }
  std::string lower(table_type);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

void AddDefaultAttrs(const TfOpDef& op, NodeAttrs* attrs) {
  for (const TfAttrDef& a : op.attrs) {
    if (a.default_value && attrs->find(a.name) == attrs->end()) attrs->emplace(a.name, *a.default_value);
  }
}

namespace {

// DataTypeString of a table type: "float", "float_ref".
std::string LowerType(std::string_view table_type) {
  std::string out(table_type);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// op_def_util.cc ValidateAttrValue, for one attr of the OpDef.
std::string AttrValueError(const TfAttrDef& def, const AttrValue& value) {
  const bool type_kind = def.type == "type" || def.type == "list(type)";
  if (type_kind) {
    for (const std::string& t : value.items) {
      if (t.size() > 4 && t.compare(t.size() - 4, 4, "_REF") == 0) {
        return fmt::format("AttrValue must not have reference type value of {} for attr '{}'", LowerType(t),
                           def.name);
      }
    }
  }
  if (def.minimum) {
    if (def.type == "int") {
      const int64_t v = std::strtoll(value.items.empty() ? "0" : value.items[0].c_str(), nullptr, 10);
      if (v < *def.minimum) {
        return fmt::format("Value for attr '{}' of {} must be at least minimum {}", def.name, v, *def.minimum);
      }
    } else if (static_cast<int64_t>(value.items.size()) < *def.minimum) {
      return fmt::format("Length for attr '{}' of {} must be at least minimum {}", def.name, value.items.size(),
                         *def.minimum);
    }
  }
  if (def.allowed.empty()) return "";
  const bool string_kind = def.type == "string" || def.type == "list(string)";
  if (!type_kind && !string_kind) return "";
  for (const std::string& item : value.items) {
    if (std::find(def.allowed.begin(), def.allowed.end(), item) != def.allowed.end()) continue;
    std::vector<std::string> allowed;
    for (const std::string& a : def.allowed) allowed.push_back(type_kind ? LowerType(a) : "\"" + a + "\"");
    return fmt::format("Value for attr '{}' of {} is not in the list of allowed values: {}", def.name,
                       type_kind ? LowerType(item) : "\"" + ClipForMessage(item) + "\"", fmt::join(allowed, ", "));
  }
  return "";
}

}  // namespace

std::string NodeDefAttrError(const TfOpDef& op, const NodeAttrs& attrs) {
  for (const auto& [name, value] : attrs) {
    const TfAttrDef* def = op.FindAttr(name);
    if (def == nullptr) continue;
    if (std::string error = AttrValueError(*def, value); !error.empty()) return error;
  }
  for (const TfAttrDef& def : op.attrs) {
    if (attrs.find(def.name) == attrs.end()) return fmt::format("NodeDef missing attr '{}' from Op<name={}>", def.name, op.name);
  }
  return "";
}

StatusOr<const TfKernelDef*> FindKernelDef(const TfOpDef& op, std::string_view device_type, const NodeAttrs& attrs,
                                           bool xla_devices, std::string_view label) {
  // FindKernelRegistration: the device type's own kernels first; DEFAULT
  // ones only if none of those matched.
  for (std::string_view type : {device_type, std::string_view("DEFAULT")}) {
    const TfKernelDef* best = nullptr;
    for (const TfKernelDef& k : op.kernels) {
      if (k.device_type != type || k.label != label || (k.needs_xla_devices && !xla_devices)) continue;
      TFRUN_ASSIGN_OR_RETURN(const bool matches, KernelMatches(op, k, attrs));
      if (!matches) continue;
      if (best != nullptr && best->priority == k.priority) {
        return PlacementError(
            type == "DEFAULT"
                ? fmt::format("Multiple Default OpKernel registrations match NodeDef '[{}]': '{}' and '{}'",
                              SummarizeAttrs(attrs), op.name, op.name)
                : fmt::format("Multiple OpKernel registrations match NodeDef at the same priority '{}': '{}' "
                              "and '{}'",
                              k.priority, op.name, op.name));
      }
      if (best == nullptr || k.priority > best->priority) best = &k;
    }
    if (best != nullptr) return best;
  }
  return static_cast<const TfKernelDef*>(nullptr);
}

StatusOr<std::vector<std::pair<std::string_view, int>>> SupportedDeviceTypes(
    const TfOpDef& op, const std::vector<std::string_view>& types, const NodeAttrs& attrs, bool xla_devices) {
  std::vector<std::pair<std::string_view, int>> out;
  for (std::string_view type : types) {
    TFRUN_ASSIGN_OR_RETURN(const TfKernelDef* k, FindKernelDef(op, type, attrs, xla_devices));
    if (k != nullptr) out.emplace_back(type, k->priority);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string KernelsRegisteredForOp(const TfOpDef& op, bool xla_devices) {
  std::vector<int> order;
  if (xla_devices && !op.xla_listing_order.empty()) {
    order = op.xla_listing_order;
  } else {
    for (size_t i = 0; i < op.kernels.size(); ++i) order.push_back(static_cast<int>(i));
  }
  std::string out;
  for (int i : order) {
    const TfKernelDef& k = op.kernels[i];
    if (k.needs_xla_devices && !xla_devices) continue;
    out += fmt::format("  device='{}'", k.device_type);
    if (!k.label.empty()) out += fmt::format("; label='{}'", k.label);
    for (const TfKernelConstraint& c : k.constraints) {
      AttrValue allowed;
      allowed.type = c.kind == "type"     ? "list(type)"
                     : c.kind == "string" ? "list(string)"
                     : c.kind == "bool"   ? "list(bool)"
                                          : "list(int)";
      allowed.items = c.allowed();
      out += fmt::format("; {} in {}", c.name, SummarizeAttrValue(allowed));
    }
    out += "\n";
  }
  return out.empty() ? "  <no registered kernels>\n" : out;
}

std::string SummarizeAttrValue(const AttrValue& value) {
  if (!value.is_list()) return value.items.empty() ? "" : SummarizeItem(value.type, value.items[0]);
  const std::string_view element = value.type.substr(5, value.type.size() - 6);
  std::vector<std::string> pieces;
  for (const std::string& item : value.items) pieces.push_back(SummarizeItem(element, item));
  return fmt::format("[{}]", fmt::join(pieces, ", "));
}

std::string SummarizeAttrs(const NodeAttrs& attrs) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : attrs) parts.push_back(fmt::format("{}={}", name, SummarizeAttrValue(value)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace tfrun
