// tfrun: runs a graph file and prints the device mapping, the placement log
// and the results exactly as TensorFlow and NumPy print them.
//
// Every error travels up as a Status; only main() turns it into a message on
// standard error and an exit code (graph-format.md, "Exit codes").
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/benchmark.h"
#include "cli/devices.h"
#include "cli/report.h"
#include "core/array_printer.h"
#include "core/compat_profile.h"
#include "core/executor.h"
#include "core/did_you_mean.h"
#include "core/graph_file/loader.h"
#include "core/npy.h"
#include "core/placement_log.h"
#include "core/placer.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cuda/cuda_backend.h"

namespace tfrun {
namespace {

LoadLimits DefaultLimits() {
  LoadLimits limits;
  limits.max_tensor_bytes = static_cast<int64_t>(DefaultHostMemoryBudget());
  return limits;
}

struct Options {
  std::string graph_path;
  bool log_placement = false;
  bool soft_placement = false;
  bool no_soft_placement = false;  // eager places softly unless told not to
  std::vector<std::string> fetch;
  std::string compat = "tf2";
  std::string json_path;
  std::string out_dir;
  std::string dot_path;
  std::string tf32;  // "on" / "off"; "" = the graph's tensor_float_32
  int benchmark_runs = 0;
  int warmup_runs = 3;
  DeviceFlags device_flags;
  int intra_op_threads = -1;  // -1: from the graph's config
  LoadLimits limits = DefaultLimits();
};

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// What print() shows for one fetched value in the profile's era.
std::string PrintedValue(const Tensor& t, const CompatProfile& profile) {
  if (!t.is_valid()) return "None";  // sess.run(no_op) returns None
  if (profile.eager_tensor_repr) return EagerTensorStr(t);
  NumpyPrintOptions options;
  options.legacy_113 = profile.numpy_legacy_113;
  return NumpyStr(t, options);
}

Status EnsureDirectory(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? Status::Ok() : BadInput(fmt::format("--out {}: not a directory", dir));
  }
  if (mkdir(dir.c_str(), 0777) != 0) {
    return BadInput(fmt::format("--out {}: cannot create directory: {}", dir, std::strerror(errno)));
  }
  return Status::Ok();
}

std::string NpyFileName(const std::string& node_name) {
  std::string file;
  for (char c : node_name) file += c == '/' ? std::string("__") : std::string(1, c);
  return file + ".npy";
}

class GraphCommand {
 public:
  // `process_start` anchors the cold-path timings.
  GraphCommand(const Options& options, std::chrono::steady_clock::time_point process_start)
      : options_(options), process_start_(process_start) {}

