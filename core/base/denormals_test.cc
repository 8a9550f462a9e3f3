#include "core/base/denormals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/base/kernel_threads.h"

namespace tfrun {
namespace {

// volatile: computed at run time, under the thread's mode, not folded.
float Times(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

constexpr float kDenormal = 1e-40f;

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
TEST(DenormalsTest, FlushedInScopeAndRestoredAfter) {
  ASSERT_EQ(std::fpclassify(Times(kDenormal, 1.0f)), FP_SUBNORMAL);
  {
    ScopedFlushDenormal flush;
    EXPECT_EQ(Times(1e-20f, 1e-20f), 0.0f);  // a denormal result is written as zero
    EXPECT_TRUE(std::signbit(Times(-1e-20f, 1e-20f)));
#if !defined(__aarch64__)  // AArch64's FZ flushes results; inputs only when FEAT_AFP says so
    EXPECT_EQ(Times(kDenormal, 1e30f), 0.0f);  // a denormal input reads as zero
#endif
    {
      ScopedFlushDenormal nested;
      EXPECT_EQ(Times(1e-20f, 1e-20f), 0.0f);
    }
    EXPECT_EQ(Times(1e-20f, 1e-20f), 0.0f);  // the inner scope left the outer's mode
  }
  EXPECT_EQ(std::fpclassify(Times(1e-20f, 1e-20f)), FP_SUBNORMAL);
}

TEST(DenormalsTest, KernelThreadPoolWorkersFlush) {
  KernelThreadPool pool(2);
  float seen[2] = {1, 1};
  Eigen::Barrier done(2);
  for (int i = 0; i < 2; ++i) {
    pool.Schedule([&, i] {
      seen[i] = Times(1e-20f, 1e-20f);
      done.Notify();
    });
  }
  done.Wait();
  EXPECT_EQ(seen[0], 0.0f);
  EXPECT_EQ(seen[1], 0.0f);
  EXPECT_EQ(std::fpclassify(Times(1e-20f, 1e-20f)), FP_SUBNORMAL);  // not this thread
}
#endif

}  // namespace
}  // namespace tfrun
