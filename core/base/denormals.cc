#include "core/base/denormals.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace tfrun {
namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned kFlushBits = 0x8000 | 0x0040;  // MXCSR: FTZ, DAZ
unsigned long long ReadMode() { return _mm_getcsr(); }
void WriteMode(unsigned long long mode) { _mm_setcsr(static_cast<unsigned>(mode)); }
unsigned long long Flushing(unsigned long long mode) { return mode | kFlushBits; }
#elif defined(__aarch64__)
constexpr unsigned long long kFlushBits = 1ull << 24;  // FPCR.FZ
unsigned long long ReadMode() {
  unsigned long long fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
}
void WriteMode(unsigned long long mode) { __asm__ __volatile__("msr fpcr, %0" : : "r"(mode)); }
unsigned long long Flushing(unsigned long long mode) { return mode | kFlushBits; }
#else
unsigned long long ReadMode() { return 0; }
void WriteMode(unsigned long long) {}
unsigned long long Flushing(unsigned long long mode) { return mode; }
#endif

}  // namespace

ScopedFlushDenormal::ScopedFlushDenormal() : saved_(ReadMode()) {
  if (Flushing(saved_) != saved_) WriteMode(Flushing(saved_));
}

ScopedFlushDenormal::~ScopedFlushDenormal() {
  if (ReadMode() != saved_) WriteMode(saved_);
}

void FlushDenormalsOnThisThread() { WriteMode(Flushing(ReadMode())); }

}  // namespace tfrun
