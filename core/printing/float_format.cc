#include "core/printing/float_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tfrun {
namespace {

// A non-negative decimal d1.d2d3... x 10^exponent without trailing zeros
// (zero is "0", exponent 0).
struct Decimal {
  std::string digits;
  int exponent = 0;
};

// Normalises a printf/fmt rendering such as "0.00120", "12.5" or "1.25e-07".
Decimal ParseDecimal(const std::string& text) {
  Decimal d;
  size_t e = text.find_first_of("eE");
  std::string mantissa = text.substr(0, e);
  int exp10 = e == std::string::npos ? 0 : std::atoi(text.c_str() + e + 1);
  size_t point = mantissa.find('.');
  int int_len = static_cast<int>(point == std::string::npos ? mantissa.size()
                                                            : point);
  std::string all;
  for (char c : mantissa) {
    if (c != '.') all += c;
  }
  size_t first = all.find_first_not_of('0');
  if (first == std::string::npos) return Decimal{"0", 0};
  size_t last = all.find_last_not_of('0');
  d.digits = all.substr(first, last - first + 1);
  d.exponent = int_len - 1 - static_cast<int>(first) + exp10;
  return d;
}

// The exact decimal expansion of a value held in a long double (every
// float16/32/64 value and every midpoint between neighbours is exact there;
// glibc's printf prints exact expansions).
Decimal ExactExpansion(long double v) {
  static thread_local std::vector<char> buf(1200);
  for (int digits : {80, 1100}) {
    std::snprintf(buf.data(), buf.size(), "%.*Le", digits, v);
    Decimal d = ParseDecimal(buf.data());
    if (static_cast<int>(d.digits.size()) < digits) return d;
  }
  return ParseDecimal(buf.data());
}

// Compares two non-negative decimals.
int Compare(const Decimal& a, const Decimal& b) {
  bool a_zero = a.digits == "0", b_zero = b.digits == "0";
  if (a_zero || b_zero) return a_zero == b_zero ? 0 : (a_zero ? -1 : 1);
  if (a.exponent != b.exponent) return a.exponent < b.exponent ? -1 : 1;
  int c = a.digits.compare(b.digits);  // no trailing zeros: lexicographic
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// The first k digits of d, rounded up by one unit in the last place.
Decimal PlusOneUnit(const std::string& first_k, int exponent) {
  std::string s = first_k;
  int i = static_cast<int>(s.size()) - 1;
  while (i >= 0 && s[i] == '9') s[i--] = '0';
  if (i < 0) {
    s.insert(s.begin(), '1');
    ++exponent;
  } else {
    ++s[i];
  }
  return ParseDecimal(s.substr(0, 1) + "." + s.substr(1) + "e" +
                      std::to_string(exponent));
}

Decimal Truncated(const std::string& first_k, int exponent) {
  return ParseDecimal(first_k.substr(0, 1) + "." + first_k.substr(1) + "e" +
                      std::to_string(exponent));
}

// The neighbours of a positive finite value in its own dtype, and whether
// its mantissa is even (then the midpoints themselves read back as it).
void Neighbours(double v, DType dtype, long double* below, long double* above,
                bool* even) {
  switch (dtype) {
    case DType::kFloat32: {
      float f = static_cast<float>(v);
      *even = (Eigen::numext::bit_cast<uint32_t>(f) & 1) == 0;
      *below = std::nextafter(f, 0.0f);
      *above = std::nextafter(f, std::numeric_limits<float>::infinity());
      return;
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t bits = dtype == DType::kFloat16
                          ? Eigen::numext::bit_cast<uint16_t>(Eigen::half(v))
                          : Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(v));
      auto widen = [dtype](uint16_t b) -> long double {
        return dtype == DType::kFloat16
                   ? static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(b))
                   : static_cast<float>(
                         Eigen::numext::bit_cast<Eigen::bfloat16>(b));
      };
      *even = (bits & 1) == 0;
      *below = widen(bits - 1);
      *above = widen(bits + 1);  // past the largest finite value: inf
      return;
    }
    default:
      *even = (Eigen::numext::bit_cast<uint64_t>(v) & 1) == 0;
      *below = std::nextafter(v, 0.0);
      *above = std::nextafter(v, std::numeric_limits<double>::infinity());
  }
}

