#include "cli/benchmark.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace tfrun {

double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

namespace {

double MatMulFlops(const Graph& graph, const Node& node) {
  if (node.op != "MatMul") return 0;
  const Shape& a = graph.nodes[node.inputs[0]].shape;
  if (a.size() != 2 || node.shape.size() != 2 || !IsFullyDefined(a) || !IsFullyDefined(node.shape)) {
    return 0;  // known only once fed
  }
  const double k = static_cast<double>(node.transpose_a ? a[0] : a[1]);
  return 2.0 * static_cast<double>(node.shape[0]) * static_cast<double>(node.shape[1]) * k;
}

}  // namespace

StatusOr<BenchmarkResult> RunBenchmark(Executor& executor, const Graph& graph, const DeviceSet& devices,
                                       const Placement& placement, const std::vector<NodeOutput>& fetch,
                                       const std::vector<Feed>& feeds, int iterations, int warmup, const ColdTimes& cold) {
  BenchmarkResult result;
  result.iterations = iterations;
  result.warmup = warmup;
  result.cold = cold;
  const bool progress = isatty(STDERR_FILENO) != 0;
  std::vector<double> run_ms;
  std::vector<std::vector<double>> node_ms(graph.nodes.size());
  std::vector<int> order;
  auto last_progress = std::chrono::steady_clock::now();
  for (int i = 0; i < warmup + iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    TFRUN_ASSIGN_OR_RETURN(RunResult run, executor.Run(fetch, feeds));
    const auto t1 = std::chrono::steady_clock::now();
    if (i < warmup) continue;
    run_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    for (int id : run.executed) node_ms[id].push_back(run.node_ms[id]);
    if (order.empty()) order = run.executed;
    if (progress && t1 - last_progress > std::chrono::milliseconds(100)) {
      std::fprintf(stderr, "\rtfrun: benchmark run %d/%d", i - warmup + 1, iterations);
      last_progress = t1;
    }
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  result.min_ms = Percentile(run_ms, 0);
  result.median_ms = Percentile(run_ms, 50);
  result.p90_ms = Percentile(run_ms, 90);
  result.p99_ms = Percentile(run_ms, 99);
  for (int id : order) {
    const Node& node = graph.nodes[id];
    NodeBenchmark nb;
    nb.name = node.name;
    nb.device = devices[placement.device_of[id]].name;
    nb.median_ms = Percentile(node_ms[id], 50);
    const double flops = MatMulFlops(graph, node);
    if (flops > 0 && nb.median_ms > 0) nb.gflops = flops / (nb.median_ms * 1e6);
    result.nodes.push_back(nb);
  }
  return result;
}

std::string BenchmarkTable(const BenchmarkResult& r) {
  std::string out = fmt::format(
      "benchmark: {} runs after {} warm-up runs\n"
      "  cold:  load {:.3f} ms, devices {:.3f} ms, first run {:.3f} ms\n"
      "  run:   min {:.4f} ms, median {:.4f} ms, p90 {:.4f} ms, p99 {:.4f} ms\n"
      "  {:<32} {:<48} {:>12} {:>10}\n",
      r.iterations, r.warmup, r.cold.load_ms, r.cold.devices_ms, r.cold.first_run_ms, r.min_ms, r.median_ms,
      r.p90_ms, r.p99_ms, "node", "device", "median ms", "GFLOP/s");
  for (const NodeBenchmark& n : r.nodes) {
    out += fmt::format("  {:<32} {:<48} {:>12.4f} {:>10}\n", n.name, n.device, n.median_ms,
                       n.gflops > 0 ? fmt::format("{:.1f}", n.gflops) : "");
  }
  return out;
}

std::string BenchmarkJson(const BenchmarkResult& r) {
  std::vector<std::string> nodes;
  for (const NodeBenchmark& n : r.nodes) {
    nodes.push_back(fmt::format("\"{}\":{{\"device\":\"{}\",\"median_ms\":{},\"gflops\":{}}}", n.name, n.device,
                                n.median_ms, n.gflops));
  }
  return fmt::format(
      "{{\"iterations\":{},\"warmup\":{},\"cold_ms\":{{\"load\":{},\"devices\":{},\"first_run\":{}}},"
      "\"run_ms\":{{\"min\":{},\"median\":{},\"p90\":{},\"p99\":{}}},\"nodes\":{{{}}}}}",
      r.iterations, r.warmup, r.cold.load_ms, r.cold.devices_ms, r.cold.first_run_ms, r.min_ms, r.median_ms,
      r.p90_ms, r.p99_ms, fmt::join(nodes, ","));
}

}  // namespace tfrun
