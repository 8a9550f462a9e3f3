// --benchmark N: runs the graph N times (or for --benchmark-duration
// seconds, at least N runs) after M warm-ups and reports the run's wall
// time statistics (cli/benchmark_stats.h), throughput, per-node times and
// GFLOP/s, and the cold path (process start to graph loaded, devices,
// first run) apart, under a header naming what ran where.
// --export-times FILE writes every run's wall time and node times.
#pragma once

#include <string>
#include <vector>

#include "cli/benchmark_stats.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "core/session/session.h"

namespace tfrun {

// The session's cold path, from process start (core/session/session.h).
using ColdTimes = SessionColdTimes;

struct BenchmarkOptions {
  int iterations = 0;         // at least this many timed runs
  int warmup = 0;
  double duration_s = 0;      // > 0: keep running until this much time has passed
  // Which timed runs' results to keep (for --trace).
  enum class Keep { kNone, kLast, kAll };
  Keep keep_runs = Keep::kNone;
};

// What ran where, for the header.
struct BenchmarkHost {
  std::string version;  // tfrun's
  std::string cpu_model;
  int intra_op_threads = 0;
  std::vector<std::string> devices;  // "/job:...GPU:0 (Tesla K20m, simulated)"
};

struct NodeBenchmark {
  int id = 0;
  std::string name;
  std::string device;
  double median_ms = 0;
  double mean_ms = 0;
  double gflops = 0;  // MatMul only; 0 otherwise
};

struct BenchmarkResult {
  BenchmarkOptions options;
  int runs = 0;  // timed runs made
  ColdTimes cold;
  BenchmarkHost host;
  SampleStats run;
  double runs_per_s = 0;
  double graph_gflops = 0;  // the MatMuls' work per run over the mean run; 0 when none is known
  std::vector<NodeBenchmark> nodes;  // in execution order
  // The raw samples, for --export-times: run wall times, and each node's
  // time in every run (by position in `nodes`).
  std::vector<double> run_ms;
  std::vector<std::vector<double>> node_ms;
  std::vector<RunResult> kept_runs;  // as options.keep_runs asks
};

// Runs `executor` on `fetch` with `feeds` (read once, fed to every run).
StatusOr<BenchmarkResult> RunBenchmark(Executor& executor, const Graph& graph, const DeviceSet& devices,
                                       const Placement& placement, const std::vector<NodeOutput>& fetch,
                                       const std::vector<Feed>& feeds, const BenchmarkOptions& options,
                                       const ColdTimes& cold, BenchmarkHost host);

std::string BenchmarkTable(const BenchmarkResult& result);
std::string BenchmarkJson(const BenchmarkResult& result);
// The warning a noisy sample earns (coefficient of variation above 10%),
// or "".
std::string NoiseWarning(const BenchmarkResult& result);

// --export-times: JSON ({"runs_ms": [...], "nodes": {NAME: {"device", "ms":
// [...]}}}) or, for a FILE ending in .csv, one row per run: run, wall_ms,
// then one column per node.
std::string ExportTimes(const BenchmarkResult& result, bool csv);

// /proc/cpuinfo's "model name", or "unknown CPU".
std::string CpuModel();

}  // namespace tfrun