  // Appends what TensorFlow would have printed to `stdout_text`, even when
  // a later step fails (the mapping and placement lines come first).
  Status Run(std::string* stdout_text) {
    const auto t0 = std::chrono::steady_clock::now();
    const CompatProfile* profile = FindProfile(options_.compat);
    if (profile == nullptr)
      return BadInput(fmt::format("--compat {}: expected tf2, tf1, tf0 or eager", options_.compat));

    StatusOr<Graph> graph = LoadGraphFile(options_.graph_path, options_.limits);
    if (!graph.ok()) return graph.status();
    graph_ = std::move(*graph);
    report_.graph = &graph_;
    report_.timings.load_ms = MsSince(t0);
    ColdTimes cold;
    cold.load_ms = MsSince(process_start_);
    const GraphConfig& config = graph_.config;

    TFRUN_RETURN_IF_ERROR(ResolveFetch());
    report_.fetch = fetch_;

    TFRUN_ASSIGN_OR_RETURN(GpuOptions gpu_options, ResolveGpuOptions(options_.device_flags, &config));
    SetCudaTf32(options_.tf32.empty() ? config.tensor_float_32 : options_.tf32 == "on");
    const auto t_devices = std::chrono::steady_clock::now();
    const bool log = options_.log_placement || config.log_device_placement;
    const GpuInventory inventory = InventoryForRun(
        graph_, options_.device_flags, gpu_options, log || !options_.json_path.empty() || !options_.dot_path.empty());
    TFRUN_ASSIGN_OR_RETURN(devices_, BuildDevices(options_.device_flags, gpu_options, inventory));
    report_.devices = &devices_.set;
    cold.devices_ms = MsSince(t_devices);

    // The session prints the mapping when it is created, then each node's
    // line as the placer assigns it, so a placement error comes after both.
    const DeviceSet& devices = devices_.set;
    if (log) *stdout_text += DeviceMappingBlock(devices, *profile);
    const auto t_place = std::chrono::steady_clock::now();
    const bool soft = !options_.no_soft_placement &&
                      (options_.soft_placement || config.allow_soft_placement || profile->soft_placement_default);
    Status placed = PlaceGraph(graph_, devices, soft, *profile, &placement_);
    for (const std::string& move : placement_.soft_moves) spdlog::info("{}", move);
    if (log) *stdout_text += PlacementLines(graph_, devices, placement_, *profile, {});
    if (!placed.ok()) return placed;
    report_.placement = &placement_;
    report_.timings.place_ms = MsSince(t_place);
    if (!options_.dot_path.empty()) {
      TFRUN_RETURN_IF_ERROR(WriteFileAtomically(options_.dot_path, PlacementDot(graph_, devices, placement_)));
    }
    for (int id = 0; id < static_cast<int>(graph_.nodes.size()); ++id) {
      if (devices[placement_.device_of[id]].simulated) {
        spdlog::info("kernels placed on the simulated GPUs of {} run on the host", options_.device_flags.topology_path);
        break;
      }
    }

    KernelRegistry kernels;
    RegisterCpuKernels(&kernels);
    RegisterCudaKernels(&kernels);  // binds only; CUDA and cuBLAS load on first GPU use
    const int threads =
        options_.intra_op_threads >= 0 ? options_.intra_op_threads : config.intra_op_parallelism_threads;
    SetCpuThreads(threads);
    const auto t_run = std::chrono::steady_clock::now();
    Executor executor(graph_, devices, placement_, kernels);
    StatusOr<RunResult> result = executor.Run(fetch_);
    if (!result.ok()) return result.status();
    result_ = std::move(*result);
    report_.result = &result_;
    report_.timings.run_ms = MsSince(t_run);
    cold.first_run_ms = MsSince(t_place);
    if (options_.benchmark_runs > 0) {
      TFRUN_ASSIGN_OR_RETURN(BenchmarkResult bench, RunBenchmark(executor, graph_, devices, placement_, fetch_,
                                                                 options_.benchmark_runs, options_.warmup_runs, cold));
      const std::string table = BenchmarkTable(bench);
      std::fwrite(table.data(), 1, table.size(), stderr);
      report_.benchmark_json = BenchmarkJson(bench);
    }

    if (log && profile->line_style == PlacementLineStyle::kExecutingOp) {
      *stdout_text += PlacementLines(graph_, devices, placement_, *profile, result_.executed);
    }
    for (const Tensor& t : result_.fetched) {
      report_.printed.push_back(PrintedValue(t, *profile));
      *stdout_text += report_.printed.back() + "\n";
    }
    if (!options_.out_dir.empty()) TFRUN_RETURN_IF_ERROR(WriteOutputs());
    report_.timings.total_ms = MsSince(t0);
    return Status::Ok();
  }

  Report& report() { return report_; }

 private:
  Status ResolveFetch() {
    if (options_.fetch.empty()) {
      fetch_ = graph_.fetch;
      return Status::Ok();
    }
    for (const std::string& name : options_.fetch) {
      const Node* node = graph_.Find(name);
      if (node == nullptr) {
        return BadInput(fmt::format("--fetch {}: {} has no node named '{}'{}", name, graph_.path, name,
                                    DidYouMean(name, graph_.NodeNames())));
      }
      if (std::find(fetch_.begin(), fetch_.end(), node->id) != fetch_.end()) {
        return BadInput(fmt::format("--fetch {}: fetched twice", name));
      }
      fetch_.push_back(node->id);
    }
    return Status::Ok();
  }

  Status WriteOutputs() {
    TFRUN_RETURN_IF_ERROR(EnsureDirectory(options_.out_dir));
    for (size_t i = 0; i < fetch_.size(); ++i) {
      const Tensor& t = result_.fetched[i];
      if (!t.is_valid()) continue;  // a NoOp has no value
      TFRUN_RETURN_IF_ERROR(WriteNpy(options_.out_dir + "/" + NpyFileName(graph_.nodes[fetch_[i]].name), t));
    }
    return Status::Ok();
  }

