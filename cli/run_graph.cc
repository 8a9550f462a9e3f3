#include "cli/run_graph.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <cstdio>

#include "cli/benchmark.h"
#include "cli/cluster_session.h"
#include "cli/devices.h"
#include "cli/expect.h"
#include "cli/feeds.h"
#include "cli/npy_outputs.h"
#include "cli/report.h"
#include "cli/trace.h"
#include "cli/version.h"
#include "core/base/atomic_file.h"
#include "core/graph_def/graph_def_export.h"
#include "core/placement/placement_log.h"
#include "core/session/session.h"
#include "kernels/backends.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cuda/cuda_backend.h"

namespace tfrun {
namespace {

using Clock = std::chrono::steady_clock;

// A test hook (README, "Clusters"): TFRUN_TEST_STALL_TASK=R makes task R
// stop answering before it runs its part, as a hung or lost host would, so
// the tests can check that the others give up within the timeout.
void StallIfTestAsks(int rank) {
  const char* stall = std::getenv("TFRUN_TEST_STALL_TASK");
  if (stall != nullptr && std::atoi(stall) == rank && *stall != '\0') {
    std::this_thread::sleep_for(std::chrono::hours(1));
  }
}

// What the benchmark header names: this build, the CPU and its intra-op
// threads, and every device (GPUs with their name, simulated ones so marked).
BenchmarkHost BenchmarkHostOf(const DeviceSet& devices, int threads) {
  BenchmarkHost host;
  host.version = VersionField();
  host.cpu_model = CpuModel();
  host.intra_op_threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const Device& d : devices.devices()) {
    if (d.type == kGpu) {
      host.devices.push_back(
          fmt::format("{} ({}{})", d.name, d.gpu_name, d.simulated ? ", simulated: kernels run on the host" : ""));
    } else {
      host.devices.push_back(d.name);
    }
  }
  return host;
}

int64_t NsOf(Clock::time_point t) { return t.time_since_epoch().count(); }

}  // namespace

namespace {

// The files a run reads, each with what it is for messages.
std::vector<std::pair<std::string, std::string>> RunInputs(const RunOptions& options,
                                                           const std::vector<std::string>& extra_inputs) {
  std::vector<std::pair<std::string, std::string>> inputs = {{options.graph_path, "the graph file"}};
  for (const std::string& path : extra_inputs) inputs.push_back({path, "the graph file it names"});
  for (const std::string& feed : options.feeds) {
    if (const size_t at = feed.find("=@"); at != std::string::npos) inputs.push_back({feed.substr(at + 2), "a --feed file"});
  }
  if (!options.expect_path.empty()) inputs.push_back({options.expect_path, "--expect's file"});
  if (!options.device_flags.topology_path.empty()) inputs.push_back({options.device_flags.topology_path, "--devices' topology"});
  return inputs;
}

// Every output file but standard output and --out's (checked per file).
std::vector<std::pair<std::string, std::string>> RunOutputFiles(const RunOptions& options) {
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& [path, flag] : {std::pair{&options.json_path, "--json"}, std::pair{&options.dot_path, "--dot"},
                                   std::pair{&options.write_graph_path, "--write-graph"},
                                   std::pair{&options.write_graph_placed_path, "--write-graph-placed"},
                                   std::pair{&options.trace_path, "--trace"},
                                   std::pair{&options.export_times_path, "--export-times"}}) {
    if (!path->empty() && *path != "-") outputs.push_back({*path, flag});
  }
  return outputs;
}

}  // namespace

