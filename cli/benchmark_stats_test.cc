#include "cli/benchmark_stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tfrun {
namespace {

TEST(BenchmarkStatsTest, SpreadOfAFixedSample) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
  const SampleStats s = Summarize({9, 4, 2, 4, 5, 7, 4, 5});
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(32.0 / 7.0) / 5);
  EXPECT_EQ(s.median, 4);  // nearest rank: the 4th of 8
}

TEST(BenchmarkStatsTest, PercentilesNeedEnoughSamples) {
  EXPECT_EQ(SamplesNeeded(90), 10);
  EXPECT_EQ(SamplesNeeded(95), 20);
  EXPECT_EQ(SamplesNeeded(99), 100);
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  const SampleStats s = Summarize(twenty);
  ASSERT_TRUE(s.p90 && s.p95);
  EXPECT_EQ(*s.p90, 18);
  EXPECT_EQ(*s.p95, 19);  // not the maximum
  EXPECT_FALSE(s.p99);    // 20 runs cannot tell p99 from the max
  EXPECT_EQ(PercentileText("p99", s.p99, 99, s.count), "p99 needs 100 runs (had 20)");
  EXPECT_EQ(PercentileText("p90", s.p90, 90, s.count), "p90 18.0000 ms");
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(*Summarize(hundred).p99, 99);
}

TEST(BenchmarkStatsTest, OneSampleHasNoSpread) {
  const SampleStats s = Summarize({3.5});
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.cv, 0);
  EXPECT_EQ(s.median, 3.5);
  EXPECT_FALSE(s.p90);
  EXPECT_EQ(Summarize({}).count, 0);
}

}  // namespace
}  // namespace tfrun
