// One run of a graph file, as `tfrun GRAPH` does it: load it, resolve the
// fetches, build the devices, place every node (printing the device
// mapping and the placement log as TensorFlow does), run, benchmark, print
// the results, and write --dot and --out. A library, so that tests and
// tools can run graphs in process; only main() turns its Status into an
// exit code.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cli/benchmark.h"
#include "cli/cluster_session.h"
#include "cli/devices.h"
#include "cli/flags.h"
#include "cli/report.h"
#include "cli/trace.h"
#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/placement/eager_program.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"

namespace tfrun {

// The run's outputs (--json, --dot, --out, --expect's file), checked before
// the graph is loaded: a bad destination is exit 2 with nothing run. No
// output may be one of the run's inputs (the graph file, `extra_inputs`
// such as the file a wrapper names, --feed's .npy files, --expect's file,
// --devices' topology): tfrun never writes over what it reads.
Status CheckRunOutputs(const RunOptions& options, const std::vector<std::string>& extra_inputs = {});

class GraphRun {
 public:
  // `options` must outlive it; `process_start` anchors the cold-path times.
  GraphRun(const RunOptions& options, std::chrono::steady_clock::time_point process_start)
      : options_(options), process_start_(process_start) {}

  // Appends what TensorFlow would have printed to `stdout_text`, also when
  // a later step fails (the mapping and placement lines come first). At
  // most once.
  Status Run(std::string* stdout_text);

  // A training loop's steps go to standard output as each is computed, as
  // Python's print() in the loop prints them, so Ctrl-C after 70,000 steps
  // leaves 70,000 lines, not none, and memory does not grow with the steps:
  // the text so far is written when the loop starts, then each step's line.
  // main asks for it where standard output is the run's own (not --json -
  // or --dot -). What was written is kept for --expect, up to `keep_bytes`.
  void StreamTrainingSteps(int64_t keep_bytes) {
    stream_steps_ = true;
    keep_streamed_bytes_ = keep_bytes;
  }
  // What Run wrote itself (its first keep_bytes), and whether that is all.
  const std::string& streamed() const { return streamed_; }
  bool streamed_whole() const { return streamed_whole_; }

  // What the run did so far, for --json.
  Report& report() { return report_; }

  // Whether this process prints: always, except the non-master tasks of a
  // cluster run (the master prints the run's output and its verdict; a
  // task prints its own error only when the master could not be told).
  bool prints_output() const { return cluster_ == nullptr || cluster_->is_master(); }
  bool prints_errors() const { return prints_errors_; }

  // Ends a cluster run's MPI after the output is written (no-op otherwise).
  void EndCluster(int exit_code);

 private:
  Status RunSteps(std::string* stdout_text);
  Status Load();
  // `devices`: each node's device field, by node id.
  Status WriteGraphDef(const std::string& path, std::string_view flag, const std::vector<std::string>& devices) const;
  Status StartCluster();
  Status ResolveFetch();
  // init_runs_ (one per --init) and target_runs_: one run per --targets,
  // else the file's `targets:` as one.
  Status ResolveTargets();
  StatusOr<std::vector<int>> ResolveRun(std::string_view flag, const std::string& name) const;
  // "--FLAG GIVEN: FILE has no KIND named 'NAME' (did you mean ...?)", the
  // suggestion drawn from `known`.
  Status NoSuchNode(std::string_view flag, const std::string& given, const std::string& name,
                    const std::vector<std::string>& known, std::string_view kind = "node") const;
  Status ResolveExplain();
  Status BuildRunDevices(bool log);
  // Builds the devices once: for a for_each_device scope while loading, or
  // after it. `lists_devices`: the run shows them (log, --json, --dot) or
  // lists them, so the GPUs are asked for whatever the graph requests.
  Status MakeDevices(const GraphConfig& config, bool lists_devices);
  Status OpenSession(bool log, std::string* stdout_text);
  bool AnswerFromFeeds();
  Status Place(bool log, std::string* stdout_text);
  bool SoftPlacement() const;
  // --explain's text after the placement log; ExplainUnplaced places only
  // to explain, for a run that places nothing.
  void AppendExplanations(std::string* stdout_text) const;
  void ExplainUnplaced(std::string* stdout_text);
  Status Execute(std::string* stdout_text, bool log);
  Status CheckTrainingFlags() const;
  StatusOr<std::vector<Feed>> StepFeeds(int64_t step) const;
  Status TrainingLoop(Executor& executor, const std::vector<NodeOutput>& fetch, const std::vector<int>& targets,
                      std::string* stdout_text);
  // What print() shows for fetch `i` in the profile's era; eager's log
  // gets the ops printing executes (a Variable's read).
  std::string PrintFetched(size_t i, bool log, std::string* stdout_text) const;
  void PrintResults(bool log, std::string* stdout_text);
  Status WriteTrace();

  const RunOptions& options_;
  std::chrono::steady_clock::time_point process_start_;
  const CompatProfile* profile_ = nullptr;
  Graph graph_;
  Devices devices_;
  bool devices_built_ = false;
  // --place-only, or a TensorFlow graph file with nothing to fetch: place
  // and log the whole graph, run nothing (set by RunSteps).
  bool place_only_ = false;
  Placement placement_;
  std::vector<int> explain_;  // --explain's node ids
  EagerPlan eager_;  // --compat eager: what TF2 eager executes
  RunResult result_;
  std::vector<NodeOutput> fetch_;
  // The runs before the fetches, each one sess.run of its nodes: the file's
  // `targets:` together, or one per --targets (which replace them).
  std::vector<std::vector<int>> target_runs_;
  std::vector<std::vector<int>> init_runs_;  // --init: each once, before everything
  std::vector<Feed> feeds_;
  std::vector<TracePhase> phases_;        // load, devices, placement: for --trace
  std::vector<RunResult> benchmark_runs_;  // the benchmark's runs --trace shows  // --feed, read once (a benchmark feeds them to every run)
  ColdTimes cold_;
  std::chrono::steady_clock::time_point place_started_;
  Report report_;
  std::unique_ptr<ClusterSession> cluster_;  // config.cluster with more than one task
  bool prints_errors_ = true;
  bool stream_steps_ = false;
  int64_t keep_streamed_bytes_ = 0;
  std::string streamed_;
  bool streamed_whole_ = true;
};

}  // namespace tfrun