Status CheckRunOutputs(const RunOptions& options, const std::vector<std::string>& extra_inputs) {
  if (options.json_path == "-" && options.dot_path == "-") {
    return BadInput("--json - and --dot -: only one of them can have standard output");
  }
  const std::vector<std::pair<std::string, std::string>> inputs = RunInputs(options, extra_inputs);
  for (const auto& [output, flag] : RunOutputFiles(options)) {
    for (const auto& [input, what] : inputs) {
      if (IsSameFile(output, input)) {
        return BadInput(fmt::format("{} {}: is {} of this run ({}); tfrun does not write over its inputs", flag,
                                    output, what, input));
      }
    }
  }
  if (!options.json_path.empty()) TFRUN_RETURN_IF_ERROR(CheckOutputTarget(options.json_path, "--json", true).status());
  if (!options.dot_path.empty()) TFRUN_RETURN_IF_ERROR(CheckOutputTarget(options.dot_path, "--dot", true).status());
  for (const auto& [path, flag] : {std::pair{&options.write_graph_path, "--write-graph"},
                                   std::pair{&options.write_graph_placed_path, "--write-graph-placed"}}) {
    if (!path->empty()) TFRUN_RETURN_IF_ERROR(CheckOutputTarget(*path, flag, false).status());
  }
  if (!options.out_dir.empty()) TFRUN_RETURN_IF_ERROR(CheckNpyOutputDir(options.out_dir));
  if (!options.trace_path.empty()) TFRUN_RETURN_IF_ERROR(CheckOutputTarget(options.trace_path, "--trace", false).status());
  if (!options.export_times_path.empty()) {
    TFRUN_RETURN_IF_ERROR(CheckOutputTarget(options.export_times_path, "--export-times", false).status());
  }
  if (!options.expect_path.empty()) {
    struct stat st;
    if (access(options.expect_path.c_str(), R_OK) != 0) {
      return BadInput(fmt::format("--expect {}: cannot read the file: {}", options.expect_path, std::strerror(errno)));
    }
    if (stat(options.expect_path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return BadInput(fmt::format("--expect {}: is a directory, not a file", options.expect_path));
    }
  }
  return Status::Ok();
}


namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kFreeAtExit = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kFreeAtExit = true;
#else
constexpr bool kFreeAtExit = false;
#endif
#else
constexpr bool kFreeAtExit = false;
#endif

// The options a session runs under, resolved once from the command line.
SessionOptions SessionOptionsFor(const RunOptions& options, const CompatProfile* profile) {
  SessionOptions s;
  s.graph_path = options.graph_path;
  s.profile = profile;
  s.load = options.limits;
  s.import.semantics = options.import_semantics == "python" ? ImportSemantics::kPython : ImportSemantics::kSession;
  s.import.saved_model_tag = options.saved_model_tag;
  s.do_function_inlining = options.do_function_inlining;
  s.call = options.call;
  s.signature = options.signature;
  s.call_device = options.call_device;
  s.arg_devices = options.arg_devices;
  s.fetch = options.fetch;
  s.targets = options.targets;
  s.init = options.init;
  s.explain = options.explain;
  s.feeds = options.feeds;
  s.log_placement = options.log_placement;
  s.soft_placement = options.soft_placement;
  s.no_soft_placement = options.no_soft_placement;
  s.place_only = options.place_only;
  s.steps = options.steps;
  s.start_queue_runners = !options.no_queue_runners;
  s.print_every = options.print_every;
  s.batch = options.batch;
  s.benchmark = options.benchmark_runs > 0 || options.benchmark_duration_s > 0;
  s.timeout_seconds = options.timeout_seconds;
  if (!options.numpy.empty()) s.numpy2 = options.numpy == "2";
  s.record_events = !options.trace_path.empty();
  s.intra_op_threads = options.intra_op_threads;
  s.inter_op_threads = options.inter_op_threads;
  s.shows_devices = !options.json_path.empty() || !options.dot_path.empty();
  s.topology_path = options.device_flags.topology_path;
  // TensorFlow 2.21's tf.keras is tf_keras where TF_USE_LEGACY_KERAS is
  // "1", "true" or "True" (tensorflow/python/util/lazy_loader.py).
  const char* legacy = std::getenv("TF_USE_LEGACY_KERAS");
  const std::string_view legacy_keras = legacy == nullptr ? "" : legacy;
  if (legacy_keras == "1" || legacy_keras == "true" || legacy_keras == "True") {
    s.keras_version = KerasVersion::kKeras2;
  }
  return s;
}

// One run: the session's host (devices, cluster, kernels, feeds) and the
// outputs it writes while the session runs (SessionObserver) and after.
class GraphRun final : public SessionHost, public SessionObserver {
 public:
  // `options` must outlive it; `process_start` anchors the cold-path times.
  GraphRun(const RunOptions& options, Clock::time_point process_start)
      : options_(options), process_start_(process_start) {}

  // Appends what TensorFlow would have printed to `stdout_text`, also when
  // a later step fails (the mapping and placement lines come first). At
  // most once.
  Status Run(std::string* stdout_text);

  // A training loop's steps go to standard output as each is computed, as
  // Python's print() in the loop prints them, so Ctrl-C after 70,000 steps
  // leaves 70,000 lines, not none, and memory does not grow with the steps:
  // the text so far is written when the loop starts, then each step's line.
  // Asked for where standard output is the run's own (not --json - or
  // --dot -). What was written is kept for --expect, up to `keep_bytes`.
  void StreamTrainingSteps(int64_t keep_bytes) {
    stream_steps_ = true;
    keep_streamed_bytes_ = keep_bytes;
  }
  // What the run wrote itself (its first keep_bytes), and whether that is all.
  const std::string& streamed() const { return streamed_; }
  bool streamed_whole() const { return streamed_whole_; }

  // What the run did, for --json (with `status`, the process's outcome).
  std::string ReportJson(const Status& status) const;
  // What the session has made so far (nothing before Run).
  const SessionRecord* record() const { return session_ == nullptr ? nullptr : &session_->record(); }

  // Whether this process prints: always, except the non-master tasks of a
  // cluster run (the master prints the run's output and its verdict; a
  // task prints its own error only when the master could not be told).
  bool prints_output() const override { return cluster_ == nullptr || cluster_->is_master(); }
  bool prints_errors() const { return prints_errors_; }

  // Ends a cluster run's MPI after the output is written (no-op otherwise).
  void EndCluster(int exit_code);

  // SessionHost.
  StatusOr<DeviceSet*> BuildDevices(const Graph& graph, const GraphConfig& config, bool lists_devices) override;
  Status StartCluster(const Graph& graph, bool eager) override;
  Status JoinCluster(const Graph& graph, DeviceSet* devices) override;
  TensorChannel* channel() override { return cluster_ == nullptr ? nullptr : &cluster_->exchange(); }
  StatusOr<std::vector<Feed>> ReadFeeds(const Graph& graph) override {
    return ResolveFeeds(options_.feeds, graph, *profile_, options_.limits.max_tensor_bytes);
  }
  void BindKernels(KernelRegistry* kernels) override { BindAllBackendKernels(kernels); }
  Status StartCpuThreads(int threads) override {
    cpu_threads_ = threads;
    return tfrun::StartCpuThreads(threads);
  }
  void BeforeRun() override {
    if (cluster_ != nullptr) StallIfTestAsks(cluster_->rank());
  }

  // SessionObserver: the outputs written as the run goes.
  Status Loaded(const Graph& graph) override;
  Status Resolved(const Graph& graph, const std::vector<NodeOutput>& fetch) override;
  Status Placed(const Graph& graph, const DeviceSet& devices, const Placement& placement) override;
  Status FirstRun(Executor& executor, const std::vector<NodeOutput>& fetch, const std::vector<Feed>& feeds) override;
  Status StepsDone() override;
  Status StepsPrinted(std::string* stdout_text) override;

 private:
  // `devices`: each node's device field, by node id.
  Status WriteGraphDef(const Graph& graph, const std::string& path, std::string_view flag,
                       const std::vector<std::string>& devices) const;
  // --trace: the run (under --benchmark the last timed run, or with
  // --trace-all the first run and every timed one), with the phases before
  // it. In a cluster run every task sends its events to the master (all
  // tasks call this), which writes one file.
  Status WriteTrace();

  const RunOptions& options_;
  Clock::time_point process_start_;
  const CompatProfile* profile_ = nullptr;
  SessionOptions session_options_;
  // The devices and the cluster outlive what the session and the
  // benchmark's runs hold (tensors in the devices' memory, the channel):
  // members are destroyed last to first.
  Devices devices_;
  bool devices_built_ = false;
  std::unique_ptr<ClusterSession> cluster_;  // config.cluster with more than one task
  std::unique_ptr<Session> session_;
  int cpu_threads_ = 0;
  std::vector<RunResult> benchmark_runs_;  // the benchmark's runs --trace shows
  std::string benchmark_json_;
  bool prints_errors_ = true;
  bool stream_steps_ = false;
  int64_t keep_streamed_bytes_ = 0;
  std::string streamed_;
  bool streamed_whole_ = true;
};

Status GraphRun::Run(std::string* stdout_text) {
  profile_ = FindProfile(options_.compat);
  if (profile_ == nullptr) {
    return BadInput(fmt::format("--compat {}: expected one of {}", options_.compat, fmt::join(ProfileNames(), ", ")));
  }
  session_options_ = SessionOptionsFor(options_, profile_);
  session_ = Session::Create(session_options_, this, this, process_start_);
  Status status = session_->Run(stdout_text);
  // --out: the fetched values, once the run has them.
  if (status.ok() && !options_.out_dir.empty() && prints_output() && session_->record().result != nullptr) {
    status = WriteNpyOutputs(options_.out_dir, session_->graph(), session_->record().fetch,
                             session_->result().fetched);
  }
  if (cluster_ == nullptr) return status;
  status = cluster_->Conclude(status);
  // The master reports the verdict; another task only when the master
  // did not answer (it may be gone).
  prints_errors_ = cluster_->is_master() || (!status.ok() && !cluster_->exchange().master_answered());
  if (!cluster_->is_master()) stdout_text->clear();
  return status;
}

std::string GraphRun::ReportJson(const Status& status) const {
  Report report;
  if (session_ != nullptr) static_cast<SessionRecord&>(report) = session_->record();
  report.benchmark_json = benchmark_json_;
  report.version = VersionField();
  report.status = status;
  return ReportToJson(report);
}

void GraphRun::EndCluster(int exit_code) {
  if (cluster_ != nullptr) {
    cluster_->Shutdown(exit_code);
    return;
  }
  // Every task found the same fault before MPI started and the first one
  // says it: the others linger, since mpirun ends the whole job at the
  // first non-zero exit and could end the first before its line is out
  // (seen once under a loaded CI machine). The first's exit ends them.
  if (exit_code != 0 && !prints_errors_) std::this_thread::sleep_for(std::chrono::seconds(2));
}

// A cluster with more than one task runs one process per task under MPI.
Status GraphRun::StartCluster(const Graph& graph, bool eager) {
  if (graph.config.cluster.size() <= 1) return Status::Ok();
  bool quiet = false;
  StatusOr<std::unique_ptr<ClusterSession>> session = ClusterSession::Start(graph, options_, eager, &quiet);
  if (!session.ok()) {
    prints_errors_ = !quiet;
    return session.status();
  }
  cluster_ = std::move(*session);
  return Status::Ok();
}

StatusOr<DeviceSet*> GraphRun::BuildDevices(const Graph& graph, const GraphConfig& config, bool lists_devices) {
  if (devices_built_) return &devices_.set;
  TFRUN_ASSIGN_OR_RETURN(GpuOptions gpu_options, ResolveGpuOptions(options_.device_flags, &config));
  gpu_options.xla_devices_by_default = profile_->xla_devices_by_default;
  // While loading, `graph` is still empty; a lister always wants the GPUs.
  const GpuInventory inventory = InventoryForRun(graph, options_.device_flags, gpu_options, lists_devices);
  std::optional<std::pair<std::string, int>> task;  // a cluster task's own topology entry
  if (cluster_ != nullptr) task.emplace(config.cluster[cluster_->rank()].job, config.cluster[cluster_->rank()].index);
  TFRUN_ASSIGN_OR_RETURN(devices_, tfrun::BuildDevices(options_.device_flags, gpu_options, inventory, task));
  devices_built_ = true;
  return &devices_.set;
}

Status GraphRun::JoinCluster(const Graph& graph, DeviceSet* devices) {
  if (cluster_ != nullptr) return cluster_->JoinDevices(devices);
  const GraphConfig& config = graph.config;
  if (config.cluster.size() == 1) devices->MoveToTask(config.cluster[0].job, config.cluster[0].index, 0);  // no MPI
  return Status::Ok();
}

Status GraphRun::Loaded(const Graph& graph) {
  // A wrapper's graph_def file is an input too, known once it is loaded.
  if (graph.path != options_.graph_path) TFRUN_RETURN_IF_ERROR(CheckRunOutputs(options_, {graph.path}));
  if (graph.keras.present && (!options_.write_graph_path.empty() || !options_.write_graph_placed_path.empty())) {
    return BadInput(fmt::format("--write-graph: {} is a Keras program, not a graph: eager TensorFlow runs its ops "
                                "one by one, and no GraphDef holds them",
                                graph.path));
  }
  if (!options_.write_graph_path.empty() && prints_output()) {
    std::vector<std::string> requested;
    requested.reserve(graph.nodes.size());
    for (const Node& node : graph.nodes) requested.push_back(node.requested_device.ToString());
    TFRUN_RETURN_IF_ERROR(WriteGraphDef(graph, options_.write_graph_path, "--write-graph", requested));
  }
  return Status::Ok();
}

Status GraphRun::Resolved(const Graph& graph, const std::vector<NodeOutput>& fetch) {
  if (options_.out_dir.empty()) return Status::Ok();
  std::vector<std::string> inputs;
  for (const auto& [path, what] : RunInputs(options_, {graph.path})) inputs.push_back(path);
  return CheckNpyOutputNames(options_.out_dir, graph, fetch, inputs);
}

Status GraphRun::Placed(const Graph& graph, const DeviceSet& devices, const Placement& placement) {
  if (!options_.dot_path.empty()) {
    TFRUN_ASSIGN_OR_RETURN(const OutputTarget dot, CheckOutputTarget(options_.dot_path, "--dot", true));
    TFRUN_RETURN_IF_ERROR(WriteOutput(dot, PlacementDot(graph, devices, placement)));
  }
  if (!options_.write_graph_placed_path.empty()) {
    std::vector<std::string> assigned;
    assigned.reserve(graph.nodes.size());
    for (int d : placement.device_of) assigned.push_back(devices[d].name);
    TFRUN_RETURN_IF_ERROR(WriteGraphDef(graph, options_.write_graph_placed_path, "--write-graph-placed", assigned));
  }
  return Status::Ok();
}

Status GraphRun::WriteGraphDef(const Graph& graph, const std::string& path, std::string_view flag,
                               const std::vector<std::string>& devices) const {
  TFRUN_ASSIGN_OR_RETURN(const OutputTarget target, CheckOutputTarget(path, flag, false));
  StatusOr<std::string> bytes = GraphDefBytes(graph, devices, IsTextGraphDefPath(path), options_.saved_model_tag,
                                              options_.limits.max_file_bytes);
  if (!bytes.ok()) return BadInput(fmt::format("{} {}: {}", flag, path, bytes.status().message()));
  return WriteOutput(target, *bytes);
}

// --benchmark after the first run (every task of a cluster runs it), then --trace.
Status GraphRun::FirstRun(Executor& executor, const std::vector<NodeOutput>& fetch, const std::vector<Feed>& feeds) {
  if (options_.benchmark_runs > 0 || options_.benchmark_duration_s > 0) {
    BenchmarkOptions bench_options;
    bench_options.iterations = options_.benchmark_runs;
    bench_options.warmup = options_.warmup_runs;
    bench_options.duration_s = options_.benchmark_duration_s;
    bench_options.keep_runs = options_.trace_path.empty() ? BenchmarkOptions::Keep::kNone
                              : options_.trace_all        ? BenchmarkOptions::Keep::kAll
                                                          : BenchmarkOptions::Keep::kLast;
    if (bench_options.iterations == 0) bench_options.iterations = 1;
    const DeviceSet& devices = *session_->devices();
    TFRUN_ASSIGN_OR_RETURN(BenchmarkResult bench,
                           RunBenchmark(executor, session_->graph(), devices, session_->placement(), fetch, feeds,
                                        bench_options, session_->cold_times(), BenchmarkHostOf(devices, cpu_threads_)));
    const std::string table = BenchmarkTable(bench);
    if (prints_output()) {
      std::fwrite(table.data(), 1, table.size(), stderr);
      if (const std::string noise = NoiseWarning(bench); !noise.empty()) spdlog::warn("{}", noise);
    }
    benchmark_json_ = BenchmarkJson(bench);
    benchmark_runs_ = std::move(bench.kept_runs);
    if (!options_.export_times_path.empty() && prints_output()) {
      TFRUN_ASSIGN_OR_RETURN(const OutputTarget times,
                             CheckOutputTarget(options_.export_times_path, "--export-times", false));
      const std::string& path = options_.export_times_path;
      const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
      TFRUN_RETURN_IF_ERROR(WriteOutput(times, ExportTimes(bench, csv)));
    }
  }
  if (!options_.trace_path.empty()) TFRUN_RETURN_IF_ERROR(WriteTrace());
  return Status::Ok();
}

// --trace of a training loop: its last step.
Status GraphRun::StepsDone() { return options_.trace_path.empty() ? Status::Ok() : WriteTrace(); }

Status GraphRun::StepsPrinted(std::string* stdout_text) {
  if (!stream_steps_ || cluster_ != nullptr) return Status::Ok();
  // Standard output now, and kept for --expect.
  TFRUN_RETURN_IF_ERROR(WriteStdout(*stdout_text));
  const int64_t room = keep_streamed_bytes_ - static_cast<int64_t>(streamed_.size());
  if (static_cast<int64_t>(stdout_text->size()) > room) streamed_whole_ = false;
  streamed_.append(*stdout_text, 0,
                   static_cast<size_t>(std::clamp<int64_t>(room, 0, static_cast<int64_t>(stdout_text->size()))));
  stdout_text->clear();
  return Status::Ok();
}

Status GraphRun::WriteTrace() {
  const RunResult& first = session_->result();
  std::vector<const RunResult*> mine;
  if (benchmark_runs_.empty() || options_.trace_all) mine.push_back(&first);
  for (const RunResult& r : benchmark_runs_) mine.push_back(&r);
  std::vector<RunResult> tasks_runs;  // the other tasks' events, merged by run
  const Graph& graph = session_->graph();
  if (cluster_ != nullptr) {
    TFRUN_ASSIGN_OR_RETURN(const std::vector<std::string> all, cluster_->exchange().AllGather(EncodeRunEvents(mine)));
    if (!prints_output()) return Status::Ok();
    for (size_t r = 0; r < all.size(); ++r) {
      if (static_cast<int>(r) != cluster_->rank()) {
        TFRUN_RETURN_IF_ERROR(DecodeRunEvents(all[r], graph.nodes.size(), &tasks_runs));
      }
    }
  }
  TraceInput in;
  in.graph = &graph;
  in.devices = session_->devices();
  in.placement = &session_->placement();
  in.phases = session_->phases();
  in.origin_ns = NsOf(process_start_);
  in.runs = mine;
  for (size_t i = 0; i < tasks_runs.size(); ++i) {
    // Run i of every task together: the flows between tasks join them.
    if (i < mine.size()) {
      tasks_runs[i].events.insert(tasks_runs[i].events.begin(), mine[i]->events.begin(), mine[i]->events.end());
      in.runs[i] = &tasks_runs[i];
    } else {
      in.runs.push_back(&tasks_runs[i]);
    }
  }
  TFRUN_ASSIGN_OR_RETURN(const OutputTarget trace, CheckOutputTarget(options_.trace_path, "--trace", false));
  return WriteOutput(trace, ChromeTrace(in));
}

Status CompareWithExpected(const RunOptions& options, const std::string& expected, const std::string& actual) {
  const Tolerance tolerance{options.rtol, options.atol, options.tolerance_given};
  if (OutputsMatch(expected, actual, tolerance)) return Status::Ok();
  const std::string diff = UnifiedDiff(expected, actual, options.expect_path, "standard output");
  std::fwrite(diff.data(), 1, diff.size(), stderr);
  return Status(ErrorKind::kMismatch, fmt::format("standard output differs from {}{}", options.expect_path,
                                                  tolerance.enabled ? " (beyond the tolerance)" : ""));
}

}  // namespace

