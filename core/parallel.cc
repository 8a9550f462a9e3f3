#include "core/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace tfrun {

void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body, int64_t min_per_thread) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = std::clamp<int64_t>(n / std::max<int64_t>(min_per_thread, 1), 1, cores);
  if (threads == 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> workers;
  const int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 1; t < threads; ++t) {
    const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin < end) workers.emplace_back(body, begin, end);
  }
  body(0, std::min(n, chunk));
  for (std::thread& w : workers) w.join();
}

}  // namespace tfrun
