// TensorFlow 2.21's own outputs (testdata/math/tf_float_math.MAKER.txt,
// written by tools/gen_tf_float_math.py on a processor of each maker)
// against ApplyTfFloatFunction, bit for bit. Reciprocal and rsqrt start from
// the processor's estimate, whose bits differ between makers: a maker with
// no file of its own has the rest checked against another maker's.
#include "kernels/cpu/tf_float_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/denormals.h"
#include "core/base/parallel.h"

namespace tfrun {
namespace cpu {
namespace {

struct Case {
  std::vector<uint32_t> x;
  std::vector<uint32_t> expected[6];  // tanh, sigmoid, exp, log, reciprocal, rsqrt
};

// This processor maker's file, else AMD's (`own` false).
std::vector<Case> LoadCases(bool* own) {
  std::ifstream in("testdata/math/tf_float_math." + ProcessorVendor() + ".txt");
  *own = in.is_open();
  if (!*own) in.open("testdata/math/tf_float_math.AuthenticAMD.txt");
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("case ", 0) == 0) {
      cases.emplace_back();
      continue;
    }
    std::istringstream fields(line);
    uint32_t v[7];
    for (uint32_t& b : v) fields >> std::hex >> b;
    cases.back().x.push_back(v[0]);
    for (int f = 0; f < 6; ++f) cases.back().expected[f].push_back(v[f + 1]);
  }
  return cases;
}

const char* kNames[] = {"tanh", "sigmoid", "exp", "log", "reciprocal", "rsqrt"};
const TfFloatFunction kFunctions[] = {TfFloatFunction::kTanh, TfFloatFunction::kSigmoid,    TfFloatFunction::kExp,
                                      TfFloatFunction::kLog,  TfFloatFunction::kReciprocal, TfFloatFunction::kRsqrt};

TEST(TfFloatMathTest, BitsAsTensorFlow) {
  bool own = false;
  const std::vector<Case> cases = LoadCases(&own);
  ASSERT_EQ(cases.size(), 19u);
  // Without this maker's estimates: reciprocal and rsqrt unchecked.
  const int functions = own ? 6 : 4;
  if (!own) std::printf("no TensorFlow values for %s processors: reciprocal and rsqrt not checked\n", ProcessorVendor().c_str());
  ScopedFlushDenormal flush;  // as the executor runs kernels
  int compared = 0;
  for (const Case& c : cases) {
    const int64_t n = static_cast<int64_t>(c.x.size());
    std::vector<float> x(n), out(n);
    std::memcpy(x.data(), c.x.data(), n * sizeof(float));
    for (int f = 0; f < functions; ++f) {
      ApplyTfFloatFunction(kFunctions[f], x.data(), out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t got;
        std::memcpy(&got, &out[i], sizeof got);
        // A NaN's payload is not TensorFlow's contract (printed "nan" either way).
        const bool both_nan = out[i] != out[i] && (c.expected[f][i] & 0x7fffffffu) > 0x7f800000u;
        EXPECT_TRUE(got == c.expected[f][i] || both_nan)
            << kNames[f] << " of " << x[i] << " (bits " << std::hex << c.x[i] << ") at " << std::dec << i
            << " of " << n << ": " << std::hex << got << " where TensorFlow gives " << c.expected[f][i];
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(TfFloatMathTest, InPlaceAndLongTensorsSplitAtPackets) {
  // Long enough for the thread pool; in == out.
  const int64_t n = (int64_t{1} << 16) + 5;
  std::vector<float> x(n), one(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 4001) * 0.01f - 20.0f;
  ScopedFlushDenormal flush;
  ApplyTfFloatFunction(TfFloatFunction::kSigmoid, x.data(), one.data(), n);
  std::vector<float> in_place = x;
  ApplyTfFloatFunction(TfFloatFunction::kSigmoid, in_place.data(), in_place.data(), n);
  EXPECT_EQ(std::memcmp(one.data(), in_place.data(), n * sizeof(float)), 0);
  // Each element as the same element of a short tensor would give it in a
  // whole packet (the first n - 5) or in the scalar tail (the last 5).
  for (int64_t i : {int64_t{0}, int64_t{12345}, n - 6}) {
    float packet[8], out[8];
    for (float& p : packet) p = x[i];
    ApplyTfFloatFunction(TfFloatFunction::kSigmoid, packet, out, 8);
    EXPECT_EQ(out[0], one[i]) << i;
  }
  float tail[1] = {x[n - 1]}, tail_out[1];
  ApplyTfFloatFunction(TfFloatFunction::kSigmoid, tail, tail_out, 1);
  EXPECT_EQ(tail_out[0], one[n - 1]);
}

TEST(TfFloatMathTest, PacketsEqualOneByOne) {
  // Random bit patterns (every exponent: denormals, infinities, NaNs) and
  // the edges of each function's ranges, through the packet paths
  // and the element-at-a-time reference.
  std::vector<float> x;
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f, 1.17549435e-38f,
                  -104.0f, -104.00001f, -103.99999f, 87.0f, -87.0f, 87.00001f, 88.723f, 88.724f, 88.8f, -88.8f,
                  16.6355324f, 16.64f, 7.90738964f, -7.90738964f, 8.0f, 0.707106781f, 0.70710677f, 3e38f, -3e38f}) {
    x.push_back(v);
  }
  uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    uint32_t bits = state;
    if (i % 2 == 0) bits = (bits & 0x807fffffu) | ((120u + (state >> 27)) << 23);  // near 1: the usual values
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
  }
  while (x.size() % 8 != 0) x.push_back(0.5f);
  const int64_t n = static_cast<int64_t>(x.size());
  ScopedFlushDenormal flush;
  // Every packet width this processor runs: SSE2's 4 lanes, and AVX2's 8
  // (tf_float_math_avx2.cc) where it has them.
  std::vector<int> widths = {4};
  if (TfFloatPacketLanes() == 8) widths.push_back(8);
  for (const int lanes : widths) {
    for (int f = 0; f < 6; ++f) {
      SetTfFloatPacketLanesForTesting(lanes);
      std::vector<float> fast(n), reference(n);
      ApplyTfFloatFunction(kFunctions[f], x.data(), fast.data(), n);
      SetTfFloatPacketLanesForTesting(0);
      ApplyTfFloatFunctionOneByOne(kFunctions[f], x.data(), reference.data(), n);
      int differ = 0;
      for (int64_t i = 0; i < n; ++i) {
        uint32_t a, b;
        std::memcpy(&a, &fast[i], sizeof a);
        std::memcpy(&b, &reference[i], sizeof b);
        const bool both_nan = fast[i] != fast[i] && reference[i] != reference[i];
        if (a != b && !both_nan && ++differ <= 5) {
          ADD_FAILURE() << kNames[f] << " of " << x[i] << " (element " << i << ", " << lanes << " lanes): " << std::hex
                        << a << " against " << b;
        }
      }
      EXPECT_EQ(differ, 0) << kNames[f] << ", " << lanes << " lanes";
    }
  }
}

// LrnGradientSums in every packet width against LaunchLRNGrad's own loop
// (over j, adding to each k of its window, skipping zero gradients), bit
// for bit, NaNs included: depths 1 to 29 (every tail), radii 0 to 5,
// gradients with zeros, negative zeros and a NaN, inputs with a NaN and an
// infinity.
TEST(TfFloatMathTest, LrnGradientSumsAreTensorFlowsLoop) {
  uint32_t state = 99;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int>(state >> 20) - 2048) / 512.0f;
  };
  std::vector<int> widths = {4};
  if (TfFloatPacketLanes() == 8) widths.push_back(8);
  int cases = 0;
  for (int64_t depth = 1; depth <= 29; ++depth) {
    for (int64_t radius = 0; radius <= 5; ++radius) {
      std::vector<float> x(depth), norm(depth), power(depth), scale(depth), grad(depth);
      for (int64_t j = 0; j < depth; ++j) {
        x[j] = next();
        norm[j] = 1.0f + std::fabs(next());
        power[j] = std::pow(norm[j], -0.75f);
        scale[j] = next();
        const int kind = static_cast<int>(state >> 28) % 5;
        grad[j] = kind == 0 ? 0.0f : kind == 1 ? -0.0f : next();
      }
      if (depth > 3) {
        grad[depth / 2] = NAN;
        x[1] = NAN;
        x[depth - 1] = INFINITY;
      }
      // LaunchLRNGrad's loop.
      std::vector<float> want(depth, 0.0f);
      for (int64_t j = 0; j < depth; ++j) {
        if (grad[j] == 0.0f) continue;
        for (int64_t k = std::max<int64_t>(0, j - radius); k < std::min(depth, j + radius + 1); ++k) {
          float term = (x[k] * scale[j]) / norm[j];
          if (k == j) term += power[j];
          term *= grad[j];
          want[k] += term;
        }
      }
      // The padded form LrnGradientSums reads.
      const int64_t padded = depth + 2 * radius;
      std::vector<float> p_norm(padded, 1.0f), p_power(padded, 0.0f), p_scale(padded, 0.0f), p_grad(padded, 0.0f);
      for (int64_t j = 0; j < depth; ++j) {
        p_norm[radius + j] = norm[j];
        p_power[radius + j] = power[j];
        p_scale[radius + j] = scale[j];
        p_grad[radius + j] = grad[j];
      }
      for (const int lanes : widths) {
        SetTfFloatPacketLanesForTesting(lanes);
        std::vector<float> got(depth + 1, -5.0f);
        LrnGradientSums(x.data(), p_scale.data(), p_norm.data(), p_power.data(), p_grad.data(), depth, radius,
                        got.data());
        SetTfFloatPacketLanesForTesting(0);
        for (int64_t k = 0; k < depth; ++k) {
          uint32_t a, b;
          std::memcpy(&a, &got[k], sizeof a);
          std::memcpy(&b, &want[k], sizeof b);
          EXPECT_EQ(a, b) << "depth " << depth << " radius " << radius << " k " << k << ", " << lanes
                          << " lanes: " << got[k] << " against " << want[k];
        }
        EXPECT_EQ(got[depth], -5.0f) << "wrote past the end";
        ++cases;
      }
    }
  }
  EXPECT_GE(cases, 29 * 6);
}

}  // namespace
}  // namespace cpu
}  // namespace tfrun
