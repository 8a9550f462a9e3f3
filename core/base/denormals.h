// TensorFlow runs every CPU kernel with denormal floats flushed to zero:
// a denormal input reads as a zero of its sign, a denormal result is
// written as zero (tsl::port::ScopedFlushDenormal in the executor, and in
// each intra-op thread as it starts). tfrun's kernels run the same way, so
// `x * 1e-30` or `exp(-100)` give TensorFlow's zeros. x86 (FTZ and DAZ)
// and AArch64 (FZ); elsewhere nothing changes.
#pragma once

namespace tfrun {

// For the lifetime of this object the calling thread flushes denormals;
// the thread's previous mode comes back when it ends. Not shared between
// threads.
class ScopedFlushDenormal {
 public:
  ScopedFlushDenormal();
  ~ScopedFlushDenormal();
  ScopedFlushDenormal(const ScopedFlushDenormal&) = delete;
  ScopedFlushDenormal& operator=(const ScopedFlushDenormal&) = delete;

 private:
  unsigned long long saved_;
};

// For a thread that only ever runs kernels (the pools' workers): flushes
// from now until the thread ends.
void FlushDenormalsOnThisThread();

}  // namespace tfrun