int ExitWith(const Status& status) {
  if (status.ok()) return 0;
  spdlog::error("{}", EscapeForTerminal(status.message()));
  return ExitCodeFor(status.kind());
}

// `tfrun GRAPH`: standard output gets what TensorFlow prints, also when a
// later step failed; --json gets the report, the error included.
Status PlaceGraphQuietly(const RunOptions& options, const PlacedGraphFn& placed) {
  RunOptions quiet = options;
  quiet.place_only = true;
  quiet.log_placement = false;
  quiet.explain.clear();
  GraphRun run(quiet, Clock::now());
  std::string ignored;
  TFRUN_RETURN_IF_ERROR(run.Run(&ignored));
  const SessionRecord* record = run.record();
  if (record == nullptr || record->graph == nullptr || record->devices == nullptr || record->placement == nullptr) {
    return RuntimeError(fmt::format("{}: the graph was not placed", options.graph_path));
  }
  return placed(*record->graph, *record->devices, *record->placement);
}

int RunGraphCommand(const RunOptions& options, std::chrono::steady_clock::time_point process_start) {
  SetHostMemoryBudget(static_cast<size_t>(options.limits.max_tensor_bytes));
  // The run (graph, placement, results) lives until the process ends and
  // is never destroyed: freeing a million nodes one by one takes 0.4 s
  // that the kernel does at once (clang's -disable-free does the same).
  // Sanitizer builds destroy it, so leak checks see everything.
  // Every output is checked before anything runs (exit 2, nothing written).
  if (Status checked = CheckRunOutputs(options); !checked.ok()) return ExitWith(checked);
  // The expected output is read first, bounded: a file it cannot be is
  // bad usage (exit 2), known before anything runs.
  std::string expected;
  if (!options.expect_path.empty()) {
    if (Status read = ReadFileAtMost(options.expect_path, options.limits.max_file_bytes, &expected); !read.ok()) {
      return ExitWith(BadInput(fmt::format("--expect {}{}", read.message(),
                                           read.message().find("more than") != std::string::npos
                                               ? " (--max-file-bytes)"
                                               : "")));
    }
  }
  std::unique_ptr<GraphRun> owned = std::make_unique<GraphRun>(options, process_start);
  GraphRun& run = kFreeAtExit ? *owned : *owned.release();
  std::string stdout_text;
  // --json - and --dot - take standard output for themselves.
  const bool stdout_taken = options.json_path == "-" || options.dot_path == "-";
  // Training steps stream; --expect keeps what it may need of them (a
  // longer output is a mismatch whatever the tolerance).
  if (!stdout_taken) run.StreamTrainingSteps(options.expect_path.empty() ? 0 : 2 * expected.size() + (1 << 20));
  Status status = run.Run(&stdout_text);
  if (!stdout_taken && run.prints_output()) {
    Status written = WriteStdout(stdout_text);
    if (!written.ok() && status.ok()) status = written;
  }
  if (!options.expect_path.empty() && run.prints_output()) {
    Status compared = run.streamed_whole()
                          ? CompareWithExpected(options, expected, run.streamed() + stdout_text)
                          : Status(ErrorKind::kMismatch,
                                   fmt::format("standard output differs from {}: it has more than {} bytes, the file {}",
                                               options.expect_path, run.streamed().size(), expected.size()));
    if (!compared.ok() && status.ok()) status = compared;
  }
  // The report is written last, so its "error" and "exit_code" are the
  // process's own: a mismatch or a failed write of standard output too.
  if (!options.json_path.empty() && run.prints_output()) {
    StatusOr<OutputTarget> target = CheckOutputTarget(options.json_path, "--json", true);
    Status written = target.ok() ? WriteOutput(*target, run.ReportJson(status)) : target.status();
    if (!written.ok() && status.ok()) status = written;
  }
  int code = 0;
  if (!status.ok()) code = run.prints_errors() ? ExitWith(status) : ExitCodeFor(status.kind());
  run.EndCluster(code);
  return code;
}

}  // namespace tfrun
