// Reproducible random initialisers: element i of a tensor depends only on
// (seed, i), is computed with +, -, *, / and sqrt alone (IEEE-exact, no
// libm), and the file is built with -ffp-contract=off, so the same seed gives
// the same numbers on every machine and compiler, in any thread order.
#pragma once

#include <cstdint>

namespace tfrun {

// Uniform in [0, 1) with 53 random bits.
double UniformUnit(uint64_t seed, uint64_t index);

// Standard normal N(0, 1) by inverse transform (Acklam's rational
// approximation, relative error < 1.2e-9).
double StandardNormal(uint64_t seed, uint64_t index);

// A natural logarithm from basic arithmetic only (for StandardNormal).
double PortableLog(double x);

}  // namespace tfrun
