#include "core/session/session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/base/did_you_mean.h"
#include "core/base/parallel.h"
#include "core/base/process_memory.h"
#include "core/checkpoint/saved_objects.h"
#include "core/graph/function_library.h"
#include "core/graph_def/graph_file_loader.h"
#include "core/passes/pass_registry.h"
#include "core/passes/pin_args_and_rets.h"
#include "core/placement/placement_explanation.h"
#include "core/placement/placement_log.h"
#include "core/printing/array_printer.h"
#include "core/runtime/list_kernels.h"
#include "core/runtime/queue_resource.h"

namespace tfrun {
namespace {

// The SavedModel signature `name`, whose function TF2's loader calls
// (loaded.signatures[name]).
StatusOr<Graph::Signature> FindSignature(const Graph& graph, const std::string& name) {
  std::vector<std::string> names;
  for (const Graph::Signature& signature : graph.signatures) {
    if (signature.name != name) {
      names.push_back(signature.name);
      continue;
    }
    if (signature.function.empty()) {
      return BadInput(fmt::format("--signature {}: {}'s signature calls no function (a TF1 signature: its tensors "
                                  "are the graph's, run them with --fetch)",
                                  name, graph.path));
    }
    return signature;
  }
  return BadInput(fmt::format("--signature {}: {} has {}", name, graph.path,
                              names.empty() ? std::string("no signatures")
                                            : fmt::format("the signatures {}", fmt::join(names, ", "))));
}


using Clock = std::chrono::steady_clock;

int64_t NsOf(Clock::time_point t) { return t.time_since_epoch().count(); }

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// A graph session: TensorFlow's DirectSession placing the whole graph at
// its first run.
class GraphSession : public Session {
 public:
  using Session::Session;

