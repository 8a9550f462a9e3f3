// What a performance engineer reads off a list of run times: the spread
// (min, max, mean, standard deviation, coefficient of variation) and the
// percentiles the sample can support. A percentile p needs at least
// 100 / (100 - p) samples to differ from the maximum (p99: 100 runs); with
// fewer it is absent, and the report says how many it needs.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tfrun {

struct SampleStats {
  int count = 0;
  double min = 0, max = 0, mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for one sample
  double cv = 0;      // stddev / mean
  double median = 0;
  std::optional<double> p90, p95, p99;
};

// The nearest-rank percentile p (0..100) of `values` (sorted in place).
double Percentile(std::vector<double>& values, double p);

// The samples a percentile needs to be told apart from the maximum.
int SamplesNeeded(double p);

SampleStats Summarize(std::vector<double> values);

// "p99 needs 100 runs (had 20)" or "p99 12.3456 ms".
std::string PercentileText(const char* name, const std::optional<double>& value, double p, int count);

}  // namespace tfrun
