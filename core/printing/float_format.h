// NumPy's float formatting (numpy/core/src/multiarray/dragon4.c and
// FloatingFormat in numpy/core/arrayprint.py), reproduced digit for digit.
//
// Digits come from two sources: the shortest string that round-trips in the
// value's own dtype (fmt's Dragonbox for float32/float64, a search for
// float16), and exact decimal rounding (glibc's printf, which is exact) when
// a precision cut-off or min_digits asks for more or fewer digits than that.
#pragma once

#include <string>
#include <vector>

#include "core/base/dtype.h"

namespace tfrun {

// NumPy's trim argument: 'k', '.', '0', '-'.
enum class TrimMode { kNone, kZeros, kLeaveOneZero, kDptZeros };

struct FloatFormatSpec {
  int precision = -1;   // -1: none
  bool unique = true;   // shortest round-trip digits, cut at precision
  int min_digits = -1;  // -1: none
  TrimMode trim = TrimMode::kLeaveOneZero;
  int pad_left = -1;
  int pad_right = -1;   // positional only
  int exp_digits = -1;  // scientific only
};

// numpy.format_float_positional / format_float_scientific for a finite
// value `x` of `dtype` (x holds the exact value, widened to double).
std::string FormatFloatPositional(double x, DType dtype,
                                  const FloatFormatSpec& spec);
std::string FormatFloatScientific(double x, DType dtype,
                                  const FloatFormatSpec& spec);

// str() of a NumPy float scalar (np.float32(x) etc.), modern or legacy 1.13.
// `numpy2`: as NumPy 2 prints it, which switches to scientific notation
// from 10**precision of the dtype on (float16 1e3, float32 1e6; float64
// keeps 1e16) where NumPy 1 waits for 1e16.
std::string FloatScalarStr(double x, DType dtype, bool legacy_113, bool numpy2 = false);

// The element formatter of numpy.array2string for a float array: sized once
// from the elements that will be printed, then called per element.
class FloatArrayFormatter {
 public:
  // `numpy2`: NumPy 2's FloatingFormat, whose exponent cut-off depends on
  // the dtype (10**min(8, precision): float16 1e3, float32 1e6, float64
  // 1e8) and whose comparisons run in the dtype (NEP 50), where NumPy 1
  // compares in float64 against 1e8.
  FloatArrayFormatter(const std::vector<double>& values, DType dtype,
                      bool legacy_113, bool numpy2 = false);
  std::string operator()(double x) const;

 private:
  DType dtype_;
  bool exp_format_ = false;
  FloatFormatSpec spec_;
};

// "digitsEexponent" of the shortest unique digits, by the exact Dragon4
// search or by the fast path used for float32/float64 (for tests).
std::string ShortestDigitsForTest(double abs_x, DType dtype, bool exact);

}  // namespace tfrun
