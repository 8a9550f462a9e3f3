#include "core/base/parallel.h"

#include <algorithm>
#include <thread>

#include "core/base/kernel_threads.h"

namespace tfrun {
namespace {

int Cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// The caller takes a chunk itself, so the helpers are one fewer than the
// cores: an idle extra helper would spin on a core the others need.
KernelThreadPool& Helpers() {
  static auto* pool = new KernelThreadPool(std::max(1, Cores() - 1));
  return *pool;
}

}  // namespace

int ParallelCores() { return Cores(); }

void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body, int64_t min_per_thread,
                 int max_threads) {
  const int64_t limit = max_threads > 0 ? max_threads : Cores();
  const int64_t threads = std::clamp<int64_t>(n / std::max<int64_t>(min_per_thread, 1), 1, limit);
  if (threads == 1) {
    body(0, n);
    return;
  }
  const int64_t chunk = (n + threads - 1) / threads;
  const int64_t chunks = (n + chunk - 1) / chunk;
  Eigen::Barrier done(static_cast<unsigned>(chunks - 1));
  for (int64_t t = 1; t < chunks; ++t) {
    Helpers().Schedule([&, t] {
      body(t * chunk, std::min(n, (t + 1) * chunk));
      done.Notify();
    });
  }
  body(0, std::min(n, chunk));
  done.Wait();
}

}  // namespace tfrun