// Dragon4's unique digits: the shortest decimal inside the interval between
// the midpoints to the neighbours (the midpoints included when the mantissa
// is even, as IEEE round-half-even reads them back), nearest to the value
// when two qualify, ties to the even digit.
Decimal ShortestExact(double abs_x, DType dtype) {
  if (abs_x == 0) return Decimal{"0", 0};
  const long double v = abs_x;
  long double below, above;
  bool even = false;
  Neighbours(abs_x, dtype, &below, &above, &even);
  // Past the largest finite value Dragon4 keeps the margin symmetric.
  if (std::isinf(above)) above = v + (v - below);
  const Decimal exact = ExactExpansion(v);
  const Decimal low = ExactExpansion((v + below) / 2);
  const Decimal high = ExactExpansion((v + above) / 2);
  const int n = static_cast<int>(exact.digits.size());
  for (int k = 1; k < n; ++k) {
    const std::string first_k = exact.digits.substr(0, k);
    Decimal down = Truncated(first_k, exact.exponent);
    Decimal up = PlusOneUnit(first_k, exact.exponent);
    const int lc = Compare(low, down), hc = Compare(up, high);
    bool down_ok = lc < 0 || (even && lc == 0);
    bool up_ok = hc < 0 || (even && hc == 0);
    if (down_ok && up_ok) {
      // Round half to even on the exact remainder.
      const std::string rest = exact.digits.substr(k);
      int c = rest.compare(0, 1, "5") != 0 ? (rest[0] > '5' ? 1 : -1)
                                           : (rest.size() > 1 ? 1 : 0);
      if (c == 0) c = ((first_k.back() - '0') % 2 == 0) ? -1 : 1;
      return c < 0 ? down : up;
    }
    if (down_ok) return down;
    if (up_ok) return up;
  }
  return exact;
}

// Dragonbox (fmt) applies the same interval and tie rules and is much
// faster; float_format_test checks the two agree.
Decimal Shortest(double abs_x, DType dtype) {
  switch (dtype) {
    case DType::kFloat64:
      return ParseDecimal(fmt::format("{}", abs_x));
    case DType::kFloat32:
      return ParseDecimal(fmt::format("{}", static_cast<float>(abs_x)));
    default:
      return ShortestExact(abs_x, dtype);
  }
}

Decimal ExactFixed(double abs_x, int fraction_digits) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", fraction_digits, abs_x);
  return ParseDecimal(buf);
}

Decimal ExactScientific(double abs_x, int fraction_digits) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*e", fraction_digits, abs_x);
  return ParseDecimal(buf);
}

// Dragon4's digit choice: unique digits cut at `precision`, extended with
// exact digits up to `min_digits`; or exactly `precision` digits.
// `fraction_digits_of` counts fraction digits in the mode's own sense.
template <typename CountFn, typename ExactFn>
Decimal ChooseDigits(double abs_x, DType dtype, const FloatFormatSpec& spec,
                     CountFn fraction_digits_of, ExactFn exact) {
  if (!spec.unique) return exact(abs_x, std::max(spec.precision, 0));
  Decimal d = Shortest(abs_x, dtype);
  int n = fraction_digits_of(d);
  if (spec.precision >= 0 && n > spec.precision) {
    return exact(abs_x, spec.precision);
  }
  if (spec.min_digits >= 0 && n < spec.min_digits) {
    return exact(abs_x, spec.min_digits);
  }
  return d;
}

void StripTrailingZeros(std::string& s, int& fraction_digits, TrimMode trim) {
  while (fraction_digits > 0 && s.back() == '0') {
    s.pop_back();
    --fraction_digits;
  }
  if (s.back() == '.') {
    if (trim == TrimMode::kLeaveOneZero) {
      s += '0';
      ++fraction_digits;
    } else if (trim == TrimMode::kDptZeros) {
      s.pop_back();
    }
  }
}

// The decimal point and fraction as Format_Positional/Format_Scientific
// write them: the point always (but for DptZeros), zeros added or trimmed
// by the trim mode.
void AppendFraction(const std::string& fraction, const FloatFormatSpec& spec,
                    std::string* s, int* fraction_digits) {
  if (*fraction_digits > 0) *s += "." + fraction;
  if (spec.trim != TrimMode::kDptZeros && *fraction_digits == 0) *s += '.';
  if (spec.trim == TrimMode::kLeaveOneZero) {
    if (*fraction_digits == 0) {
      *s += '0';
      ++*fraction_digits;
    }
  } else if (spec.trim == TrimMode::kNone) {
    int desired = std::max(spec.unique ? -1 : spec.precision, spec.min_digits);
    for (; *fraction_digits < desired; ++*fraction_digits) *s += '0';
  }
  if (spec.precision >= 0 && spec.trim != TrimMode::kNone &&
      *fraction_digits > 0) {
    StripTrailingZeros(*s, *fraction_digits, spec.trim);
  }
}

}  // namespace

std::string ShortestDigitsForTest(double abs_x, DType dtype, bool exact) {
  Decimal d = exact ? ShortestExact(abs_x, dtype) : Shortest(abs_x, dtype);
  return d.digits + "e" + std::to_string(d.exponent);
}

