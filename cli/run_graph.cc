#include "cli/run_graph.h"

#include "core/passes/pass_registry.h"

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
#include "cli/feeds.h"
#include "cli/npy_outputs.h"
#include "cli/process_memory.h"
#include "cli/trace.h"
#include "cli/version.h"
#include "core/base/atomic_file.h"
#include "core/base/did_you_mean.h"
#include "core/graph_def/graph_def_export.h"
#include "core/graph_def/graph_file_loader.h"
#include "core/placement/placement_log.h"
#include "core/printing/array_printer.h"
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

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

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

Status GraphRun::Run(std::string* stdout_text) {
  Status status = RunSteps(stdout_text);
  if (cluster_ == nullptr) return status;
  status = cluster_->Conclude(status);
  // The master reports the verdict; another task only when the master
  // did not answer (it may be gone).
  prints_errors_ = cluster_->is_master() || (!status.ok() && !cluster_->exchange().master_answered());
  if (!cluster_->is_master()) stdout_text->clear();
  return status;
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
Status GraphRun::StartCluster() {
  if (graph_.config.cluster.size() <= 1) return Status::Ok();
  bool quiet = false;
  StatusOr<std::unique_ptr<ClusterSession>> session =
      ClusterSession::Start(graph_, options_, profile_->execution == ExecutionModel::kEager, &quiet);
  if (!session.ok()) {
    prints_errors_ = !quiet;
    return session.status();
  }
  cluster_ = std::move(*session);
  return Status::Ok();
}

Status GraphRun::RunSteps(std::string* stdout_text) {
  const auto t0 = Clock::now();
  profile_ = FindProfile(options_.compat);
  if (profile_ == nullptr) {
    return BadInput(fmt::format("--compat {}: expected one of {}", options_.compat, fmt::join(ProfileNames(), ", ")));
  }
  TFRUN_RETURN_IF_ERROR(CheckTrainingFlags());
  TFRUN_RETURN_IF_ERROR(Load());
  // A wrapper's graph_def file is an input too, known once it is loaded.
  if (graph_.path != options_.graph_path) TFRUN_RETURN_IF_ERROR(CheckRunOutputs(options_, {graph_.path}));
  TFRUN_RETURN_IF_ERROR(StartCluster());
  if (options_.steps > 0 && graph_.config.cluster.size() > 1) {
    return BadInput(fmt::format("--steps: {} spans a cluster; tfrun runs a cluster's graph for one step", graph_.path));
  }
  if (!options_.write_graph_path.empty() && prints_output()) {
    std::vector<std::string> requested;
    requested.reserve(graph_.nodes.size());
    for (const Node& node : graph_.nodes) requested.push_back(node.requested_device.ToString());
    TFRUN_RETURN_IF_ERROR(WriteGraphDef(options_.write_graph_path, "--write-graph", requested));
  }
  // TensorFlow's passes before placement (core/passes): after the graph
  // is written as given, before its fetches are found.
  TFRUN_RETURN_IF_ERROR(RunPrePlacementPasses(&graph_, devices_built_ ? &devices_.set : nullptr));
  TFRUN_RETURN_IF_ERROR(ResolveFetch());
  TFRUN_RETURN_IF_ERROR(ResolveTargets());
  TFRUN_RETURN_IF_ERROR(ResolveExplain());
  if (!options_.out_dir.empty()) {
    std::vector<std::string> inputs;
    for (const auto& [path, what] : RunInputs(options_, {graph_.path})) inputs.push_back(path);
    TFRUN_RETURN_IF_ERROR(CheckNpyOutputNames(options_.out_dir, graph_, fetch_, inputs));
  }
  const bool log = options_.log_placement || graph_.config.log_device_placement;
  TFRUN_RETURN_IF_ERROR(BuildRunDevices(log));
  // A TensorFlow graph file with nothing to fetch or run: the user asks
  // where its nodes go, which the Session's first run would decide.
  place_only_ = options_.place_only ||
                (!graph_.imported.empty() && fetch_.empty() && target_runs_.empty() && init_runs_.empty());
  if (place_only_ && !options_.place_only && !log) {
    spdlog::info("{}: nothing to fetch: placed the whole graph (--log-placement prints where each node went)",
                 graph_.path);
  }
  if (fetch_.empty() && target_runs_.empty() && init_runs_.empty() && profile_->execution == ExecutionModel::kSession &&
      !place_only_) {
    // A TF1 program with nothing to fetch makes its session (which prints
    // the device mapping) and runs no step: nothing is placed or logged.
    if (log && graph_.config.cluster.empty()) *stdout_text += DeviceMappingBlock(devices_.set, *profile_);
    ExplainUnplaced(stdout_text);
    report_.timings.total_ms = MsSince(t0);
    return Status::Ok();
  }
  TFRUN_RETURN_IF_ERROR(OpenSession(log, stdout_text));
  if (place_only_) {
    // The placement TensorFlow's first run makes, of the whole graph.
    TFRUN_RETURN_IF_ERROR(Place(log, stdout_text));
    if (log && profile_->execution == ExecutionModel::kEager) *stdout_text += ExecutedOpLines(eager_.executed, devices_.set);
    report_.timings.total_ms = MsSince(t0);
    return Status::Ok();
  }
  if (profile_->execution == ExecutionModel::kSession && target_runs_.empty() && init_runs_.empty() &&
      options_.steps == 0 && AnswerFromFeeds()) {
    ExplainUnplaced(stdout_text);
    PrintResults(log, stdout_text);
  } else {
    TFRUN_RETURN_IF_ERROR(Place(log, stdout_text));
    TFRUN_RETURN_IF_ERROR(Execute(stdout_text, log));
  }
  if (!options_.out_dir.empty() && prints_output()) {
    TFRUN_RETURN_IF_ERROR(WriteNpyOutputs(options_.out_dir, graph_, fetch_, result_.fetched));
  }
  report_.timings.total_ms = MsSince(t0);
  return Status::Ok();
}

Status GraphRun::CheckTrainingFlags() const {
  if (options_.steps == 0) {
    if (options_.print_every > 0) return BadInput("--print-every: only with --steps");
    if (options_.batch > 0) return BadInput("--batch: only with --steps");
    return Status::Ok();
  }
  if (profile_->execution == ExecutionModel::kEager) {
    return BadInput(fmt::format("--steps: --compat {} runs op by op; a training loop runs a graph's session "
                                "(--compat tf2, tf1 or tf0)",
                                options_.compat));
  }
  if (options_.benchmark_runs > 0 || options_.benchmark_duration_s > 0) {
    return BadInput("--steps and --benchmark: a training loop changes its variables every step; time it with "
                    "bench/train.py or --trace");
  }
  if (options_.place_only) return BadInput("--steps and --place-only: --place-only runs nothing");
  if (options_.batch > 0 && std::none_of(options_.feeds.begin(), options_.feeds.end(), [](const std::string& f) {
        return f.find("=@") != std::string::npos;
      })) {
    return BadInput("--batch: no --feed NAME=@FILE.npy to take the batches from (a literal feeds every step whole)");
  }
  return Status::Ok();
}

Status GraphRun::WriteGraphDef(const std::string& path, std::string_view flag,
                               const std::vector<std::string>& devices) const {
  TFRUN_ASSIGN_OR_RETURN(const OutputTarget target, CheckOutputTarget(path, flag, false));
  StatusOr<std::string> bytes = GraphDefBytes(graph_, devices, IsTextGraphDefPath(path), options_.saved_model_tag,
                                              options_.limits.max_file_bytes);
  if (!bytes.ok()) return BadInput(fmt::format("{} {}: {}", flag, path, bytes.status().message()));
  return WriteOutput(target, *bytes);
}

Status GraphRun::Load() {
  const auto t0 = Clock::now();
  // A for_each_device scope needs the run's devices, under the graph's config.
  auto lister = [this](const GraphConfig& config, std::string_view type) -> StatusOr<std::vector<int>> {
    if (config.cluster.size() > 1) {
      return BadInput("for_each_device repeats nodes over one process's devices; a cluster graph names its "
                      "tasks' devices instead");
    }
    TFRUN_RETURN_IF_ERROR(MakeDevices(config, /*lists_devices=*/true));
    std::vector<int> ids;
    for (const Device& d : devices_.set.devices()) {
      if (d.type == type) ids.push_back(d.id);
    }
    return ids;
  };
  LoadOptions load_options = options_.limits;
  load_options.construction_errors = profile_->construction_errors;
  GraphDefImportOptions import;
  import.semantics = options_.import_semantics == "python" ? ImportSemantics::kPython : ImportSemantics::kSession;
  import.saved_model_tag = options_.saved_model_tag;
  import.max_file_bytes = load_options.max_file_bytes;
  import.max_nodes = load_options.max_nodes;
  import.max_tensor_bytes = load_options.max_tensor_bytes;
  StatusOr<Graph> graph = LoadAnyGraphFile(options_.graph_path, load_options, import, lister);
  if (!graph.ok()) return graph.status();
  if (!graph->imported.empty() && profile_->execution == ExecutionModel::kEager) {
    return BadInput(fmt::format("--compat {}: {} is a TensorFlow graph, which a Session places; eager execution "
                                "does not apply to it",
                                options_.compat, options_.graph_path));
  }
  graph_ = std::move(*graph);
  report_.graph = &graph_;
  report_.timings.load_ms = MsSince(t0);
  report_.peak_rss_bytes.load = PeakResidentBytes();
  cold_.load_ms = MsSince(process_start_);
  phases_.push_back({"load", NsOf(process_start_), NsOf(Clock::now())});
  return Status::Ok();
}

// --fetch overrides the graph file's fetch list.
Status GraphRun::NoSuchNode(std::string_view flag, const std::string& given, const std::string& name,
                            const std::vector<std::string>& known, std::string_view kind) const {
  return BadInput(fmt::format("{} {}: {} has no {} named '{}'{}", flag, ClipForMessage(given), graph_.path, kind,
                              ClipForMessage(name), DidYouMean(name, known)));
}

Status GraphRun::ResolveFetch() {
  if (options_.fetch.empty()) {
    fetch_ = graph_.fetch;
  } else {
    for (const std::string& name : options_.fetch) {
      const std::optional<TensorName> tensor = ParseTensorName(name);
      const Node* node = tensor ? graph_.Find(tensor->node) : nullptr;
      if (node == nullptr) {
        return NoSuchNode("--fetch", name, tensor ? tensor->node : name, graph_.NodeNames());
      }
      if (tensor->index >= std::max(node->num_outputs, 1)) {
        return BadInput(fmt::format("--fetch {}: node '{}' has {} output{}", ClipForMessage(name), node->name, node->num_outputs,
                                    node->num_outputs == 1 ? "" : "s"));
      }
      fetch_.push_back({node->id, tensor->index});  // twice is fine: sess.run([a, a])
    }
  }
  // sess.run of a resource handle returns its in-memory bytes (pointers
  // and all), which no golden file can hold: refused, not imitated.
  for (const NodeOutput& f : fetch_) {
    if (const std::string type = graph_.OutputTypeString(f); type == "resource" || type == "variant") {
      return BadInput(fmt::format("--fetch {}: a {} tensor: TensorFlow's sess.run returns its raw in-memory bytes, "
                                  "which tfrun does not print (fetch what reads it, such as a ReadVariableOp)",
                                  ClipForMessage(graph_.OutputName(f, false)), type));
    }
  }
  report_.fetch = fetch_;
  return Status::Ok();
}

// A node, or a MetaGraphDef's collection (train_op) of nodes, named by
// --targets or --init: the nodes one sess.run of it runs.
StatusOr<std::vector<int>> GraphRun::ResolveRun(std::string_view flag, const std::string& name) const {
  std::vector<int> run;
  if (const Node* node = graph_.Find(name)) {
    run.push_back(node->id);
  } else if (const std::vector<std::string>* members = graph_.Collection(name)) {
    for (const std::string& member : *members) {
      const std::optional<TensorName> tensor = ParseTensorName(member);
      const Node* node = tensor ? graph_.Find(tensor->node) : nullptr;
      if (node == nullptr) {
        return BadInput(fmt::format("{} {}: collection member '{}' is no node of {}", flag, ClipForMessage(name),
                                    ClipForMessage(member), graph_.path));
      }
      run.push_back(node->id);
    }
  } else {
    std::vector<std::string> known = graph_.NodeNames();
    for (const auto& [key, nodes] : graph_.collections) known.push_back(key);
    return NoSuchNode(flag, name, name, known, graph_.collections.empty() ? "node" : "node or collection");
  }
  return run;
}

Status GraphRun::ResolveTargets() {
  for (const std::string& name : options_.init) {
    TFRUN_ASSIGN_OR_RETURN(std::vector<int> run, ResolveRun("--init", name));
    init_runs_.push_back(std::move(run));
  }
  if (options_.targets.empty()) {
    if (!graph_.targets.empty()) target_runs_.push_back(graph_.targets);
    return Status::Ok();
  }
  for (const std::string& name : options_.targets) {
    TFRUN_ASSIGN_OR_RETURN(std::vector<int> run, ResolveRun("--targets", name));
    target_runs_.push_back(std::move(run));
  }
  return Status::Ok();
}

Status GraphRun::ResolveExplain() {
  if (options_.explain.empty()) return Status::Ok();
  if (profile_->execution == ExecutionModel::kEager) {
    return BadInput(fmt::format("--explain: --compat {} places op by op as eager executes; --explain explains a "
                                "graph's placement (--compat tf2, tf1 or tf0)",
                                options_.compat));
  }
  for (const std::string& name : options_.explain) {
    const Node* node = graph_.Find(name);
    if (node == nullptr) {
      return NoSuchNode("--explain", name, name, graph_.NodeNames());
    }
    explain_.push_back(node->id);
  }
  report_.explanations = &placement_.explanations;
  return Status::Ok();
}

Status GraphRun::BuildRunDevices(bool log) {
  const auto t0 = Clock::now();
  const GraphConfig& config = graph_.config;
  TFRUN_RETURN_IF_ERROR(MakeDevices(config, log || !options_.json_path.empty() || !options_.dot_path.empty()));
  if (cluster_ != nullptr) {
    TFRUN_RETURN_IF_ERROR(cluster_->JoinDevices(&devices_.set));
  } else if (config.cluster.size() == 1) {  // one task: its name, no MPI
    devices_.set.MoveToTask(config.cluster[0].job, config.cluster[0].index, 0);
  }
  report_.devices = &devices_.set;
  cold_.devices_ms = MsSince(t0);
  phases_.push_back({"devices", NsOf(t0), NsOf(Clock::now())});
  return Status::Ok();
}

Status GraphRun::MakeDevices(const GraphConfig& config, bool lists_devices) {
  if (devices_built_) return Status::Ok();
  TFRUN_ASSIGN_OR_RETURN(GpuOptions gpu_options, ResolveGpuOptions(options_.device_flags, &config));
  gpu_options.xla_devices_by_default = profile_->xla_devices_by_default;
  // While loading, graph_ is still empty; a lister always wants the GPUs.
  const GpuInventory inventory = InventoryForRun(graph_, options_.device_flags, gpu_options, lists_devices);
  std::optional<std::pair<std::string, int>> task;  // a cluster task's own topology entry
  if (cluster_ != nullptr) task.emplace(config.cluster[cluster_->rank()].job, config.cluster[cluster_->rank()].index);
  TFRUN_ASSIGN_OR_RETURN(devices_, BuildDevices(options_.device_flags, gpu_options, inventory, task));
  devices_built_ = true;
  return Status::Ok();
}

// The session prints the mapping when it is created; session.py checks
// feed_dict before Session::Run places anything, so a bad feed comes after
// the mapping.
Status GraphRun::OpenSession(bool log, std::string* stdout_text) {
  // A distributed master session prints no mapping (only DirectSession does).
  if (log && graph_.config.cluster.empty()) *stdout_text += DeviceMappingBlock(devices_.set, *profile_);
  TFRUN_ASSIGN_OR_RETURN(feeds_, ResolveFeeds(options_.feeds, graph_, *profile_, options_.limits.max_tensor_bytes));
  report_.feeds = &feeds_;
  return Status::Ok();
}

// session.py returns a fetch that is also fed from feed_dict, and runs no
// step when every fetch is: nothing is placed or logged. A graph with
// Variables runs sess.run(init) first (README), and that first step
// places the whole graph.
bool GraphRun::AnswerFromFeeds() {
  if (std::any_of(graph_.nodes.begin(), graph_.nodes.end(), [](const Node& n) { return n.op == "VariableV2"; })) {
    return false;
  }
  std::vector<Tensor> values;
  for (const NodeOutput& f : fetch_) {
    auto fed = std::find_if(feeds_.begin(), feeds_.end(), [&](const Feed& feed) { return feed.output == f; });
    if (fed == feeds_.end()) return false;
    values.push_back(fed->value);
  }
  result_.fetched = std::move(values);
  report_.result = &result_;
  return true;
}

bool GraphRun::SoftPlacement() const {
  return !options_.no_soft_placement &&
         (options_.soft_placement || graph_.config.allow_soft_placement || profile_->soft_placement_default);
}

void GraphRun::AppendExplanations(std::string* stdout_text) const {
  if (!prints_output()) return;
  for (const NodeExplanation& e : placement_.explanations) {
    *stdout_text += ExplanationText(e, graph_, devices_.set, *profile_);
  }
}

// A run that places nothing (every fetch fed, or nothing to run) still
// answers --explain: where the first run that needs them would put them.
void GraphRun::ExplainUnplaced(std::string* stdout_text) {
  if (explain_.empty()) return;
  Placement placement;
  (void)PlaceGraph(graph_, devices_.set, SoftPlacement(), *profile_, &placement, explain_);
  placement_.explanations = std::move(placement.explanations);
  AppendExplanations(stdout_text);
}

// Each node's line as the placer assigns it: a placement error comes after
// the lines.
Status GraphRun::Place(bool log, std::string* stdout_text) {
  const DeviceSet& devices = devices_.set;
  const auto t0 = Clock::now();
  place_started_ = t0;
  const bool soft = SoftPlacement();
  Status placed;
  if (profile_->execution == ExecutionModel::kEager) {
    // Eager logs each op as it executes: on failure, what ran before it.
    placed = PlanEager(graph_, devices, soft, &placement_, &eager_);
    report_.executed = &eager_.executed;
    if (!placed.ok() && log) *stdout_text += ExecutedOpLines(eager_.executed, devices);
  } else {
    placed = PlaceGraph(graph_, devices, soft, *profile_, &placement_, explain_);
    if (log) *stdout_text += PlacementLines(graph_, devices, placement_, *profile_);
    AppendExplanations(stdout_text);
  }
  if (prints_output()) {
    for (const std::string& move : placement_.soft_moves) spdlog::info("{}", move);
    if (log) {
      for (const std::string& note : placement_.log_notes) spdlog::info("{}", note);
    }
  }
  if (!placed.ok()) return placed;
  report_.placement = &placement_;
  report_.timings.place_ms = MsSince(t0);
  phases_.push_back({"placement", NsOf(t0), NsOf(Clock::now())});
  report_.peak_rss_bytes.place = PeakResidentBytes();
  if (!options_.dot_path.empty() && prints_output()) {
    TFRUN_ASSIGN_OR_RETURN(const OutputTarget dot, CheckOutputTarget(options_.dot_path, "--dot", true));
    TFRUN_RETURN_IF_ERROR(WriteOutput(dot, PlacementDot(graph_, devices, placement_)));
  }
  if (!options_.write_graph_placed_path.empty() && prints_output()) {
    std::vector<std::string> assigned;
    assigned.reserve(graph_.nodes.size());
    for (int d : placement_.device_of) assigned.push_back(devices[d].name);
    TFRUN_RETURN_IF_ERROR(WriteGraphDef(options_.write_graph_placed_path, "--write-graph-placed", assigned));
  }
  const auto& device_of = placement_.device_of;
  if (prints_output() && !place_only_ &&
      std::any_of(device_of.begin(), device_of.end(), [&](int d) { return devices[d].simulated; })) {
    spdlog::info("kernels placed on the simulated GPUs of {} run on the host", options_.device_flags.topology_path);
  }
  return Status::Ok();
}

Status GraphRun::Execute(std::string* stdout_text, bool log) {
  const DeviceSet& devices = devices_.set;
  KernelRegistry kernels;
  BindAllBackendKernels(&kernels);
  const int cpu_threads =
      options_.intra_op_threads >= 0 ? options_.intra_op_threads : graph_.config.intra_op_parallelism_threads;
  TFRUN_RETURN_IF_ERROR(StartCpuThreads(cpu_threads));
  const auto t0 = Clock::now();
  Executor executor(graph_, devices, placement_, kernels);
  if (cluster_ != nullptr) {
    executor.set_channel(&cluster_->exchange());
    StallIfTestAsks(cluster_->rank());
  }
  const bool eager = profile_->execution == ExecutionModel::kEager;
  executor.set_node_error_style({profile_->node_error_line, profile_->legacy_device_names});
  executor.set_record_events(!options_.trace_path.empty());
  executor.set_timeout(options_.timeout_seconds);
  std::vector<NodeOutput> run_fetch = fetch_;  // eager prints a Variable's value for it
  if (eager) {
    for (NodeOutput& f : run_fetch) f.node = EagerValueNode(graph_, eager_, f.node);
  }
  std::vector<int> all_targets;
  for (const std::vector<int>& run : target_runs_) all_targets.insert(all_targets.end(), run.begin(), run.end());
  std::vector<int> checked = all_targets;
  for (const std::vector<int>& run : init_runs_) checked.insert(checked.end(), run.begin(), run.end());
  TFRUN_RETURN_IF_ERROR(executor.CheckKernels(run_fetch, checked, feeds_));
  for (const std::vector<int>& init : init_runs_) {  // sess.run(init): run, print nothing
    TFRUN_RETURN_IF_ERROR(executor.RunTargets(init, feeds_));
  }
  if (options_.steps > 0) {
    TFRUN_RETURN_IF_ERROR(TrainingLoop(executor, run_fetch, all_targets, stdout_text));
    report_.timings.run_ms = MsSince(t0);
    report_.peak_rss_bytes.run = PeakResidentBytes();
    return Status::Ok();
  }
  for (const std::vector<int>& targets : target_runs_) {  // runs before the fetches, printing nothing
    TFRUN_RETURN_IF_ERROR(executor.RunTargets(targets, feeds_));
  }
  StatusOr<RunResult> result = executor.Run(run_fetch, feeds_);
  if (!result.ok()) return result.status();
  result_ = std::move(*result);
  report_.result = &result_;
  report_.timings.run_ms = MsSince(t0);
  report_.peak_rss_bytes.run = PeakResidentBytes();
  cold_.first_run_ms = MsSince(place_started_);
  if (options_.benchmark_runs > 0 || options_.benchmark_duration_s > 0) {
    BenchmarkOptions bench_options;
    bench_options.iterations = options_.benchmark_runs;
    bench_options.warmup = options_.warmup_runs;
    bench_options.duration_s = options_.benchmark_duration_s;
    bench_options.keep_runs = options_.trace_path.empty() ? BenchmarkOptions::Keep::kNone
                              : options_.trace_all        ? BenchmarkOptions::Keep::kAll
                                                          : BenchmarkOptions::Keep::kLast;
    if (bench_options.iterations == 0) bench_options.iterations = 1;
    TFRUN_ASSIGN_OR_RETURN(BenchmarkResult bench, RunBenchmark(executor, graph_, devices, placement_, run_fetch, feeds_,
                                                               bench_options, cold_, BenchmarkHostOf(devices, cpu_threads)));
    const std::string table = BenchmarkTable(bench);
    if (prints_output()) {
      std::fwrite(table.data(), 1, table.size(), stderr);
      if (const std::string noise = NoiseWarning(bench); !noise.empty()) spdlog::warn("{}", noise);
    }
    report_.benchmark_json = BenchmarkJson(bench);
    benchmark_runs_ = std::move(bench.kept_runs);
    if (!options_.export_times_path.empty() && prints_output()) {
      TFRUN_ASSIGN_OR_RETURN(const OutputTarget times, CheckOutputTarget(options_.export_times_path, "--export-times",
                                                                          false));
      const std::string& path = options_.export_times_path;
      const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
      TFRUN_RETURN_IF_ERROR(WriteOutput(times, ExportTimes(bench, csv)));
    }
  }
  if (!options_.trace_path.empty()) TFRUN_RETURN_IF_ERROR(WriteTrace());
  if (log && eager) *stdout_text += ExecutedOpLines(eager_.executed, devices);
  PrintResults(log, stdout_text);
  return Status::Ok();
}

// The feeds of step `step` (from 0): with --batch, each .npy feed's rows
// step * B ... step * B + B - 1, wrapping around its first dimension.
StatusOr<std::vector<Feed>> GraphRun::StepFeeds(int64_t step) const {
  if (options_.batch == 0) return feeds_;
  std::vector<Feed> feeds = feeds_;
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (options_.feeds[i].find("=@") == std::string::npos) continue;  // a literal: every step the same
    const Tensor& all = feeds_[i].value;
    const std::string name = options_.feeds[i].substr(0, options_.feeds[i].find("=@"));
    if (all.rank() == 0 || all.shape()[0] < options_.batch) {
      return BadInput(fmt::format("--batch {}: --feed {} has {} rows, fewer than one batch", options_.batch, name,
                                  all.rank() == 0 ? 0 : all.shape()[0]));
    }
    const int64_t rows = all.shape()[0];
    const size_t row_bytes = all.num_bytes() / static_cast<size_t>(rows);
    Shape shape = all.shape();
    shape[0] = options_.batch;
    TFRUN_ASSIGN_OR_RETURN(Tensor batch, Tensor::AllocateHost(all.dtype(), shape));
    for (int64_t r = 0; r < options_.batch; ++r) {
      const int64_t source = (step * options_.batch + r) % rows;
      std::memcpy(static_cast<char*>(batch.raw()) + r * row_bytes, static_cast<const char*>(all.raw()) + source * row_bytes,
                  row_bytes);
    }
    feeds[i].value = std::move(batch);
  }
  return feeds;
}

