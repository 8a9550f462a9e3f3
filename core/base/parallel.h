// Splits [0, n) into contiguous chunks, one per thread: the caller runs the
// first and a process-wide pool of helpers (one fewer than the cores, made
// on first use and kept) the rest; small ranges run inline. Used where
// chunks share no output: initialisers whose element i depends only on i
// (fill, random), so the result is the same for any thread count, and the
// column slabs of the float32 GEMM.
#pragma once

#include <cstdint>
#include <functional>

namespace tfrun {

// The cores ParallelFor uses when not told otherwise.
int ParallelCores();

// At most `max_threads` chunks (0: one per core), each at least
// `min_per_thread` long.
void ParallelFor(int64_t n, const std::function<void(int64_t begin, int64_t end)>& body,
                 int64_t min_per_thread = int64_t{1} << 18, int max_threads = 0);

}  // namespace tfrun
