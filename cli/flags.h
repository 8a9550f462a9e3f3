// The command line: every option a run takes, declared next to its help
// text (CLI11), and the values they set.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/devices.h"
#include "core/graph_file/loader.h"

namespace tfrun {

struct RunOptions {
  std::string graph_path;
  bool log_placement = false;
  bool soft_placement = false;
  bool no_soft_placement = false;  // eager places softly unless told not to
  bool place_only = false;         // place and log; run nothing
  std::vector<std::string> explain;  // --explain NODE: why it went where it went
  // TensorFlow graph files (GraphDef, MetaGraphDef, SavedModel): whose
  // import to follow ("session": as given; "python": import_graph_def's
  // device rewrite) and which SavedModel MetaGraphDef ("": the first).
  std::string import_semantics = "session";
  std::string saved_model_tag;
  // --call FUNCTION: a library function placed as a TF2 call places its
  // body (--call-device: the call's device; --arg-device ARG=DEVICE: where
  // an argument lives).
  bool do_function_inlining = false;  // --do-function-inlining: over the graph's config
  std::string call;
  std::string signature;  // --signature NAME: a SavedModel signature's function as the call
  std::string call_device;
  std::vector<std::string> arg_devices;
  std::vector<std::string> fetch;
  // --targets NODE: run before the fetches, printing nothing, each its own
  // sess.run in the order given (init, then train).
  std::vector<std::string> targets;
  std::vector<std::string> feeds;  // --feed NAME=@FILE.npy | NAME=VALUE (cli/feeds.h)
  // A training loop (README "Training"): --init NODE runs once, each its
  // own run, before anything else (sess.run(init)); --steps N runs the
  // fetches and --targets together N times (sess.run([loss, train]) in a
  // loop), printing steps K, 2K, ... (--print-every K); --batch B feeds
  // each step the next B rows of every .npy feed, as next_batch does.
  std::vector<std::string> init;
  int64_t steps = 0;  // 0: no loop (one run)
  bool no_queue_runners = false;  // a .meta's queue runners not started
  int64_t print_every = 0;  // 0: every step
  int64_t batch = 0;  // 0: every step the whole feed
  double timeout_seconds = 0;  // --timeout: a run's bound (0: none)
  std::string compat = "tf2";
  std::string numpy;  // --numpy 1|2: the NumPy that prints results ("": the --compat era's)
  std::string json_path;
  std::string out_dir;
  std::string dot_path;
  // --write-graph / --write-graph-placed: the graph as a TensorFlow
  // GraphDef (text for .pbtxt, .pbtext, .txt; else binary), with requested
  // or with assigned devices.
  std::string write_graph_path;
  std::string write_graph_placed_path;
  int benchmark_runs = 0;
  int warmup_runs = 3;
  double benchmark_duration_s = 0;  // --benchmark-duration: run at least this long
  std::string export_times_path;    // --export-times: every run's times (JSON, or CSV by extension)
  std::string trace_path;           // --trace: Chrome Trace Event Format JSON (cli/trace.h)
  bool trace_all = false;           // --trace-all: every benchmark run in the trace, not the last
  DeviceFlags device_flags;
  int intra_op_threads = -1;  // -1: from the graph's config
  int inter_op_threads = -1;  // -1: from the graph's config
  LoadOptions limits;          // max_tensor_bytes defaults to the host budget
  // Cluster runs (config.cluster): the master task, "/job:J/task:T" ("" =
  // the first task), and how long a task waits for another (0 = the
  // graph's operation_timeout_in_ms, else kDefaultOperationTimeoutMs).
  std::string target;
  int64_t operation_timeout_ms = 0;
  // --expect FILE: compare standard output with FILE (exit 1 and a diff on
  // a mismatch), numbers within --rtol/--atol when either is given.
  std::string expect_path;
  double rtol = 0;
  double atol = 0;
  bool tolerance_given = false;
  bool quiet = false;  // no info or warning lines
};

// TensorFlow waits for ever (operation_timeout_in_ms 0); a CI job must not.
inline constexpr int64_t kDefaultOperationTimeoutMs = 60000;

// Options of `tfrun GRAPH`, the graph path included.
void AddRunFlags(CLI::App* app, RunOptions* options);

// Options that choose and shape the GPUs (also `tfrun devices`').
void AddDeviceFlags(CLI::App* app, DeviceFlags* flags);

}  // namespace tfrun
