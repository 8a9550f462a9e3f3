// A run of a graph file as a TensorFlow program runs it, in the stages of
// TensorFlow's DirectSession and GraphExecutionState: load the graph, run
// the passes before placement, resolve fetches, targets and feeds, place
// (with the device mapping and the placement log as TensorFlow prints
// them), plan (an executor over the placed graph), and run: once, or a
// training loop of steps. Eager execution (--compat eager) is the second
// kind of session: TensorFlow 2's eager context, which places and runs op
// by op (eager_session.cc).
//
// What core cannot do itself comes from the SessionHost (the devices a
// command line describes, a cluster's MPI, the backends' kernels, feed
// values read from files); what the run makes goes to the SessionObserver
// as soon as it exists, so an output TensorFlow would have written before
// a later failure is written, and stays readable (record()) for the
// outputs written at the end.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/graph_def/graph_def_import.h"
#include "core/graph_file/loader.h"
#include "core/placement/compat_profile.h"
#include "core/placement/eager_program.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "core/runtime/kernel_registry.h"
#include "core/session/function_runtime.h"
#include "core/session/keras_build.h"

namespace tfrun {

// Everything a session runs under, resolved once from the command line.
struct SessionOptions {
  std::string graph_path;
  const CompatProfile* profile = nullptr;  // --compat's (never null)
  LoadOptions load;                        // limits; construction_errors comes from the profile
  GraphDefImportOptions import;
  // A TF2 call (--call): the library function whose body is placed, the
  // call's device ("": eager's default) and where its arguments live
  // ("ARG=DEVICE"; an argument not named lives on the call's device).
  bool do_function_inlining = false;  // --do-function-inlining (else the graph's config)
  std::string call;
  std::string signature;  // --signature: a SavedModel signature's function is the call
  std::string call_device;
  std::vector<std::string> arg_devices;
  // Names as the user gave them, resolved against the loaded graph.
  std::vector<std::string> fetch;    // "": the graph file's own fetch list
  std::vector<std::string> targets;  // each one run before the fetches (else the file's `targets:`)
  std::vector<std::string> init;     // each one run first, once
  std::vector<std::string> explain;
  std::vector<std::string> feeds;    // NAME=@FILE.npy | NAME=VALUE: which are batched under `batch`
  bool log_placement = false;        // also the graph's config.log_device_placement
  bool soft_placement = false;
  bool no_soft_placement = false;
  bool place_only = false;
  // Whether a .meta file's queue runners fill their queues before each run
  // (tf.train.start_queue_runners; --no-queue-runners turns them off).
  bool start_queue_runners = true;
  // A training loop: `steps` runs of fetches and targets, printed every
  // `print_every`, each fed the next `batch` rows of every .npy feed.
  int64_t steps = 0;
  int64_t print_every = 0;
  int64_t batch = 0;
  bool benchmark = false;            // --benchmark (refused with --steps)
  double timeout_seconds = 0;
  std::optional<bool> numpy2;        // --numpy; unset: the profile's era
  bool record_events = false;        // --trace: every node's events
  int intra_op_threads = -1;         // -1: the graph's config
  int inter_op_threads = -1;         // -1: the graph's config
  // Whether an output lists the devices (--json, --dot), so every GPU is
  // asked for even without --log-placement; the topology file simulated
  // GPUs come from (for the line that says their kernels run on the host).
  bool shows_devices = false;
  std::string topology_path;
  // Which Keras a Keras program (`keras:`) builds with: TF_USE_LEGACY_KERAS
  // picks tf_keras, as in TensorFlow 2.21.
  KerasVersion keras_version = KerasVersion::kKeras3;
};

// What the run has made so far, for the outputs (--json reads all of it):
// a pointer stays null until its stage is done.
struct SessionRecord {
  const Graph* graph = nullptr;          // null when loading failed
  const DeviceSet* devices = nullptr;
  const Placement* placement = nullptr;  // null when placement failed
  // --explain's, also when placement failed (null without --explain).
  const std::vector<NodeExplanation>* explanations = nullptr;
  const RunResult* result = nullptr;     // null when the run failed
  // --compat eager: the ops TF2 eager executes, in order (up to a failure).
  const std::vector<EagerOp>* executed = nullptr;
  std::vector<NodeOutput> fetch;
  const std::vector<Feed>* feeds = nullptr;  // once read
  std::vector<std::string> printed;          // what standard output shows per fetch
  struct {
    double load_ms = 0, place_ms = 0, run_ms = 0, total_ms = 0;
  } timings;
  // Peak resident memory at the end of each phase (0: not reached).
  struct {
    int64_t load = 0, place = 0, run = 0;
  } peak_rss_bytes;
};

// A stage of the run, for --trace's timeline (steady_clock nanoseconds).
struct SessionPhase {
  std::string name;
  int64_t start_ns = 0, end_ns = 0;
};

// From process start: what a benchmark reports as the cold path.
struct SessionColdTimes {
  double load_ms = 0;       // process start to graph loaded
  double devices_ms = 0;    // device discovery and set-up
  double first_run_ms = 0;  // the first run, including placement
};

// What the session needs from the program that runs it.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  // The devices, built once under `config` (while loading, for a
  // for_each_device scope, `graph` is still empty). `lists_devices`: the
  // run shows them (the mapping, --json, --dot), so every GPU is asked for.
  virtual StatusOr<DeviceSet*> BuildDevices(const Graph& graph, const GraphConfig& config, bool lists_devices) = 0;
  // After loading: a cluster of several tasks starts this process's part
  // (one process per task); `eager` runs have no clusters.
  virtual Status StartCluster(const Graph& graph, bool eager) = 0;
  // After BuildDevices: the devices named as the cluster's task, the other
  // tasks' devices joined.
  virtual Status JoinCluster(const Graph& graph, DeviceSet* devices) = 0;
  // The cluster's tensor channel (null: one process), and whether this
  // process prints the run's output (a cluster's master does; the others
  // do not).
  virtual TensorChannel* channel() = 0;
  virtual bool prints_output() const = 0;
  // The values of SessionOptions::feeds for `graph`, as feed_dict gives them.
  virtual StatusOr<std::vector<Feed>> ReadFeeds(const Graph& graph) = 0;
  // Every backend's kernels; the CPU's intra-op threads (0: one per core).
  virtual void BindKernels(KernelRegistry* kernels) = 0;
  virtual Status StartCpuThreads(int threads) = 0;
  // Just before the first run (a test hook stalls a cluster task here).
  virtual void BeforeRun() {}
};

