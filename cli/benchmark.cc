#include "cli/benchmark.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "cli/report.h"

namespace tfrun {
namespace {

using Clock = std::chrono::steady_clock;

double MatMulFlops(const Graph& graph, const Node& node) {
  if (node.op != "MatMul" && node.op != "SparseMatMul") return 0;
  const Shape& a = graph.nodes[node.inputs[0]].shape;
  if (a.size() != 2 || node.shape.size() != 2 || !IsFullyDefined(a) || !IsFullyDefined(node.shape)) {
    return 0;  // known only once fed
  }
  const double k = static_cast<double>(node.transpose_a ? a[0] : a[1]);
  return 2.0 * static_cast<double>(node.shape[0]) * static_cast<double>(node.shape[1]) * k;
}

// JSON numbers; a value that is not known is null, never 0.
std::string Number(double v, bool known = true) { return known ? fmt::format("{}", v) : "null"; }
std::string Number(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : "null"; }

std::string Plural(int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

}  // namespace

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

StatusOr<BenchmarkResult> RunBenchmark(Executor& executor, const Graph& graph, const DeviceSet& devices,
                                       const Placement& placement, const std::vector<NodeOutput>& fetch,
                                       const std::vector<Feed>& feeds, const BenchmarkOptions& options,
                                       const ColdTimes& cold, BenchmarkHost host) {
  BenchmarkResult result;
  result.options = options;
  result.cold = cold;
  result.host = std::move(host);
  const bool progress = isatty(STDERR_FILENO) != 0;
  std::vector<std::vector<double>> node_ms(graph.nodes.size());
  std::vector<int> order;
  executor.set_record_node_times(true);
  for (int i = 0; i < options.warmup; ++i) TFRUN_RETURN_IF_ERROR(executor.Run(fetch, feeds).status());
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::duration<double>(options.duration_s);
  auto last_progress = started;
  for (int i = 0; i < options.iterations || (options.duration_s > 0 && Clock::now() < deadline); ++i) {
    const auto t0 = Clock::now();
    TFRUN_ASSIGN_OR_RETURN(RunResult run, executor.Run(fetch, feeds));
    const auto t1 = Clock::now();
    result.run_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    for (int id : run.executed) node_ms[id].push_back(run.node_ms[id]);
    if (order.empty()) order = run.executed;
    if (options.keep_runs == BenchmarkOptions::Keep::kLast) result.kept_runs.clear();
    if (options.keep_runs != BenchmarkOptions::Keep::kNone) {
      run.fetched.clear();  // only the timeline is kept, not every run's tensors
      result.kept_runs.push_back(std::move(run));
    }
    if (progress && t1 - last_progress > std::chrono::milliseconds(100)) {
      std::fprintf(stderr, "\rtfrun: benchmark run %d%s", i + 1,
                   options.duration_s > 0 ? "" : fmt::format("/{}", options.iterations).c_str());
      last_progress = t1;
    }
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  result.runs = static_cast<int>(result.run_ms.size());
  result.run = Summarize(result.run_ms);
  result.runs_per_s = result.run.mean > 0 ? 1000.0 / result.run.mean : 0;
  double graph_flops = 0;
  for (int id : order) {
    const Node& node = graph.nodes[id];
    NodeBenchmark nb;
    nb.id = id;
    nb.name = node.name;
    nb.device = devices[placement.device_of[id]].name;
    const SampleStats s = Summarize(node_ms[id]);
    nb.median_ms = s.median;
    nb.mean_ms = s.mean;
    const double flops = MatMulFlops(graph, node);
    graph_flops += flops;
    if (flops > 0 && nb.median_ms > 0) nb.gflops = flops / (nb.median_ms * 1e6);
    result.nodes.push_back(nb);
    result.node_ms.push_back(std::move(node_ms[id]));
  }
  if (graph_flops > 0 && result.run.mean > 0) result.graph_gflops = graph_flops / (result.run.mean * 1e6);
  return result;
}

std::string BenchmarkTable(const BenchmarkResult& r) {
  const SampleStats& s = r.run;
  std::string out = fmt::format("benchmark: tfrun {}, {} after {}{}\n", r.host.version, Plural(r.runs, "run"),
                                Plural(r.options.warmup, "warm-up run"),
                                r.options.duration_s > 0 ? fmt::format(" ({} s asked)", r.options.duration_s) : "");
  out += fmt::format("  host:    {}, {} intra-op thread{}\n", r.host.cpu_model, r.host.intra_op_threads,
                     r.host.intra_op_threads == 1 ? "" : "s");
  for (size_t i = 0; i < r.host.devices.size(); ++i) {
    out += fmt::format("  {}{}\n", i == 0 ? "devices: " : "         ", r.host.devices[i]);
  }
  out += fmt::format("  cold:    load {:.3f} ms, devices {:.3f} ms, first run {:.3f} ms\n", r.cold.load_ms,
                     r.cold.devices_ms, r.cold.first_run_ms);
  out += fmt::format("  run:     min {:.4f} ms, max {:.4f} ms, mean {:.4f} ms, stddev {:.4f} ms (cv {:.1f}%)\n", s.min,
                     s.max, s.mean, s.stddev, 100 * s.cv);
  out += fmt::format("           median {:.4f} ms, {}, {}, {}\n", s.median, PercentileText("p90", s.p90, 90, s.count),
                     PercentileText("p95", s.p95, 95, s.count), PercentileText("p99", s.p99, 99, s.count));
  out += fmt::format("  throughput: {:.2f} runs/s{}\n", r.runs_per_s,
                     r.graph_gflops > 0 ? fmt::format(", {:.3g} GFLOP/s (the graph's MatMuls)", r.graph_gflops) : "");
  out += fmt::format("  {:<32} {:<48} {:>12} {:>12} {:>10}\n", "node", "device", "median ms", "mean ms", "GFLOP/s");
  for (const NodeBenchmark& n : r.nodes) {
    out += fmt::format("  {:<32} {:<48} {:>12.4f} {:>12.4f} {:>10}\n", n.name, n.device, n.median_ms, n.mean_ms,
                       n.gflops > 0 ? fmt::format("{:.3g}", n.gflops) : "");
  }
  return out;
}

std::string NoiseWarning(const BenchmarkResult& r) {
  if (r.run.count < 2 || r.run.cv <= 0.10) return "";
  return fmt::format("run times vary by {:.1f}% (coefficient of variation above 10%): the machine is busy or the "
                     "runs are short; more runs (--benchmark, --benchmark-duration) steady the numbers",
                     100 * r.run.cv);
}

std::string BenchmarkJson(const BenchmarkResult& r) {
  const SampleStats& s = r.run;
  std::vector<std::string> nodes;
  for (const NodeBenchmark& n : r.nodes) {
    nodes.push_back(fmt::format("{}:{{\"device\":{},\"median_ms\":{},\"mean_ms\":{},\"gflops\":{}}}",
                                Quote(n.name), Quote(n.device), n.median_ms, n.mean_ms,
                                Number(n.gflops, n.gflops > 0)));
  }
  std::vector<std::string> devices;
  for (const std::string& d : r.host.devices) devices.push_back(Quote(d));
  return fmt::format(
      "{{\"iterations\":{},\"warmup\":{},\"duration_s\":{},\"host\":{{\"tfrun\":{},\"cpu\":{},"
      "\"intra_op_threads\":{},\"devices\":[{}]}},\"cold_ms\":{{\"load\":{},\"devices\":{},\"first_run\":{}}},"
      "\"run_ms\":{{\"count\":{},\"min\":{},\"max\":{},\"mean\":{},\"stddev\":{},\"cv\":{},\"median\":{},"
      "\"p90\":{},\"p95\":{},\"p99\":{}}},\"throughput\":{{\"runs_per_s\":{},\"gflops\":{}}},\"nodes\":{{{}}}}}",
      r.runs, r.options.warmup, Number(r.options.duration_s, r.options.duration_s > 0), Quote(r.host.version),
      Quote(r.host.cpu_model), r.host.intra_op_threads, fmt::join(devices, ","), r.cold.load_ms,
      r.cold.devices_ms, r.cold.first_run_ms, s.count, s.min, s.max, s.mean, s.stddev, s.cv, s.median, Number(s.p90),
      Number(s.p95), Number(s.p99), r.runs_per_s, Number(r.graph_gflops, r.graph_gflops > 0), fmt::join(nodes, ","));
}

std::string ExportTimes(const BenchmarkResult& r, bool csv) {
  if (csv) {
    std::string out = "run,wall_ms";
    for (const NodeBenchmark& n : r.nodes) {
      // A name holding a comma or quote is quoted, as RFC 4180 asks.
      const bool quote = n.name.find_first_of(",\"") != std::string::npos;
      std::string escaped;
      for (char c : n.name) escaped += c == '"' ? std::string("\"\"") : std::string(1, c);
      out += "," + (quote ? "\"" + escaped + "\"" : n.name);
    }
    out += "\n";
    for (size_t run = 0; run < r.run_ms.size(); ++run) {
      out += fmt::format("{},{}", run, r.run_ms[run]);
      for (const std::vector<double>& ms : r.node_ms) out += run < ms.size() ? fmt::format(",{}", ms[run]) : ",";
      out += "\n";
    }
    return out;
  }
  std::vector<std::string> nodes;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    nodes.push_back(fmt::format("{}:{{\"device\":{},\"ms\":[{}]}}", Quote(r.nodes[i].name),
                                Quote(r.nodes[i].device), fmt::join(r.node_ms[i], ",")));
  }
  return fmt::format("{{\"runs_ms\":[{}],\"nodes\":{{{}}}}}\n", fmt::join(r.run_ms, ","), fmt::join(nodes, ","));
}

}  // namespace tfrun
