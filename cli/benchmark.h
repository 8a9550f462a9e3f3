// --benchmark N: runs the graph N times after M warm-ups and reports run
// and per-node wall times (min/median/p90/p99), GFLOP/s for MatMul, and the
// cold path (process start to graph loaded, devices, first run) apart.
#pragma once

#include <string>
#include <vector>

#include "core/device_set.h"
#include "core/executor.h"
#include "core/graph.h"
#include "core/placer.h"

namespace tfrun {

struct ColdTimes {
  double load_ms = 0;       // process start to graph loaded
  double devices_ms = 0;    // device discovery and set-up
  double first_run_ms = 0;  // the first run, including placement
};

struct NodeBenchmark {
  std::string name;
  std::string device;
  double median_ms = 0;
  double gflops = 0;  // MatMul only; 0 otherwise
};

struct BenchmarkResult {
  int iterations = 0;
  int warmup = 0;
  ColdTimes cold;
  double min_ms = 0, median_ms = 0, p90_ms = 0, p99_ms = 0;
  std::vector<NodeBenchmark> nodes;  // in execution order
};

// Runs `executor` warmup + iterations times on `fetch`.
StatusOr<BenchmarkResult> RunBenchmark(Executor& executor, const Graph& graph, const DeviceSet& devices,
                                       const Placement& placement, const std::vector<NodeOutput>& fetch,
                                       const std::vector<Feed>& feeds,
                                       int iterations, int warmup, const ColdTimes& cold);

std::string BenchmarkTable(const BenchmarkResult& result);
std::string BenchmarkJson(const BenchmarkResult& result);

// The nearest-rank percentile p (0..100) of `values` (sorted in place).
double Percentile(std::vector<double>& values, double p);

}  // namespace tfrun
