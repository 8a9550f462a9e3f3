// The process's own memory use, for the report's per-phase figures.
#pragma once

#include <cstdint>

namespace tfrun {

// Peak resident set size so far (VmHWM), in bytes; 0 where unknown.
int64_t PeakResidentBytes();

}  // namespace tfrun
