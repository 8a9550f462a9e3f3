// Splits [0, n) into contiguous chunks run on up to one thread per core;
// small ranges run inline. For initialisers whose element i depends only on
// i (fill, random), so the result is the same for any thread count.
#pragma once

#include <cstdint>
#include <functional>

namespace tfrun {

void ParallelFor(int64_t n, const std::function<void(int64_t begin, int64_t end)>& body,
                 int64_t min_per_thread = int64_t{1} << 18);

}  // namespace tfrun
