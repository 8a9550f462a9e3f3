#include "core/printing/array_printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "core/printing/float_format.h"

namespace tfrun {
namespace {

using ElementFormatter = std::function<std::string(int64_t flat_index)>;

// ml_dtypes' bfloat16 is no np.floating: NumPy prints it with its repr,
// which is C++ `ostream << float` (6 significant digits, no padding).
std::string BFloat16Repr(double x) {
  if (std::isnan(x)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

std::string PythonBytesRepr(std::string_view bytes) {
  // bytes_repr (Objects/bytesobject.c): single quotes unless the bytes hold
  // a ' and no ".
  const bool has_single = bytes.find('\'') != std::string_view::npos;
  const char quote = has_single && bytes.find('"') == std::string_view::npos ? '"' : '\'';
  std::string out = "b";
  out += quote;
  for (unsigned char c : bytes) {
    if (c == quote || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

namespace {

// str() of an integer element, of any integer dtype.
std::string IntegerText(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt32: return std::to_string(t.data<int32_t>()[i]);
    case DType::kUInt8: return std::to_string(t.data<uint8_t>()[i]);
    case DType::kUInt64: return std::to_string(t.data<uint64_t>()[i]);
    default: return std::to_string(t.data<int64_t>()[i]);
  }
}

std::string ScalarStr(const Tensor& t, bool legacy, bool numpy2) {
  if (t.dtype() == DType::kString) return PythonBytesRepr(t.StringAt(0));
  double v = t.GetAsDouble(0);
  switch (t.dtype()) {
    case DType::kBool:
      return v != 0 ? "True" : "False";
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt64:
      return IntegerText(t, 0);
    case DType::kBFloat16:
      return BFloat16Repr(v);
    default:
      return FloatScalarStr(v, t.dtype(), legacy, numpy2);
  }
}

// Indices kept along each axis: all, or the edge items around "..."
// (_leading_trailing).
std::vector<std::vector<int64_t>> KeptIndices(const Shape& shape,
                                              bool summarize, int edgeitems) {
  std::vector<std::vector<int64_t>> kept(shape.size());
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    int64_t n = shape[axis];
    if (summarize && n > 2 * edgeitems) {
      for (int64_t i = 0; i < edgeitems; ++i) kept[axis].push_back(i);
      for (int64_t i = n - edgeitems; i < n; ++i) kept[axis].push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) kept[axis].push_back(i);
    }
  }
  return kept;
}

// Every flat index that will be printed, for sizing the formatter.
std::vector<int64_t> PrintedFlatIndices(
    const Shape& shape, const std::vector<std::vector<int64_t>>& kept) {
  std::vector<int64_t> out{0};
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    std::vector<int64_t> next;
    next.reserve(out.size() * kept[axis].size());
    for (int64_t base : out) {
      for (int64_t i : kept[axis]) next.push_back(base * shape[axis] + i);
    }
    out.swap(next);
  }
  return out;
}

ElementFormatter MakeFormatter(const Tensor& t,
                               const std::vector<int64_t>& printed,
                               bool legacy, bool numpy2) {
  switch (t.dtype()) {
    case DType::kString:  // an object array of bytes: each its repr, unpadded
      return [&t](int64_t i) { return PythonBytesRepr(t.StringAt(i)); };
    case DType::kBool:
      return [&t](int64_t i) -> std::string {
        return t.data<bool>()[i] ? " True" : "False";
      };
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt64: {
      // NumPy's IntegerFormat pads to the longer of str(min) and str(max):
      // the longest text printed.
      size_t width = 0;
      for (int64_t i : printed) width = std::max(width, IntegerText(t, i).size());
      return [&t, width](int64_t i) { return fmt::format("{:>{}}", IntegerText(t, i), width); };
    }
    case DType::kBFloat16:
      return [&t](int64_t i) { return BFloat16Repr(t.GetAsDouble(i)); };
    default: {
      std::vector<double> values;
      values.reserve(printed.size());
      for (int64_t i : printed) values.push_back(t.GetAsDouble(i));
      auto formatter = std::make_shared<FloatArrayFormatter>(values, t.dtype(),
                                                             legacy, numpy2);
      return [&t, formatter](int64_t i) { return (*formatter)(t.GetAsDouble(i)); };
    }
  }
}

// _extendLine: appends `word`, wrapping first when the line would overflow.
void ExtendLine(std::string& s, std::string& line, const std::string& word,
                size_t line_width, const std::string& next_line_prefix,
                bool legacy) {
  bool needs_wrap = line.size() + word.size() > line_width;
  if (!legacy && line.size() <= next_line_prefix.size()) needs_wrap = false;
  if (needs_wrap) {
    size_t end = line.find_last_not_of(' ');
    s += line.substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
    line = next_line_prefix;
  }
  line += word;
}

// _formatArray's recurser.
class ArrayFormatter {
 public:
  // `separator`: " " for str(), ", " for repr().
  ArrayFormatter(const Shape& shape, const ElementFormatter& format,
                 bool summarize, int edgeitems, bool legacy,
                 std::string separator = " ")
      : shape_(shape),
        format_(format),
        summarize_(summarize),
        edgeitems_(edgeitems),
        legacy_(legacy),
        separator_(std::move(separator)) {
    separator_rstrip_ = separator_.substr(0, separator_.find_last_not_of(' ') + 1);
    strides_.assign(shape.size(), 1);
    for (int axis = static_cast<int>(shape.size()) - 2; axis >= 0; --axis) {
      strides_[axis] = strides_[axis + 1] * shape[axis + 1];
    }
  }

  std::string Format(int64_t offset, size_t axis, const std::string& hanging,
                     int curr_width) const {
    const size_t axes_left = shape_.size() - axis;
    if (axes_left == 0) return format_(offset);

    const std::string next_hanging = hanging + " ";
    const int next_width = legacy_ ? curr_width : curr_width - 1;
    const int64_t n = shape_[axis];
    const bool show_summary = summarize_ && 2 * edgeitems_ < n;
    const int64_t leading = show_summary ? edgeitems_ : 0;
    const int64_t trailing = show_summary ? edgeitems_ : n;
    auto child = [&](int64_t i) {
      return Format(offset + i * strides_[axis], axis + 1, next_hanging,
                    next_width);
    };

    std::string s;
    if (axes_left == 1) {
      // Room for the separator's visible part or the ']', whichever is wider.
      size_t elem_width = legacy_ ? curr_width - separator_rstrip_.size() : curr_width - 1;
      std::string line = hanging;
      for (int64_t i = 0; i < leading; ++i) {
        ExtendLine(s, line, child(i), elem_width, hanging, legacy_);
        line += separator_;
      }
      if (show_summary) {
        ExtendLine(s, line, "...", elem_width, hanging, legacy_);
        line += legacy_ ? ", " : separator_;
      }
      for (int64_t i = trailing; i > 1; --i) {
        ExtendLine(s, line, child(n - i), elem_width, hanging, legacy_);
        line += separator_;
      }
      if (legacy_) elem_width = curr_width;
      ExtendLine(s, line, child(n - 1), elem_width, hanging, legacy_);
      s += line;
    } else {
      const std::string line_sep = separator_rstrip_ + std::string(axes_left - 1, '\n');
      for (int64_t i = 0; i < leading; ++i) {
        s += hanging + child(i) + line_sep;
      }
      if (show_summary) {
        s += hanging + (legacy_ ? "..., \n" : "..." + line_sep);
      }
      for (int64_t i = trailing; i > 1; --i) {
        s += hanging + child(n - i) + line_sep;
      }
      s += hanging + child(n - 1);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

 private:
  const Shape& shape_;
  const ElementFormatter& format_;
  std::vector<int64_t> strides_;
  bool summarize_;
  int edgeitems_;
  bool legacy_;
  std::string separator_;
  std::string separator_rstrip_;
};

}  // namespace

std::string NumpyStr(const Tensor& t, const NumpyPrintOptions& options) {
  if (t.rank() == 0) return ScalarStr(t, options.legacy_113, options.numpy2);
  if (t.num_elements() == 0) return "[]";
  const bool summarize = t.num_elements() > options.threshold;
  auto kept = KeptIndices(t.shape(), summarize, options.edgeitems);
  ElementFormatter format =
      MakeFormatter(t, PrintedFlatIndices(t.shape(), kept), options.legacy_113, options.numpy2);
  ArrayFormatter formatter(t.shape(), format, summarize, options.edgeitems,
                           options.legacy_113);
  return formatter.Format(0, 0, " ", options.linewidth);
}

std::string NumpyRepr(const Tensor& t, bool numpy2) {
  constexpr int kLineWidth = 75;
  const std::string prefix = "array(";
  // dtype_is_implied: float64, int64 (the C long) and bool need no dtype=.
  const bool implied = (t.dtype() == DType::kFloat64 || t.dtype() == DType::kInt64 || t.dtype() == DType::kBool) &&
                       t.num_elements() > 0;
  const std::string suffix = implied ? ")" : ",";
  std::string body;
  if (t.num_elements() > 0) {
    const bool summarize = t.num_elements() > 1000;
    auto kept = KeptIndices(t.shape(), summarize, 3);
    ElementFormatter format = MakeFormatter(t, PrintedFlatIndices(t.shape(), kept), false, numpy2);
    ArrayFormatter formatter(t.shape(), format, summarize, 3, false, ", ");
    // The line width leaves room for the suffix; continuation lines are
    // indented past "array([".
    body = formatter.Format(0, 0, std::string(prefix.size() + 1, ' '),
                            kLineWidth - static_cast<int>(suffix.size()));
  } else if (t.rank() == 1) {
    body = "[]";
  } else {
    body = "[], shape=" + ShapeTupleString(t.shape());
  }
  std::string text = prefix + body + suffix;
  if (implied) return text;
  // TensorFlow hands string tensors to NumPy as object arrays.
  const std::string dtype = fmt::format("dtype={})", t.dtype() == DType::kString ? "object" : Name(t.dtype()));
  const size_t last_line = text.size() - (text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  const bool wrap = last_line + dtype.size() + 1 > static_cast<size_t>(kLineWidth);
  return text + (wrap ? "\n" + std::string(prefix.size(), ' ') : " ") + dtype;
}

std::string PythonListItemRepr(const Tensor& t, bool numpy2) {
  if (t.rank() != 0) return NumpyRepr(t, numpy2);
  if (t.dtype() == DType::kString) return PythonBytesRepr(t.StringAt(0));
  if (t.dtype() == DType::kBool) {
    const bool v = t.GetAsDouble(0) != 0;
    return numpy2 ? (v ? "np.True_" : "np.False_") : (v ? "True" : "False");
  }
  const std::string value = ScalarStr(t, false, numpy2);
  // ml_dtypes' bfloat16 scalar has no np. name.
  if (!numpy2 || t.dtype() == DType::kBFloat16) return value;
  return fmt::format("np.{}({})", Name(t.dtype()), value);
}

// repr() of the Python scalar .item() gives for a rank-0 tensor.
std::string PythonItemRepr(const Tensor& t) {
  switch (t.dtype()) {
    case DType::kString:
      return PythonBytesRepr(t.StringAt(0));
    case DType::kBool:
      return t.GetAsDouble(0) != 0 ? "True" : "False";
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt64:
      return IntegerText(t, 0);
    default:
      return FloatScalarStr(t.GetAsDouble(0), DType::kFloat64, false);  // a Python float
  }
}

std::string EagerVariableStr(const std::string& name, const Tensor& t, bool numpy2) {
  // ops.numpy_text(is_repr=True): a NumPy scalar prints as its .item().
  std::string numpy = t.rank() == 0 ? PythonItemRepr(t) : NumpyRepr(t, numpy2);
  if (numpy.find('\n') != std::string::npos) numpy = "\n" + numpy;  // ops.numpy_text
  return fmt::format("<tf.Variable '{}:0' shape={} dtype={}, numpy={}>", name, ShapeTupleString(t.shape()),
                     Name(t.dtype()), numpy);
}

std::string EagerTensorStr(const Tensor& t, bool numpy2) {
  NumpyPrintOptions options;
  options.numpy2 = numpy2;
  std::string text = NumpyStr(t, options);
  if (text.find('\n') != std::string::npos) text = "\n" + text;
  return fmt::format("tf.Tensor({}, shape={}, dtype={})", text,
                     ShapeTupleString(t.shape()), Name(t.dtype()));
}

std::string EagerTensorRepr(const Tensor& t, bool numpy2) {
  // EagerTensor.__repr__: ops.numpy_text(is_repr=True), as a variable's.
  std::string numpy = t.rank() == 0 ? PythonItemRepr(t) : NumpyRepr(t, numpy2);
  if (numpy.find('\n') != std::string::npos) numpy = "\n" + numpy;
  return fmt::format("<tf.Tensor: shape={}, dtype={}, numpy={}>", ShapeTupleString(t.shape()), Name(t.dtype()), numpy);
}

}  // namespace tfrun