 protected:
  Status Place(bool log, std::string* stdout_text) override {
    // A TF2 call under --compat eager: the body's lines as TensorFlow 2's
    // placer prints them, then the call as eager's execute.cc logs it.
    const bool eager_call = options_.profile->execution == ExecutionModel::kEager;
    const CompatProfile& profile = eager_call ? *FindProfile("tf2") : *options_.profile;
    const Status placed = PlaceGraph(graph_, *devices_, SoftPlacement(), profile, &placement_, explain_, CallDevice());
    if (log) *stdout_text += PlacementLines(graph_, *devices_, placement_, profile);
    if (log && eager_call && placed.ok() && placement_.call_device >= 0) {
      *stdout_text += fmt::format("Executing op {} in device {}\n", call_.function,
                                  (*devices_)[placement_.call_device].name);
    }
    AppendExplanations(stdout_text);
    return placed;
  }
};

}  // namespace

std::unique_ptr<Session> MakeEagerSession(const SessionOptions& options, SessionHost* host, SessionObserver* observer,
                                          std::chrono::steady_clock::time_point process_start);

std::unique_ptr<Session> Session::Create(const SessionOptions& options, SessionHost* host, SessionObserver* observer,
                                         std::chrono::steady_clock::time_point process_start) {
  // A TF2 call is a function placed whole, under --compat eager too.
  if (options.profile->execution == ExecutionModel::kEager && options.call.empty() && options.signature.empty()) {
    return MakeEagerSession(options, host, observer, process_start);
  }
  return std::unique_ptr<Session>(new GraphSession(options, host, observer, process_start));
}

Status Session::Run(std::string* stdout_text) {
  const auto t0 = Clock::now();
  const Status status = RunStages(stdout_text);
  if (status.ok()) record_.timings.total_ms = MsSince(t0);
  return status;
}

Status Session::RunStages(std::string* stdout_text) {
  TFRUN_RETURN_IF_ERROR(CheckTrainingOptions());
  TFRUN_RETURN_IF_ERROR(Load());
  TFRUN_RETURN_IF_ERROR(CheckKerasProgramOptions());
  TFRUN_RETURN_IF_ERROR(host_.StartCluster(graph_, is_eager()));
  TFRUN_RETURN_IF_ERROR(observer_.Loaded(graph_));
  // TensorFlow's passes before placement (core/passes): after the graph
  // is written as given, before its fetches are found.
  TFRUN_RETURN_IF_ERROR(RunPrePlacementPasses(&graph_, devices_,
                                              options_.do_function_inlining || graph_.config.do_function_inlining));
  TFRUN_RETURN_IF_ERROR(ResolveFetch());
  TFRUN_RETURN_IF_ERROR(ResolveTargets());
  TFRUN_RETURN_IF_ERROR(ResolveQueueRunners());
  TFRUN_RETURN_IF_ERROR(ResolveExplain());
  TFRUN_RETURN_IF_ERROR(observer_.Resolved(graph_, fetch_));
  const bool log = options_.log_placement || graph_.config.log_device_placement;
  TFRUN_RETURN_IF_ERROR(BuildRunDevices(log));
  // A TensorFlow graph file with nothing to fetch or run: the user asks
  // where its nodes go, which the Session's first run would decide.
  place_only_ = options_.place_only ||
                (graph_.source == GraphSource::kTensorFlow && fetch_.empty() && target_runs_.empty() && init_runs_.empty());
  if (place_only_ && !options_.place_only && !log) {
    spdlog::info("{}: nothing to fetch: placed {} (--log-placement prints where each node went)", graph_.path,
                 call_.function.empty() ? std::string("the whole graph")
                                        : fmt::format("the call of '{}'", call_.function));
  }
  if (fetch_.empty() && target_runs_.empty() && init_runs_.empty() && !is_eager() && !place_only_) {
    // A TF1 program with nothing to fetch makes its session (which prints
    // the device mapping) and runs no step: nothing is placed or logged.
    if (log && PrintsDeviceMapping()) *stdout_text += DeviceMappingBlock(*devices_, *options_.profile);
    ExplainUnplaced(stdout_text);
    return Status::Ok();
  }
  TFRUN_RETURN_IF_ERROR(OpenSession(log, stdout_text));
  if (place_only_) {
    // The placement TensorFlow's first run makes, of the whole graph.
    TFRUN_RETURN_IF_ERROR(PlaceAndLog(log, stdout_text));
    PlacedOnly(log, stdout_text);
    return Status::Ok();
  }
  if (!is_eager() && target_runs_.empty() && init_runs_.empty() && options_.steps == 0 && AnswerFromFeeds()) {
    ExplainUnplaced(stdout_text);
    PrintResults(log, stdout_text);
    return Status::Ok();
  }
  TFRUN_RETURN_IF_ERROR(PlaceAndLog(log, stdout_text));
  return Execute(stdout_text, log);
}

// A Keras program is a TensorFlow 2 program, run op by op; what it
// executes is logged, and makes nothing to time or fetch.
Status Session::CheckKerasProgramOptions() const {
  if (!graph_.keras.present) return Status::Ok();
  if (!is_eager()) {
    return BadInput(fmt::format("{} is a Keras program, which TensorFlow 2 runs eagerly: run it with --compat eager "
                                "(--compat {} runs a graph)",
                                graph_.path, options_.profile->name));
  }
  if (options_.benchmark) {
    return BadInput(fmt::format("--benchmark: {} is a Keras program: tfrun logs the ops its build and compile "
                                "execute, and computes nothing to time",
                                graph_.path));
  }
  return Status::Ok();
}

Status Session::CheckTrainingOptions() const {
  if (options_.steps == 0) {
    if (options_.print_every > 0) return BadInput("--print-every: only with --steps");
    if (options_.batch > 0) return BadInput("--batch: only with --steps");
    return Status::Ok();
  }
  if (is_eager()) {
    return BadInput(fmt::format("--steps: --compat {} runs op by op; a training loop runs a graph's session "
                                "(--compat tf2, tf1 or tf0)",
                                options_.profile->name));
  }
  if (options_.benchmark) {
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

Status Session::Load() {
  const auto t0 = Clock::now();
  // A for_each_device scope needs the run's devices, under the graph's config.
  auto lister = [this](const GraphConfig& config, std::string_view type) -> StatusOr<std::vector<int>> {
    if (config.cluster.size() > 1) {
      return BadInput("for_each_device repeats nodes over one process's devices; a cluster graph names its "
                      "tasks' devices instead");
    }
    TFRUN_ASSIGN_OR_RETURN(devices_, host_.BuildDevices(graph_, config, /*lists_devices=*/true));
    std::vector<int> ids;
    for (const Device& d : devices_->devices()) {
      if (d.type == type) ids.push_back(d.id);
    }
    return ids;
  };
  LoadOptions load_options = options_.load;
  load_options.construction_errors = options_.profile->construction_errors;
  GraphDefImportOptions import = options_.import;
  import.max_file_bytes = load_options.max_file_bytes;
  import.max_nodes = load_options.max_nodes;
  import.max_tensor_bytes = load_options.max_tensor_bytes;
  StatusOr<Graph> graph = LoadAnyGraphFile(options_.graph_path, load_options, import, lister);
  if (!graph.ok()) return graph.status();
  if (graph->source == GraphSource::kTensorFlow && is_eager()) {
    return BadInput(fmt::format("--compat {}: {} is a TensorFlow graph, which a Session places; eager execution "
                                "does not apply to it",
                                options_.profile->name, options_.graph_path));
  }
  graph_ = std::move(*graph);
  call_ = graph_.call;
  if (!options_.call.empty()) call_.function = options_.call;
  if (!options_.signature.empty()) {
    if (!options_.call.empty()) return BadInput("--signature and --call: a signature names the function it calls");
    TFRUN_ASSIGN_OR_RETURN(const Graph::Signature signature, FindSignature(graph_, options_.signature));
    call_.function = signature.function;
    signature_keys_ = signature.output_keys;
  }
  if (!options_.call_device.empty()) call_.device = options_.call_device;
  for (const std::string& given : options_.arg_devices) call_.arg_devices.push_back(given);  // later ones win
  if (call_.function.empty() && (!options_.call_device.empty() || !options_.arg_devices.empty())) {
    return BadInput("--call-device and --arg-device describe a call: name its function with --call");
  }
  if (!call_.function.empty()) {
    if (const std::vector<int>* bound = graph_.saved_objects.BoundInputs(call_.function)) {
      // Its captures, the call's last arguments; a captured constant's value
      // is read now, before the call's body replaces the graph.
      captured_args_ = bound->size();
      for (int id : *bound) {
        const Graph::SavedObject& object = graph_.saved_objects.objects[id];
        if (object.kind != Graph::SavedObject::Kind::kConstant) continue;
        const Node* node = graph_.Find(object.name);
        if (node != nullptr && node->op == "Const") capture_constants_.emplace(object.name, node->value);
      }
    }
    TFRUN_RETURN_IF_ERROR(InstantiateCall());
  }
  record_.graph = &graph_;
  record_.timings.load_ms = MsSince(t0);
  record_.peak_rss_bytes.load = PeakResidentBytes();
  cold_.load_ms = MsSince(process_start_);
  phases_.push_back({"load", NsOf(process_start_), NsOf(Clock::now())});
  return Status::Ok();
}

Status Session::NoSuchNode(std::string_view flag, const std::string& given, const std::string& name,
                           const std::vector<std::string>& known, std::string_view kind) const {
  return BadInput(fmt::format("{} {}: {} has no {} named '{}'{}", flag, ClipForMessage(given), graph_.path, kind,
                              ClipForMessage(name), DidYouMean(name, known)));
}

// --fetch overrides the graph file's fetch list.
Status Session::ResolveFetch() {
  if (options_.fetch.empty()) {
    fetch_ = graph_.fetch;
    TFRUN_RETURN_IF_ERROR(ResolveCallResults());
  } else {
    for (const std::string& name : options_.fetch) {
      const std::optional<TensorName> tensor = ParseTensorName(name);
      const Node* node = tensor ? graph_.Find(tensor->node) : nullptr;
      if (node == nullptr) {
        return NoSuchNode("--fetch", name, tensor ? tensor->node : name, graph_.NodeNames());
      }
      if (tensor->index >= std::max(node->num_outputs, 1)) {
        return BadInput(fmt::format("--fetch {}: node '{}' has {} output{}", ClipForMessage(name), node->name,
                                    node->num_outputs, node->num_outputs == 1 ? "" : "s"));
      }
      fetch_.push_back({node->id, tensor->index});  // twice is fine: sess.run([a, a])
    }
  }
  // sess.run of a resource handle returns its in-memory bytes (pointers
  // and all), which no golden file can hold: refused, not imitated.
  for (const NodeOutput& f : fetch_) {
    const std::string type = graph_.OutputTypeString(f);
    // A call's Optional result prints as its value (CallResultsText).
    if (type == "variant" && call_results_) continue;
    if (type == "resource" || type == "variant") {
      return BadInput(fmt::format("--fetch {}: a {} tensor: TensorFlow's sess.run returns its raw in-memory bytes, "
                                  "which tfrun does not print (fetch what reads it, such as a ReadVariableOp)",
                                  ClipForMessage(graph_.OutputName(f, false)), type));
    }
  }
  record_.fetch = fetch_;
  return Status::Ok();
}

// A TF2 call whose every argument is fed (--feed x=...) runs, as f(x, y)
// does: its results are what its _Retval nodes read, in their order. A
// SavedModel function's captured arguments are fed as TF2's loader feeds
// them: its variables' handles (their values restored from the
// SavedModel's bundle) and its constants. With an argument not fed it is
// placed only.
Status Session::ResolveCallResults() {
  if (call_.function.empty() || !fetch_.empty()) return Status::Ok();
  // The outputs --feed names (NAME or NAME:INDEX, before its '=').
  std::set<std::pair<int, int>> fed;
  for (const std::string& feed : options_.feeds) {
    const std::optional<TensorName> tensor = ParseTensorName(feed.substr(0, feed.find('=')));
    if (const Node* node = tensor ? graph_.Find(tensor->node) : nullptr) fed.emplace(node->id, tensor->index);
  }
  auto index_of = [&](const Node& node) { return std::strtoll(graph_.AttrText(node, "index").c_str(), nullptr, 10); };
  int64_t args = 0;
  for (const Node& node : graph_.nodes) args += node.op == "_Arg" || node.op == "_DeviceArg";
  const int64_t first_captured = args - static_cast<int64_t>(captured_args_);
  std::vector<std::pair<int64_t, NodeOutput>> results;
  std::vector<const Node*> captured(captured_args_, nullptr);
  for (const Node& node : graph_.nodes) {
    if (node.op == "_Arg" || node.op == "_DeviceArg") {
      const int64_t index = index_of(node);
      if (index >= first_captured && index < args) captured[index - first_captured] = &node;
    }
    if ((node.op == "_Retval" || node.op == "_DeviceRetval") && !node.inputs.empty()) {
      results.emplace_back(index_of(node), node.input(0));
    }
  }
  // It runs when every argument its results need is fed (a train step's
  // iterators are not, where its IteratorGetNext outputs are).
  std::vector<NodeOutput> wanted;
  for (const auto& [index, output] : results) wanted.push_back(output);
  const std::vector<bool> needed = NeededNodes(graph_, wanted, fed);
  for (const Node& node : graph_.nodes) {
    if (!needed[node.id] || (node.op != "_Arg" && node.op != "_DeviceArg") || fed.count({node.id, 0}) != 0) continue;
    const int64_t index = index_of(node);
    if (index < first_captured || index >= args) return Status::Ok();  // placed only
  }
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [index, output] : results) fetch_.push_back(output);
  call_results_ = !fetch_.empty();
  if (!call_results_ || captured_args_ == 0) return Status::Ok();
  auto constant = [&](const std::string& name) -> const Tensor* {
    auto it = capture_constants_.find(name);
    return it == capture_constants_.end() ? nullptr : &it->second;
  };
  TFRUN_ASSIGN_OR_RETURN(std::vector<CapturedValue> values,
                         RestoreCaptures(graph_.saved_objects, call_.function, constant));
  for (size_t i = 0; i < values.size(); ++i) {
    if (captured[i] == nullptr) {
      return BadInput(fmt::format("{}: function '{}' has {} arguments and captures {}: its argument {} is missing",
                                  graph_.path, call_.function, args, captured_args_, first_captured + i));
    }
    Tensor fed_value = values[i].value;
    if (values[i].variable) {
      // The handle of a variable of its own, as the loader makes one per
      // saved variable.
      const std::string handle = "localhost/" + values[i].checkpoint_key;
      TFRUN_ASSIGN_OR_RETURN(fed_value, Tensor::FromStrings({}, {handle}));
      restored_variables_.emplace_back(handle, std::move(values[i].value));
    }
    capture_feeds_.push_back(Feed{NodeOutput{captured[i]->id, 0}, std::move(fed_value)});
  }
  return Status::Ok();
}

// A node, or a MetaGraphDef's collection (train_op) of nodes, named by
// --targets or --init: the nodes one sess.run of it runs.
StatusOr<std::vector<int>> Session::ResolveRun(std::string_view flag, const std::string& name) const {
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

Status Session::ResolveTargets() {
  const Graph::SavedModelRestore& restore = graph_.saved_model_restore;
  if (!restore.restore_op.empty() && !is_eager()) {
    TFRUN_ASSIGN_OR_RETURN(restore_run_, ResolveRun("the SavedModel's restore op", restore.restore_op));
    const std::optional<TensorName> filename = ParseTensorName(restore.filename_tensor);
    const Node* node = filename ? graph_.Find(filename->node) : nullptr;
    if (node == nullptr) {
      return BadInput(fmt::format("{}: the saver's filename tensor '{}' is no tensor of the graph", graph_.path,
                                  restore.filename_tensor));
    }
    TFRUN_ASSIGN_OR_RETURN(Tensor path, Tensor::FromStrings({}, {restore.variables}));
    restore_feeds_.push_back(Feed{NodeOutput{node->id, filename->index}, std::move(path)});
    if (!restore.main_op.empty()) {
      TFRUN_ASSIGN_OR_RETURN(main_op_run_, ResolveRun("the SavedModel's main op", restore.main_op));
    }
  }
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

Status Session::ResolveQueueRunners() {
  if (!options_.start_queue_runners || is_eager()) return Status::Ok();
  for (const Graph::QueueRunner& runner : graph_.queue_runners) {
    QueueRunnerState state;
    state.queue = runner.queue;
    auto id_of = [&](const std::string& name, std::string_view what) -> StatusOr<int> {
      const int* id = graph_.by_name.Find(name);
      if (id == nullptr) {
        return BadInput(fmt::format("{}: the queue runner of queue '{}' names {} '{}', which is not in the graph",
                                    graph_.path, runner.queue, what, name));
      }
      return *id;
    };
    for (const std::string& op : runner.enqueue_ops) {
      TFRUN_ASSIGN_OR_RETURN(const int id, id_of(op, "the enqueue op"));
      state.enqueue_ops.push_back(id);
    }
    if (!runner.close_op.empty()) {
      TFRUN_ASSIGN_OR_RETURN(state.close_op, id_of(runner.close_op, "the close op"));
    }
    queue_runners_.push_back(std::move(state));
  }
  return Status::Ok();
}

// tf.train.start_queue_runners' threads, run one op at a time: before each
// run, every runner's queue is filled to its capacity by running its
// enqueue ops in turn, as the threads keep it filled while the program
// runs. Runners fill in the collection's order (a program makes the
// queues its readers dequeue from first), and before each enqueue the
// runners before it fill theirs, so a reader never finds its filename
// queue empty while that queue's runner could still fill it. An enqueue
// that fails OutOfRange (its input ran out: an upstream queue closed and
// empty, the epochs counted out) runs the close op and stops the runner,
// as QueueRunner does. For FIFO pipelines this is TensorFlow's order;
// where several threads race (a runner of several enqueue ops, a
// RandomShuffleQueue), TensorFlow's order is its scheduler's.
Status Session::FillQueues(Executor& executor) {
  for (size_t i = 0; i < queue_runners_.size(); ++i) TFRUN_RETURN_IF_ERROR(FillQueue(executor, i));
  return Status::Ok();
}

Status Session::FillQueue(Executor& executor, size_t runner) {
  QueueRunnerState& r = queue_runners_[runner];
  auto size_now = [&]() -> std::optional<int64_t> {
    const auto& queues = executor.variables().queues_by_node;
    auto it = queues.find(r.queue);
    if (it == queues.end()) return std::nullopt;  // made by the first enqueue's run
    const QueueResource& q = *it->second;
    if (q.closed || static_cast<int64_t>(q.elements.size()) >= q.capacity) return -1;
    return static_cast<int64_t>(q.elements.size());
  };
  while (!r.stopped && r.enqueue_ops.size() > 0) {
    const std::optional<int64_t> before = size_now();
    if (before && *before < 0) return Status::Ok();  // full or closed
    for (size_t upstream = 0; upstream < runner; ++upstream) TFRUN_RETURN_IF_ERROR(FillQueue(executor, upstream));
    const int enqueue = r.enqueue_ops[r.next];
    r.next = (r.next + 1) % r.enqueue_ops.size();
    executor.mutable_variables().queue_runner_enqueue = true;
    const Status s = executor.RunTargets({enqueue});
    executor.mutable_variables().queue_runner_enqueue = false;
    if (!s.ok()) {
      if (s.message().find(": OutOfRangeError: ") == std::string::npos) {
        return Status(s.kind(), fmt::format("the queue runner of queue '{}': {}", r.queue, s.message()));
      }
      r.stopped = true;
      if (r.close_op >= 0) TFRUN_RETURN_IF_ERROR(executor.RunTargets({r.close_op}));
      return Status::Ok();
    }
    const std::optional<int64_t> after = size_now();
    // An enqueue that added nothing (an empty enqueue_many) would spin a
    // thread forever; here the fill stops until the next run.
    if (after && before && *after >= 0 && *after <= *before) return Status::Ok();
  }
  return Status::Ok();
}

Status Session::ResolveExplain() {
  if (options_.explain.empty()) return Status::Ok();
  if (is_eager()) {
    return BadInput(fmt::format("--explain: --compat {} places op by op as eager executes; --explain explains a "
                                "graph's placement (--compat tf2, tf1 or tf0)",
                                options_.profile->name));
  }
  for (const std::string& name : options_.explain) {
    const Node* node = graph_.Find(name);
    if (node == nullptr) return NoSuchNode("--explain", name, name, graph_.NodeNames());
    explain_.push_back(node->id);
  }
  record_.explanations = &placement_.explanations;
  return Status::Ok();
}

Status Session::BuildRunDevices(bool log) {
  const auto t0 = Clock::now();
  const GraphConfig& config = graph_.config;
  TFRUN_ASSIGN_OR_RETURN(devices_, host_.BuildDevices(graph_, config, log || options_.shows_devices));
  TFRUN_RETURN_IF_ERROR(host_.JoinCluster(graph_, devices_));
  record_.devices = devices_;
  cold_.devices_ms = MsSince(t0);
  phases_.push_back({"devices", NsOf(t0), NsOf(Clock::now())});
  return Status::Ok();
}

// The session prints the mapping when it is created; session.py checks
// feed_dict before Session::Run places anything, so a bad feed comes after
// the mapping.
Status Session::OpenSession(bool log, std::string* stdout_text) {
  // A distributed master session prints no mapping (only DirectSession does).
  if (log && PrintsDeviceMapping()) *stdout_text += DeviceMappingBlock(*devices_, *options_.profile);
  TFRUN_ASSIGN_OR_RETURN(feeds_, host_.ReadFeeds(graph_));
  for (Feed& feed : feeds_) {
    if (graph_.OutputTypeString(feed.output) != "resource") continue;
    // A call's resource argument fed a value (cli/feeds.h): a variable of
    // its own holding it, as the captured variable held it when the
    // program called the function.
    const std::string handle = "localhost/_arg/" + graph_.nodes[feed.output.node].name;
    restored_variables_.emplace_back(handle, std::move(feed.value));
    TFRUN_ASSIGN_OR_RETURN(feed.value, Tensor::FromStrings({}, {handle}));
  }
  record_.feeds = &feeds_;
  run_feeds_ = feeds_;
  run_feeds_.insert(run_feeds_.end(), capture_feeds_.begin(), capture_feeds_.end());
  return Status::Ok();
}

// session.py returns a fetch that is also fed from feed_dict, and runs no
// step when every fetch is: nothing is placed or logged. A graph with
// Variables runs sess.run(init) first (README), and that first step
// places the whole graph.
bool Session::AnswerFromFeeds() {
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
  record_.result = &result_;
  return true;
}

bool Session::SoftPlacement() const {
  // Eager TensorFlow 2 places a called function softly.
  return !options_.no_soft_placement && (options_.soft_placement || graph_.config.allow_soft_placement ||
                                         options_.profile->soft_placement_default || !call_.function.empty());
}

std::string Session::CallDevice() const {
  if (call_.function.empty()) return "";
  return call_.device.empty() ? "default" : call_.device;
}

Status Session::InstantiateCall() {
  TFRUN_ASSIGN_OR_RETURN(graph_, CallGraph(graph_, call_));
  return Status::Ok();
}

void Session::AppendExplanations(std::string* stdout_text) const {
  if (!host_.prints_output()) return;
  for (const NodeExplanation& e : placement_.explanations) {
    *stdout_text += ExplanationText(e, graph_, *devices_, *options_.profile);
  }
}

// A run that places nothing (every fetch fed, or nothing to run) still
// answers --explain: where the first run that needs them would put them.
void Session::ExplainUnplaced(std::string* stdout_text) {
  if (explain_.empty()) return;
  Placement placement;
  (void)PlaceGraph(graph_, *devices_, SoftPlacement(), *options_.profile, &placement, explain_, CallDevice());
  placement_.explanations = std::move(placement.explanations);
  AppendExplanations(stdout_text);
}

Status Session::PlaceAndLog(bool log, std::string* stdout_text) {
  const auto started = Clock::now();
  place_started_ = started;
  const Status placed = Place(log, stdout_text);
  if (host_.prints_output()) {
    for (const std::string& move : placement_.soft_moves) spdlog::info("{}", move);
    if (log) {
      for (const std::string& note : placement_.log_notes) spdlog::info("{}", note);
    }
  }
  if (!placed.ok()) return placed;
  record_.placement = &placement_;
  record_.timings.place_ms = MsSince(started);
  phases_.push_back({"placement", NsOf(started), NsOf(Clock::now())});
  record_.peak_rss_bytes.place = PeakResidentBytes();
  if (host_.prints_output()) TFRUN_RETURN_IF_ERROR(observer_.Placed(graph_, *devices_, placement_));
  const auto& device_of = placement_.device_of;
  if (host_.prints_output() && !place_only_ &&
      std::any_of(device_of.begin(), device_of.end(), [&](int d) { return (*devices_)[d].simulated; })) {
    spdlog::info("kernels placed on the simulated GPUs of {} run on the host", options_.topology_path);
  }
  return Status::Ok();
}

Status Session::Execute(std::string* stdout_text, bool log) {
  const DeviceSet& devices = *devices_;
  host_.BindKernels(&kernels_);
  functions_ = std::make_unique<SessionFunctionRuntime>(devices, kernels_, *options_.profile);
  executor_ = std::make_unique<Executor>(graph_, devices, placement_, kernels_);
  Executor& executor = *executor_;
  executor.set_function_runtime(functions_.get());
  if (TensorChannel* channel = host_.channel()) executor.set_channel(channel);
  const std::vector<NodeOutput> run_fetch = RunFetch();
  std::vector<int> all_targets;
  for (const std::vector<int>& run : target_runs_) all_targets.insert(all_targets.end(), run.begin(), run.end());
  // TensorFlow's 0 ("choose") for both: nodes at once with a thread each
  // where the run is towers wide, else one node at a time with kernels on
  // every core (Executor::ChooseThreads; docs/performance.md). A count the
  // user or the graph's config gives is kept, 0 for the other one meaning
  // one node at a time or one thread per core.
  int inter_op_threads =
      options_.inter_op_threads >= 0 ? options_.inter_op_threads : graph_.config.inter_op_parallelism_threads;
  int cpu_threads =
      options_.intra_op_threads >= 0 ? options_.intra_op_threads : graph_.config.intra_op_parallelism_threads;
  int pool_threads = cpu_threads;  // the Eigen pool's size, and the kernels' count unless chosen below
  if (inter_op_threads == 0 && cpu_threads == 0) {
    const Executor::ThreadChoice choice = executor.ChooseThreads(run_fetch, all_targets, run_feeds_, ParallelCores());
    inter_op_threads = choice.inter_op;
    cpu_threads = choice.intra_op;
    // Nodes at once with a thread each: the pool keeps one per core for
    // the chains that run alone.
    if (cpu_threads == 1) executor.set_chain_kernel_threads(ParallelCores());
  }
  TFRUN_RETURN_IF_ERROR(host_.StartCpuThreads(pool_threads));
  SetKernelThreads(cpu_threads);  // after the pool: a count of one leaves it one per core
  const auto t0 = Clock::now();
  host_.BeforeRun();
  executor.set_node_error_style({options_.profile->node_error_line, options_.profile->legacy_device_names});
  executor.set_record_events(options_.record_events);
  executor.set_timeout(options_.timeout_seconds);
  executor.set_inter_op_threads(std::max(1, inter_op_threads));
  std::vector<int> checked = all_targets;
  for (const std::vector<int>& run : init_runs_) checked.insert(checked.end(), run.begin(), run.end());
  checked.insert(checked.end(), restore_run_.begin(), restore_run_.end());
  checked.insert(checked.end(), main_op_run_.begin(), main_op_run_.end());
  for (const QueueRunnerState& r : queue_runners_) {
    checked.insert(checked.end(), r.enqueue_ops.begin(), r.enqueue_ops.end());
    if (r.close_op >= 0) checked.push_back(r.close_op);
  }
  TFRUN_RETURN_IF_ERROR(executor.CheckKernels(run_fetch, checked, run_feeds_));
  for (const auto& [handle, value] : restored_variables_) executor.mutable_variables().resource[handle] = value;
  if (!restore_run_.empty()) {  // TensorFlow 1's SavedModel loader
    std::vector<Feed> feeds = run_feeds_;
    feeds.insert(feeds.end(), restore_feeds_.begin(), restore_feeds_.end());
    TFRUN_RETURN_IF_ERROR(executor.RunTargets(restore_run_, feeds));
    if (!main_op_run_.empty()) TFRUN_RETURN_IF_ERROR(executor.RunTargets(main_op_run_, run_feeds_));
  }
  for (const std::vector<int>& init : init_runs_) {  // sess.run(init): run, print nothing
    TFRUN_RETURN_IF_ERROR(executor.RunTargets(init, run_feeds_));
  }
  if (options_.steps > 0) {
    TFRUN_RETURN_IF_ERROR(TrainingLoop(executor, run_fetch, all_targets, stdout_text));
    record_.timings.run_ms = MsSince(t0);
    record_.peak_rss_bytes.run = PeakResidentBytes();
    return observer_.StepsDone();
  }
  for (const std::vector<int>& targets : target_runs_) {  // runs before the fetches, printing nothing
    TFRUN_RETURN_IF_ERROR(FillQueues(executor));
    TFRUN_RETURN_IF_ERROR(executor.RunTargets(targets, run_feeds_));
  }
  TFRUN_RETURN_IF_ERROR(FillQueues(executor));
  StatusOr<RunResult> result = executor.Run(run_fetch, run_feeds_);
  if (!result.ok()) return result.status();
  result_ = std::move(*result);
  record_.result = &result_;
  record_.timings.run_ms = MsSince(t0);
  record_.peak_rss_bytes.run = PeakResidentBytes();
  cold_.first_run_ms = MsSince(place_started_);
  TFRUN_RETURN_IF_ERROR(observer_.FirstRun(executor, run_fetch, run_feeds_));
  AfterRun(log, stdout_text);
  PrintResults(log, stdout_text);
  return Status::Ok();
}

// The feeds of step `step` (from 0): with --batch, each .npy feed's rows
// step * B ... step * B + B - 1, wrapping around its first dimension.
StatusOr<std::vector<Feed>> Session::StepFeeds(int64_t step) const {
  if (options_.batch == 0) return run_feeds_;
  std::vector<Feed> feeds = run_feeds_;
  for (size_t i = 0; i < options_.feeds.size(); ++i) {
    if (options_.feeds[i].find("=@") == std::string::npos) continue;  // a literal: every step the same
    if (graph_.OutputTypeString(run_feeds_[i].output) == "resource") continue;  // a variable's value, whole
    const Tensor& all = run_feeds_[i].value;
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
      std::memcpy(static_cast<char*>(batch.raw()) + r * row_bytes,
                  static_cast<const char*>(all.raw()) + source * row_bytes, row_bytes);
    }
    feeds[i].value = std::move(batch);
  }
  return feeds;
}

// --steps N: one session run of the fetches and targets per step, printed
// as print(sess.run([fetches...])) prints the list of values; a progress
// line on standard error every few seconds of a long loop (not --quiet).
Status Session::TrainingLoop(Executor& executor, const std::vector<NodeOutput>& fetch, const std::vector<int>& targets,
                             std::string* stdout_text) {
  TFRUN_RETURN_IF_ERROR(observer_.StepsPrinted(stdout_text));
  const auto start = Clock::now();
  auto last_progress = start;
  for (int64_t step = 0; step < options_.steps; ++step) {
    TFRUN_ASSIGN_OR_RETURN(const std::vector<Feed> feeds, StepFeeds(step));
    if (Status s = FillQueues(executor); !s.ok()) {
      return Status(s.kind(), fmt::format("step {}: {}", step + 1, s.message()));
    }
    StatusOr<RunResult> result = executor.Run(fetch, feeds, targets);
    if (!result.ok()) {
      return Status(result.status().kind(), fmt::format("step {}: {}", step + 1, result.status().message()));
    }
    result_ = std::move(*result);
    if ((step + 1) % std::max<int64_t>(options_.print_every, 1) == 0) {
      if (call_results_) {
        // A train step called again and again: print(f(...)) each time.
        *stdout_text += CallResultsText(&record_.printed) + "\n";
      } else {
        std::vector<std::string> values;
        for (const Tensor& t : result_.fetched) {
          values.push_back(t.is_valid() ? PythonListItemRepr(t, Numpy2()) : "None");
        }
        *stdout_text += fmt::format("[{}]\n", fmt::join(values, ", "));
      }
      TFRUN_RETURN_IF_ERROR(observer_.StepsPrinted(stdout_text));
    }
    if (host_.prints_output() && std::chrono::duration<double>(Clock::now() - last_progress).count() >= 5) {
      last_progress = Clock::now();
      const double seconds = std::chrono::duration<double>(last_progress - start).count();
      spdlog::info("step {}/{}: {:.3g} steps/s", step + 1, options_.steps, (step + 1) / seconds);
    }
  }
  record_.result = &result_;
  return Status::Ok();
}

void Session::PrintResults(bool log, std::string* stdout_text) {
  if (call_results_) {
    *stdout_text += CallResultsText(&record_.printed) + "\n";
    return;
  }
  for (size_t i = 0; i < result_.fetched.size(); ++i) {
    record_.printed.push_back(PrintFetched(i, log, stdout_text));
    *stdout_text += record_.printed.back() + "\n";
  }
}

std::string Session::CallResultsText(std::vector<std::string>* items) const {
  items->clear();
  if (!signature_keys_.empty() && signature_keys_.size() == result_.fetched.size()) {
    // print(loaded.signatures[name](x=...)): the dict of each output's
    // repr, by key.
    for (size_t i = 0; i < result_.fetched.size(); ++i) {
      items->push_back(fmt::format("'{}': {}", signature_keys_[i], EagerTensorRepr(result_.fetched[i], Numpy2())));
    }
    return fmt::format("{{{}}}", fmt::join(*items, ", "));
  }
  // An Optional with a value stands for its value: Keras 3's train step
  // returns its logs in one, and its train_function returns
  // opt.get_value().
  std::vector<Tensor> results;
  for (const Tensor& t : result_.fetched) {
    const auto* optional = dynamic_cast<const OptionalValue*>(t.variant());
    if (optional != nullptr && optional->has_value) {
      results.insert(results.end(), optional->values.begin(), optional->values.end());
    } else {
      results.push_back(t);
    }
  }
  // print(f(x, y)): one result as print shows a tensor, several as the
  // tuple of their reprs.
  for (const Tensor& t : results) {
    items->push_back(results.size() == 1 ? EagerTensorStr(t, Numpy2()) : EagerTensorRepr(t, Numpy2()));
  }
  return items->size() == 1 ? (*items)[0] : fmt::format("({})", fmt::join(*items, ", "));
}

std::string Session::PrintFetched(size_t i, bool /*log*/, std::string* /*stdout_text*/) const {
  const Tensor& t = result_.fetched[i];
  if (!t.is_valid()) return "None";  // sess.run(no_op) returns None
  if (options_.profile->eager_tensor_repr) return EagerTensorStr(t, Numpy2());
  NumpyPrintOptions print_options;
  print_options.legacy_113 = options_.profile->numpy_legacy_113;
  print_options.numpy2 = Numpy2();
  return NumpyStr(t, print_options);
}

}  // namespace tfrun
