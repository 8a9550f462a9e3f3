// A float's IEEE-754 bits and back, for code that compares results bit
// for bit or tests a float by its encoding (as C libraries do).
#pragma once

#include <cstdint>
#include <cstring>

namespace tfrun {

inline uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace tfrun