// --steps N: one session run of the fetches and targets per step, printed
// as print(sess.run([fetches...])) prints the list of values; a progress
// line on standard error every few seconds of a long loop (not --quiet).
Status GraphRun::TrainingLoop(Executor& executor, const std::vector<NodeOutput>& fetch,
                              const std::vector<int>& targets, std::string* stdout_text) {
  const bool numpy2 = options_.numpy.empty() ? profile_->numpy2 : options_.numpy == "2";
  const bool stream = stream_steps_ && cluster_ == nullptr;
  // `text` to standard output now (and kept for --expect), or appended.
  auto print = [&](const std::string& text) -> Status {
    if (!stream) {
      *stdout_text += text;
      return Status::Ok();
    }
    TFRUN_RETURN_IF_ERROR(WriteStdout(text));
    const int64_t room = keep_streamed_bytes_ - static_cast<int64_t>(streamed_.size());
    if (static_cast<int64_t>(text.size()) > room) streamed_whole_ = false;
    streamed_.append(text, 0, static_cast<size_t>(std::clamp<int64_t>(room, 0, static_cast<int64_t>(text.size()))));
    return Status::Ok();
  };
  TFRUN_RETURN_IF_ERROR(print(*stdout_text));
  if (stream) stdout_text->clear();
  const auto start = Clock::now();
  auto last_progress = start;
  for (int64_t step = 0; step < options_.steps; ++step) {
    TFRUN_ASSIGN_OR_RETURN(const std::vector<Feed> feeds, StepFeeds(step));
    StatusOr<RunResult> result = executor.Run(fetch, feeds, targets);
    if (!result.ok()) {
      return Status(result.status().kind(), fmt::format("step {}: {}", step + 1, result.status().message()));
    }
    result_ = std::move(*result);
    if ((step + 1) % std::max<int64_t>(options_.print_every, 1) == 0) {
      std::vector<std::string> values;
      for (const Tensor& t : result_.fetched) values.push_back(t.is_valid() ? PythonListItemRepr(t, numpy2) : "None");
      TFRUN_RETURN_IF_ERROR(print(fmt::format("[{}]\n", fmt::join(values, ", "))));
    }
    if (prints_output() && std::chrono::duration<double>(Clock::now() - last_progress).count() >= 5) {
      last_progress = Clock::now();
      const double seconds = std::chrono::duration<double>(last_progress - start).count();
      spdlog::info("step {}/{}: {:.3g} steps/s", step + 1, options_.steps, (step + 1) / seconds);
    }
  }
  report_.result = &result_;
  return Status::Ok();
}

