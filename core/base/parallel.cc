#include "core/base/parallel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
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

std::string ProcessorVendor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int leaf, b, c, d;
  if (__get_cpuid(0, &leaf, &b, &c, &d) == 0) return "";
  char vendor[12];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  return std::string(vendor, 12);
#else
  return "";
#endif
}

bool ProcessorHasAvx2() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

namespace {
std::atomic<int> g_kernel_threads{0};  // SetKernelThreads: 0 is one per core
thread_local int t_kernel_threads = 0;  // ScopedKernelThreads: 0 is the process's count
}  // namespace

void SetKernelThreads(int threads) { g_kernel_threads.store(threads); }

int KernelThreads() {
  if (t_kernel_threads > 0) return t_kernel_threads;
  const int threads = g_kernel_threads.load();
  return threads > 0 ? threads : Cores();
}

ScopedKernelThreads::ScopedKernelThreads(int threads) : previous_(t_kernel_threads) {
  if (threads > 0) t_kernel_threads = threads;
}

ScopedKernelThreads::~ScopedKernelThreads() { t_kernel_threads = previous_; }

namespace {
std::mutex g_multi_threaded;
thread_local bool t_take_turns = false;
thread_local int t_section_depth = 0;
}  // namespace

void MultiThreadedKernelsTakeTurns(bool take_turns) { t_take_turns = take_turns; }

MultiThreadedSection::MultiThreadedSection() {
  if (!t_take_turns || KernelThreads() == 1) return;
  counted_ = true;
  if (t_section_depth++ == 0) {
    g_multi_threaded.lock();
    locked_ = true;
  }
}

MultiThreadedSection::~MultiThreadedSection() {
  if (counted_) --t_section_depth;
  if (locked_) g_multi_threaded.unlock();
}

void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& body, int64_t min_per_thread,
                 int max_threads) {
  const int64_t limit = max_threads > 0 ? max_threads : KernelThreads();
  const int64_t threads = std::clamp<int64_t>(n / std::max<int64_t>(min_per_thread, 1), 1, limit);
  if (threads == 1) {
    body(0, n);
    return;
  }
  MultiThreadedSection section;
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