// The outputs written while the run goes on; each is told once, when what
// it writes exists. An error stops the run.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  // The graph as loaded, before any pass (--write-graph).
  virtual Status Loaded(const Graph& graph) { return Status::Ok(); }
  // Its fetches known, before anything is placed (--out's file names).
  virtual Status Resolved(const Graph& graph, const std::vector<NodeOutput>& fetch) { return Status::Ok(); }
  // Every node placed (--dot, --write-graph-placed).
  virtual Status Placed(const Graph& graph, const DeviceSet& devices, const Placement& placement) {
    return Status::Ok();
  }
  // After the first run, before its results are printed (--benchmark).
  virtual Status FirstRun(Executor& executor, const std::vector<NodeOutput>& fetch, const std::vector<Feed>& feeds) {
    return Status::Ok();
  }
  // A training loop's text so far: the observer may write it out now and
  // clear it (Python prints each step as it comes), or leave it.
  virtual Status StepsPrinted(std::string* stdout_text) { return Status::Ok(); }
  // After a training loop's last step (--trace of that step).
  virtual Status StepsDone() { return Status::Ok(); }
};

class Session {
 public:
  // The kind SessionOptions::profile asks for: a graph session, or eager.
  // `options`, `host` and `observer` must outlive it.
  static std::unique_ptr<Session> Create(const SessionOptions& options, SessionHost* host, SessionObserver* observer,
                                         std::chrono::steady_clock::time_point process_start);
  // A kind's own (Create chooses the kind).
  Session(const SessionOptions& options, SessionHost* host, SessionObserver* observer,
          std::chrono::steady_clock::time_point process_start)
      : options_(options), host_(*host), observer_(*observer), process_start_(process_start) {}
  virtual ~Session() = default;