  const Options& options_;
  std::chrono::steady_clock::time_point process_start_;
  Graph graph_;
  Devices devices_;
  Placement placement_;
  RunResult result_;
  std::vector<int> fetch_;
  Report report_;
};

void SetUpLogging() {
  auto logger = spdlog::stderr_color_mt("tfrun");
  logger->set_pattern("tfrun: %^%l%$: %v");
  spdlog::set_default_logger(logger);
}

void AddDeviceOptions(CLI::App* app, DeviceFlags* flags) {
  app->add_option("--devices", flags->topology_path, "use the simulated GPUs of a topology file");
  app->add_option("--visible-devices", flags->visible_devices, "gpu_options.visible_device_list, e.g. 1,2");
  app->add_option("--virtual-devices", flags->virtual_devices,
                  "virtual devices: memory limits in MB per visible GPU, e.g. 1024,1024;2048");
  app->add_option("--per-process-gpu-memory-fraction", flags->memory_fraction,
                  "gpu_options.per_process_gpu_memory_fraction")
      ->check(CLI::Range(0.0, 1e6));
  app->add_flag("--allow-growth", flags->allow_growth, "gpu_options.allow_growth");
}

int Main(int argc, char** argv) {
  const auto process_start = std::chrono::steady_clock::now();
  SetUpLogging();
  Options options;
  CLI::App app{"tfrun: run a TensorFlow-style graph file and print placement and results as TensorFlow does"};
  app.add_option("graph", options.graph_path, "graph file (YAML, format version 1)");
  app.add_flag("--log-placement,--log-device-placement", options.log_placement,
               "print the device mapping and the placement log");
  app.add_flag("--soft-placement,--allow-soft-placement", options.soft_placement, "allow_soft_placement");
  app.add_flag("--no-soft-placement", options.no_soft_placement,
               "turn soft placement off, also where it is the default (--compat eager)");
  app.add_option("--fetch", options.fetch, "node to run and print (repeatable); overrides fetch:");
  app.add_option("--compat", options.compat, "output style: tf2 (default), tf1, tf0, eager")
      ->check(CLI::IsMember({"tf2", "tf1", "tf0", "eager"}));
  app.add_option("--json", options.json_path, "write a JSON report to FILE (- for standard output)");
  app.add_option("--out", options.out_dir, "write each fetched tensor as DIR/NAME.npy");
  app.add_option("--dot", options.dot_path, "write the placed graph as Graphviz DOT to FILE");
  app.add_option("--tf32", options.tf32, "TensorFloat-32 for float32 MatMul on GPUs (default: tensor_float_32, on)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--benchmark", options.benchmark_runs, "run the graph N more times and report timings on stderr")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--warmup", options.warmup_runs, "warm-up runs before --benchmark's timed runs (default 3)")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--intra-op-threads", options.intra_op_threads,
                 "threads per op (0: one per core; default: the graph's config)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--max-tensor-bytes", options.limits.max_tensor_bytes, "limit on the bytes of all constants together")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-file-bytes", options.limits.max_file_bytes, "limit on the graph file's size")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-nodes", options.limits.max_nodes, "limit on the number of nodes")->check(CLI::PositiveNumber);
  app.add_option("--max-depth", options.limits.max_depth, "limit on the nesting of scopes")->check(CLI::PositiveNumber);
  AddDeviceOptions(&app, &options.device_flags);
  CLI::App* devices_command =
      app.add_subcommand("devices", "list physical and logical devices (like tf.config.list_*_devices)");
  devices_command->fallthrough();
  try {
    app.parse(argc, argv);
    if (!devices_command->parsed() && options.graph_path.empty()) {
      throw CLI::RequiredError("graph");
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    spdlog::error("{} (see tfrun --help)", e.what());
    return 2;
  }

  if (devices_command->parsed()) {
    StatusOr<GpuOptions> gpu_options = ResolveGpuOptions(options.device_flags, nullptr);
    StatusOr<Devices> devices =
        gpu_options.ok() ? BuildDevices(options.device_flags, *gpu_options, GpuInventory::kDevicesAndMemory)
                         : StatusOr<Devices>(gpu_options.status());
    if (!devices.ok()) {
      spdlog::error("{}", devices.status().message());
      return ExitCodeFor(devices.status().kind());
    }
    std::string listing = DevicesListing(*devices);
    std::fwrite(listing.data(), 1, listing.size(), stdout);
    return 0;
  }

  SetHostMemoryBudget(static_cast<size_t>(options.limits.max_tensor_bytes));
  GraphCommand command(options, process_start);
  std::string stdout_text;
  Status status = command.Run(&stdout_text);
  Report& report = command.report();
  report.status = status;
  const bool json_to_stdout = options.json_path == "-";
  if (!json_to_stdout) std::fwrite(stdout_text.data(), 1, stdout_text.size(), stdout);
  std::fflush(stdout);
  if (!options.json_path.empty()) {
    std::string json = ReportToJson(report);
    if (json_to_stdout) {
      std::fwrite(json.data(), 1, json.size(), stdout);
    } else {
      Status written = WriteFileAtomically(options.json_path, json);
      if (!written.ok() && status.ok()) status = written;
    }
  }
  if (!status.ok()) {
    spdlog::error("{}", status.message());
    return ExitCodeFor(status.kind());
  }
  return 0;
}

}  // namespace
}  // namespace tfrun

int main(int argc, char** argv) { return tfrun::Main(argc, argv); }
