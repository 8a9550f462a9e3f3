#include "cli/benchmark_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tfrun {

double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

int SamplesNeeded(double p) { return static_cast<int>(std::ceil(100.0 / (100.0 - p) - 1e-9)); }

SampleStats Summarize(std::vector<double> values) {
  SampleStats s;
  s.count = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / s.count;
  if (s.count > 1) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / (s.count - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  s.median = Percentile(values, 50);
  const auto supported = [&](double p) -> std::optional<double> {
    if (s.count < SamplesNeeded(p)) return std::nullopt;
    return Percentile(values, p);
  };
  s.p90 = supported(90);
  s.p95 = supported(95);
  s.p99 = supported(99);
  return s;
}

std::string PercentileText(const char* name, const std::optional<double>& value, double p, int count) {
  if (value) return fmt::format("{} {:.4f} ms", name, *value);
  return fmt::format("{} needs {} runs (had {})", name, SamplesNeeded(p), count);
}

}  // namespace tfrun