  // Appends what TensorFlow would have printed to `stdout_text`, also when
  // a later stage fails (the mapping and placement lines come first). At
  // most once.
  Status Run(std::string* stdout_text);

  const SessionRecord& record() const { return record_; }
  const Graph& graph() const { return graph_; }
  const DeviceSet* devices() const { return devices_; }
  const Placement& placement() const { return placement_; }
  const RunResult& result() const { return result_; }
  const std::vector<SessionPhase>& phases() const { return phases_; }
  const SessionColdTimes& cold_times() const { return cold_; }
  std::chrono::steady_clock::time_point process_start() const { return process_start_; }
  // Whether the run placed nothing and ran nothing (a graph file with
  // nothing to fetch placed whole: --place-only's case).
  bool place_only() const { return place_only_; }

 protected:
  // The kind's own steps. Place places every node and logs it: a graph
  // session its placement lines, eager the ops it executed (up to a
  // failure).
  virtual Status Place(bool log, std::string* stdout_text) = 0;
  // After a place-only run's placement: what else the kind prints.
  virtual void PlacedOnly(bool log, std::string* stdout_text) {}
  // The outputs a run computes for `fetch_` (eager fetches a Variable's value).
  virtual std::vector<NodeOutput> RunFetch() const { return fetch_; }
  // After the run, before the results: what else the kind logs.
  virtual void AfterRun(bool log, std::string* stdout_text) {}
  // What print() shows for fetch `i`.
  virtual std::string PrintFetched(size_t i, bool log, std::string* stdout_text) const;
  virtual bool is_eager() const { return false; }

  bool SoftPlacement() const;
  // PlaceGraph's call device: "" for a Session's graph, "default" or
  // --call-device's for a TF2 call.
  std::string CallDevice() const;
  // DirectSession prints the device mapping; a distributed master and an
  // eager function call do not.
  bool PrintsDeviceMapping() const { return graph_.config.cluster.empty() && call_.function.empty(); }
  bool Numpy2() const { return options_.numpy2.value_or(options_.profile->numpy2); }
  // --explain's text after the placement log; ExplainUnplaced places only
  // to explain, for a run that places nothing.
  void AppendExplanations(std::string* stdout_text) const;
  void ExplainUnplaced(std::string* stdout_text);
  // Place, then the placer's info lines (also after a failure), then the
  // end of placement: timings and the outputs told.
  Status PlaceAndLog(bool log, std::string* stdout_text);

  const SessionOptions& options_;
  SessionHost& host_;
  SessionObserver& observer_;
  std::chrono::steady_clock::time_point process_start_;
  Graph graph_;
  // The TF2 call this run places (--call's flags over the wrapper's
  // `call:`); `function` "" for a Session's graph. Set by Load.
  Graph::Call call_;
  DeviceSet* devices_ = nullptr;  // the host's, once built
  Placement placement_;
  std::vector<int> explain_;  // --explain's node ids
  std::vector<NodeOutput> fetch_;
  RunResult result_;
  SessionRecord record_;

