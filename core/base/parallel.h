// Splits [0, n) into contiguous chunks, one per thread: the caller runs the
// first and a process-wide pool of helpers (one fewer than the cores, made
// on first use and kept) the rest; small ranges run inline. Used where
// chunks share no output: initialisers whose element i depends only on i
// (fill, random), so the result is the same for any thread count, and the
// column slabs of the float32 GEMM.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace tfrun {

// The machine's cores.
int ParallelCores();

// The processor's maker as CPUID names it ("GenuineIntel", "AuthenticAMD");
// "" where there is no CPUID. TensorFlow's float32 reciprocal and rsqrt
// start from the processor's estimates, whose bits differ between makers:
// goldens of those say which maker's they are (`# processor:`).
std::string ProcessorVendor();

// Whether this processor runs AVX2: the kernels' eight-lane forms (each
// lane the four-lane SSE2 form's bits) are chosen by it.
bool ProcessorHasAvx2();

// The threads a kernel splits its work over (--intra-op-threads; 0, the
// default: one per core): the Eigen pool's size, oneDNN's OpenMP team and
// ParallelFor's default. Set before the first kernel runs.
void SetKernelThreads(int threads);
int KernelThreads();

// Kernels run on this thread use `threads` (0: the process's count) while
// it lives: the executor gives a node that runs alone more threads than
// the nodes it runs at once. Never more than the pool's size.
class ScopedKernelThreads {
 public:
  explicit ScopedKernelThreads(int threads);
  ~ScopedKernelThreads();
  ScopedKernelThreads(const ScopedKernelThreads&) = delete;
  ScopedKernelThreads& operator=(const ScopedKernelThreads&) = delete;

 private:
  int previous_;
};

// Held by a kernel while it runs on several threads (ParallelFor, the
// Eigen pool, oneDNN's OpenMP team). Where the executor runs nodes at the
// same time (MultiThreadedKernelsTakeTurns on its threads), one such
// kernel runs at a time, with every thread it was made for: its results
// do not depend on what else runs, and two thread teams never share the
// cores; kernels on one thread run beside it. With one kernel thread
// (KernelThreads() == 1) no kernel is multi-threaded and none takes turns:
// nodes run at once each on its own thread, as TensorFlow's inter-op
// threads do with intra_op_parallelism_threads 1. Elsewhere it costs
// nothing. Nests: a kernel's inner sections are its own.
class MultiThreadedSection {
 public:
  MultiThreadedSection();
  ~MultiThreadedSection();
  MultiThreadedSection(const MultiThreadedSection&) = delete;
  MultiThreadedSection& operator=(const MultiThreadedSection&) = delete;

 private:
  bool counted_ = false;  // this thread takes turns: its depth counts this section
  bool locked_ = false;   // the outermost: holds the turn
};

// Whether the kernels this thread runs take turns for their
// multi-threaded sections (the concurrent executor's threads).
void MultiThreadedKernelsTakeTurns(bool take_turns);

// At most `max_threads` chunks (0: KernelThreads()), each at least
// `min_per_thread` long.
void ParallelFor(int64_t n, const std::function<void(int64_t begin, int64_t end)>& body,
                 int64_t min_per_thread = int64_t{1} << 18, int max_threads = 0);

}  // namespace tfrun