std::string FormatFloatPositional(double x, DType dtype,
                                  const FloatFormatSpec& spec) {
  const bool negative = std::signbit(x);
  const double abs_x = std::fabs(x);
  // Digits past the decimal point; negative when unique digits stop left of
  // the units place. min_digits >= 0 forces exact digits down to it.
  Decimal d = ChooseDigits(
      abs_x, dtype, spec,
      [](const Decimal& v) {
        return static_cast<int>(v.digits.size()) - (v.exponent + 1);
      },
      ExactFixed);

  std::string whole, fraction;
  if (d.exponent >= 0) {
    whole = d.digits.substr(0, d.exponent + 1);
    whole.resize(d.exponent + 1, '0');
    if (static_cast<int>(d.digits.size()) > d.exponent + 1) {
      fraction = d.digits.substr(d.exponent + 1);
    }
  } else {
    whole = "0";
    fraction = std::string(-d.exponent - 1, '0') + d.digits;
  }
  const int whole_digits = static_cast<int>(whole.size());
  int fraction_digits = static_cast<int>(fraction.size());

  std::string s = (negative ? "-" : "") + whole;
  AppendFraction(fraction, spec, &s, &fraction_digits);
  if (spec.pad_right >= fraction_digits) {
    if (spec.trim == TrimMode::kDptZeros && fraction_digits == 0) s += ' ';
    s.append(spec.pad_right - fraction_digits, ' ');
  }
  const int used = whole_digits + (negative ? 1 : 0);
  if (spec.pad_left > used) s.insert(0, spec.pad_left - used, ' ');
  return s;
}

std::string FormatFloatScientific(double x, DType dtype,
                                  const FloatFormatSpec& spec) {
  const bool negative = std::signbit(x);
  const double abs_x = std::fabs(x);
  Decimal d = ChooseDigits(
      abs_x, dtype, spec,
      [](const Decimal& v) { return static_cast<int>(v.digits.size()) - 1; },
      ExactScientific);

  std::string s = (negative ? "-" : "") + d.digits.substr(0, 1);
  int fraction_digits = static_cast<int>(d.digits.size()) - 1;
  AppendFraction(d.digits.substr(1), spec, &s, &fraction_digits);

  int exponent = d.exponent;
  int exp_digits = spec.exp_digits < 0 ? 2 : std::min(spec.exp_digits, 5);
  s += fmt::format("e{}{:0{}d}", exponent < 0 ? '-' : '+', std::abs(exponent),
                   exp_digits);
  const int used = 1 + (negative ? 1 : 0);
  if (spec.pad_left > used) s.insert(0, spec.pad_left - used, ' ');
  return s;
}

namespace {

std::string NonFinite(double x) {
  if (std::isnan(x)) return "nan";
  return x < 0 ? "-inf" : "inf";
}

// NumPy's legacy scalar str: "%.6g" (float16/32) or "%.12g" (float64), with
// ".0" appended when only digits were printed.
std::string LegacyScalarStr(double x, DType dtype) {
  if (!std::isfinite(x)) return NonFinite(x);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", dtype == DType::kFloat64 ? 12 : 6, x);
  std::string s = buf;
  bool only_digits = true;
  for (size_t i = (s[0] == '-') ? 1 : 0; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') only_digits = false;
  }
  if (only_digits) s += ".0";
  return s;
}

// `x` rounded to the dtype, as NumPy 2 converts a Python float it compares
// with a value of that dtype.
double InDType(double x, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<float>(x);
    case DType::kFloat16:
      return static_cast<double>(Eigen::half(x));
    default:
      return x;
  }
}

// Division in the dtype's own precision, as NumPy computes max/min.
double DivideInDType(double a, double b, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return static_cast<float>(a) / static_cast<float>(b);
    case DType::kFloat16:
      return static_cast<double>(Eigen::half(a) / Eigen::half(b));
    default:
      return a / b;
  }
}

}  // namespace

std::string FloatScalarStr(double x, DType dtype, bool legacy_113, bool numpy2) {
  if (legacy_113) return LegacyScalarStr(x, dtype);
  if (std::isinf(x)) return NonFinite(x);
  const double a = std::fabs(x);
  const double cutoff = !numpy2 ? 1e16 : dtype == DType::kFloat16 ? 1e3 : dtype == DType::kFloat32 ? 1e6 : 1e16;
  if (std::isnan(x) || x == 0 || (a < cutoff && a >= 1e-4)) {
    if (std::isnan(x)) return "nan";
    FloatFormatSpec spec;
    spec.trim = TrimMode::kLeaveOneZero;
    return FormatFloatPositional(x, dtype, spec);
  }
  FloatFormatSpec spec;
  spec.trim = TrimMode::kDptZeros;
  return FormatFloatScientific(x, dtype, spec);
}