 private:
  Status RunStages(std::string* stdout_text);
  Status CheckTrainingOptions() const;
  Status CheckKerasProgramOptions() const;
  Status Load();
  // --call: the function's body instantiated in place of the graph, its
  // arguments and results pinned (PinArgsAndRets).
  Status InstantiateCall();
  Status ResolveFetch();
  Status ResolveCallResults();
  // init_runs_ (one per --init) and target_runs_: one run per --targets,
  // else the file's `targets:` as one.
  Status ResolveTargets();
  StatusOr<std::vector<int>> ResolveRun(std::string_view flag, const std::string& name) const;
  Status NoSuchNode(std::string_view flag, const std::string& given, const std::string& name,
                    const std::vector<std::string>& known, std::string_view kind = "node") const;
  Status ResolveExplain();
  Status BuildRunDevices(bool log);
  Status OpenSession(bool log, std::string* stdout_text);
  bool AnswerFromFeeds();
  Status Execute(std::string* stdout_text, bool log);
  StatusOr<std::vector<Feed>> StepFeeds(int64_t step) const;
  Status TrainingLoop(Executor& executor, const std::vector<NodeOutput>& fetch, const std::vector<int>& targets,
                      std::string* stdout_text);
  void PrintResults(bool log, std::string* stdout_text);
  // A call's results as print(f(...)) prints them (call_results_), each
  // result's text in `items`.
  std::string CallResultsText(std::vector<std::string>* items) const;
  Status ResolveQueueRunners();
  Status FillQueues(Executor& executor);
  Status FillQueue(Executor& executor, size_t runner);

  // --place-only, or a TensorFlow graph file with nothing to fetch: place
  // and log the whole graph, run nothing.
  bool place_only_ = false;
  // The runs before the fetches, each one sess.run of its nodes: the file's
  // `targets:` together, or one per --targets (which replace them).
  std::vector<std::vector<int>> target_runs_;
  std::vector<std::vector<int>> init_runs_;  // --init: each once, before everything
  // The fetches are a TF2 call's results (ResolveCallResults), printed as
  // print(f(x, y)) prints them.
  bool call_results_ = false;
  // --signature's output keys, sorted (its results print as their dict).
  std::vector<std::string> signature_keys_;
  // A SavedModel function's captures (core/checkpoint/saved_objects.h):
  // how many of the call's last arguments they are; the captured
  // constants' values by Const node, read before the call's body replaced
  // the graph; once the call runs, the captured arguments' feeds (a
  // variable's handle, a constant's value) and each variable's restored
  // value by handle, put in the executor's store before the first run.
  size_t captured_args_ = 0;
  std::map<std::string, Tensor> capture_constants_;
  std::vector<Feed> capture_feeds_;
  std::vector<std::pair<std::string, Tensor>> restored_variables_;
  // A SavedModel's restore op and main op (Graph::SavedModelRestore), run
  // before the --init runs with the checkpoint's name fed; empty: none.
  std::vector<int> restore_run_;
  std::vector<Feed> restore_feeds_;
  std::vector<int> main_op_run_;
  // The graph's queue runners as node ids, each with the enqueue op it runs
  // next (its threads take turns) and whether it has stopped (its input ran
  // out: the queue is closed).
  struct QueueRunnerState {
    std::string queue;
    std::vector<int> enqueue_ops;
    int close_op = -1;
    size_t next = 0;
    bool stopped = false;
  };
  std::vector<QueueRunnerState> queue_runners_;
  std::vector<Feed> feeds_;                  // read once (a benchmark feeds them to every run)
  std::vector<Feed> run_feeds_;              // feeds_, then capture_feeds_: what every run is fed
  std::vector<SessionPhase> phases_;         // load, devices, placement
  SessionColdTimes cold_;
  std::chrono::steady_clock::time_point place_started_;
  // The executor of the placed graph (plan): built once per session, so
  // its plan serves every step.
  KernelRegistry kernels_;
  // What call nodes kept in the graph run their functions with (declared
  // before the executor, which points at it).
  std::unique_ptr<SessionFunctionRuntime> functions_;
  std::unique_ptr<Executor> executor_;
};

}  // namespace tfrun