void GraphRun::PrintResults(bool log, std::string* stdout_text) {
  for (size_t i = 0; i < result_.fetched.size(); ++i) {
    report_.printed.push_back(PrintFetched(i, log, stdout_text));
    *stdout_text += report_.printed.back() + "\n";
  }
}

// --trace: the run (under --benchmark the last timed run, or with
// --trace-all the first run and every timed one), with the phases before
// it. In a cluster run every task sends its events to the master (all
// tasks call this), which writes one file.
Status GraphRun::WriteTrace() {
  std::vector<const RunResult*> mine;
  if (benchmark_runs_.empty() || options_.trace_all) mine.push_back(&result_);
  for (const RunResult& r : benchmark_runs_) mine.push_back(&r);
  std::vector<RunResult> tasks_runs;  // the other tasks' events, merged by run
  if (cluster_ != nullptr) {
    TFRUN_ASSIGN_OR_RETURN(const std::vector<std::string> all, cluster_->exchange().AllGather(EncodeRunEvents(mine)));
    if (!prints_output()) return Status::Ok();
    for (size_t r = 0; r < all.size(); ++r) {
      if (static_cast<int>(r) != cluster_->rank()) {
        TFRUN_RETURN_IF_ERROR(DecodeRunEvents(all[r], graph_.nodes.size(), &tasks_runs));
      }
    }
  }
  TraceInput in;
  in.graph = &graph_;
  in.devices = &devices_.set;
  in.placement = &placement_;
  in.phases = phases_;
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

std::string GraphRun::PrintFetched(size_t i, bool log, std::string* stdout_text) const {
  const Tensor& t = result_.fetched[i];
  // The NumPy the era printed with, unless --numpy says which.
  const bool numpy2 = options_.numpy.empty() ? profile_->numpy2 : options_.numpy == "2";
  if (profile_->execution == ExecutionModel::kEager) {
    const int id = fetch_[i].node;
    if (log) *stdout_text += ExecutedOpLines(EagerPrintOps(placement_, eager_, id), devices_.set);
    switch (eager_.value[id]) {
      case EagerValue::kNone:
        return "None";
      case EagerValue::kVariable:
        return EagerVariableStr(graph_.nodes[eager_.variable_of[id]].eager_name, t, numpy2);
      case EagerValue::kTensor:
        break;
    }
  }
  if (!t.is_valid()) return "None";  // sess.run(no_op) returns None
  if (profile_->eager_tensor_repr) return EagerTensorStr(t, numpy2);
  NumpyPrintOptions options;
  options.legacy_113 = profile_->numpy_legacy_113;
  options.numpy2 = numpy2;
  return NumpyStr(t, options);
}

}  // namespace tfrun