FloatArrayFormatter::FloatArrayFormatter(const std::vector<double>& values,
                                         DType dtype, bool legacy_113, bool numpy2)
    : dtype_(dtype) {
  constexpr int kPrecision = 8;  // np.get_printoptions()['precision']
  std::vector<double> finite;
  bool has_neg_inf = false;
  for (double v : values) {
    if (std::isfinite(v)) {
      finite.push_back(v);
    } else if (std::isinf(v) && v < 0) {
      has_neg_inf = true;
    }
  }
  double max_val = 0, min_val = 0;
  bool any_non_zero = false;
  for (double v : finite) {
    if (v == 0) continue;
    double a = std::fabs(v);
    if (!any_non_zero) {
      max_val = min_val = a;
      any_non_zero = true;
    }
    max_val = std::max(max_val, a);
    min_val = std::min(min_val, a);
  }
  if (any_non_zero) {
    if (numpy2 && !legacy_113) {
      // NumPy 2: the cut-off by the dtype's precision, and 0.0001 a weak
      // Python float, compared in the dtype.
      const double cutoff = dtype == DType::kFloat16 ? 1e3 : dtype == DType::kFloat32 ? 1e6 : 1e8;
      exp_format_ = max_val >= cutoff || min_val < InDType(0.0001, dtype) ||
                    DivideInDType(max_val, min_val, dtype) > 1000.;
    } else {
      exp_format_ = max_val >= 1.e8 || min_val < 0.0001 ||
                    DivideInDType(max_val, min_val, dtype) > 1000.;
    }
  }

  int pad_left = 0, pad_right = 0;
  if (finite.empty()) {
    spec_.trim = TrimMode::kZeros;
    spec_.exp_digits = -1;
    spec_.unique = true;
    spec_.min_digits = -1;
    spec_.precision = kPrecision;
  } else if (exp_format_) {
    FloatFormatSpec first;
    first.precision = kPrecision;
    first.unique = !legacy_113;
    first.trim = legacy_113 ? TrimMode::kNone : TrimMode::kZeros;
    int max_frac = 0, max_int = 0, max_exp = 0;
    for (double v : finite) {
      std::string s = FormatFloatScientific(v, dtype, first);
      size_t e = s.find('e');
      size_t point = s.find('.');
      max_int = std::max(max_int, static_cast<int>(point));
      max_frac = std::max(max_frac, static_cast<int>(e - point - 1));
      max_exp = std::max(max_exp, static_cast<int>(s.size() - e - 1));
    }
    spec_.exp_digits = max_exp - 1;
    spec_.trim = TrimMode::kNone;
    spec_.precision = max_frac;
    spec_.min_digits = max_frac;
    spec_.unique = first.unique;
    pad_left = legacy_113 ? 3 : max_int;
    pad_right = spec_.exp_digits + 2 + spec_.precision;
  } else {
    FloatFormatSpec first;
    first.precision = kPrecision;
    first.unique = true;
    first.trim = TrimMode::kZeros;
    int max_int = 0, max_frac = 0;
    for (double v : finite) {
      std::string s = FormatFloatPositional(v, dtype, first);
      size_t point = s.find('.');
      int int_len = static_cast<int>(point);
      if (legacy_113 && s[0] == '-') --int_len;
      max_int = std::max(max_int, int_len);
      max_frac = std::max(max_frac, static_cast<int>(s.size() - point - 1));
    }
    pad_left = legacy_113 ? 1 + max_int : max_int;
    pad_right = max_frac;
    spec_.precision = kPrecision;
    spec_.unique = true;
    spec_.trim = TrimMode::kZeros;
    spec_.min_digits = 0;
  }
  if (finite.size() != values.size()) {
    // Legacy arrays print with sign=' ', which reserves room for "-inf".
    const bool neg_inf = legacy_113 || has_neg_inf;
    const int offset = pad_right + 1;
    pad_left = std::max({pad_left, 3 - offset, 3 + (neg_inf ? 1 : 0) - offset});
  }
  spec_.pad_left = pad_left;
  spec_.pad_right = pad_right;
}

std::string FloatArrayFormatter::operator()(double x) const {
  if (!std::isfinite(x)) {
    std::string s = NonFinite(x);
    int width = spec_.pad_left + spec_.pad_right + 1;
    if (width > static_cast<int>(s.size())) s.insert(0, width - s.size(), ' ');
    return s;
  }
  if (exp_format_) {
    FloatFormatSpec spec = spec_;
    spec.pad_right = -1;
    return FormatFloatScientific(x, dtype_, spec);
  }
  return FormatFloatPositional(x, dtype_, spec_);
}

}  // namespace tfrun
