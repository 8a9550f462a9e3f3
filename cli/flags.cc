#include "cli/flags.h"
#include "core/base/device_types.h"

#include <charconv>
#include <limits>
#include <optional>
#include <sstream>

#include "core/base/allocator.h"
#include "core/placement/compat_profile.h"

namespace tfrun {
namespace {

// --help's groups, in the order a user reaches for them.
constexpr const char* kGraphAndDevices = "Graph and devices";
constexpr const char* kInputsAndOutputs = "Inputs and outputs";
constexpr const char* kChecking = "Checking";
constexpr const char* kBenchmarking = "Benchmarking";
constexpr const char* kClusters = "Clusters";
constexpr const char* kLimits = "Limits";

// A range check whose bounds --help does not print: each option's help
// states its default and meaning once, in words.
template <typename T>
CLI::Validator Quiet(T min, T max) {
  return CLI::Range(min, max).description("");
}

// A path option given '' (an unset shell variable, say) is an error, not
// the option silently left out.
CLI::Validator NonEmptyPath() {
  return CLI::Validator([](std::string& value) { return value.empty() ? std::string("needs a path, not ''") : ""; },
                        "");
}

}  // namespace

void AddDeviceFlags(CLI::App* app, DeviceFlags* flags) {
  app->add_option("--devices", flags->topology_path,
                  "simulate the GPUs of a topology file (e.g. testdata/topologies/k20m_x4.yaml) instead of the real ones")
      ->type_name("TOPOLOGY")
      ->group(kGraphAndDevices)
      ->check(NonEmptyPath());
  app->add_option("--visible-devices", flags->visible_devices,
                  "gpu_options.visible_device_list, e.g. 1,2 (after CUDA_VISIBLE_DEVICES)")
      ->type_name("LIST")
      ->group(kGraphAndDevices);
  app->add_option("--virtual-devices", flags->virtual_devices,
                  "virtual GPUs: memory limits in MB per visible GPU, e.g. 1024,1024;2048")
      ->type_name("SPEC")
      ->group(kGraphAndDevices);
  app->add_option_function<std::string>(
         "--device-count",
         [flags](const std::string& spec) {
           // ConfigProto.device_count: "CPU=3,GPU=2".
           std::stringstream entries(spec);
           for (std::string entry; std::getline(entries, entry, ',');) {
             const size_t eq = entry.find('=');
             const std::string type = entry.substr(0, eq);
             std::optional<int64_t> n;
             if (eq != std::string::npos) {
               int64_t value = 0;
               const char* end = entry.data() + entry.size();
               const auto [ptr, ec] = std::from_chars(entry.data() + eq + 1, end, value);
               if (ec == std::errc() && ptr == end && eq + 1 < entry.size()) n = value;
             }
             if (!n || *n < 0 || *n > 4096 || (type != kCpu && type != kGpu)) {
               throw CLI::ValidationError("--device-count", "expected TYPE=N,... with TYPE CPU or GPU and N from 0 to "
                                                            "4096, e.g. CPU=3,GPU=2; got '" + entry + "'");
             }
             (type == kCpu ? flags->cpu_device_count : flags->gpu_device_count) = static_cast<int>(*n);
           }
         },
         "ConfigProto.device_count: CPU devices to make (CPU:0, CPU:1, ...) and at most N GPUs, e.g. CPU=3,GPU=2")
      ->type_name("TYPE=N,...")
      ->group(kGraphAndDevices);
  app->add_option("--per-process-gpu-memory-fraction", flags->memory_fraction,
                  "gpu_options.per_process_gpu_memory_fraction (default: free memory less TensorFlow's reserve)")
      ->type_name("F")
      ->check(Quiet(0.0, 1e6))
      ->group(kGraphAndDevices);
  app->add_flag("--allow-growth", flags->allow_growth, "gpu_options.allow_growth (also TF_FORCE_GPU_ALLOW_GROWTH)")
      ->group(kGraphAndDevices);
}

void AddRunFlags(CLI::App* app, RunOptions* options) {
  options->limits.max_tensor_bytes = static_cast<int64_t>(DefaultHostMemoryBudget());
  // A repeated single-value option keeps its last value, as most tools do
  // (--fetch and --feed collect every one).
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app->add_option("graph", options->graph_path,
                  "graph file (YAML; - for standard input), or a TensorFlow GraphDef (.pb, .pbtxt), MetaGraphDef "
                  "(.meta) or SavedModel folder")
      ->type_name("GRAPH");

  app->add_flag("--log-placement,--log-device-placement", options->log_placement,
                "print the device mapping and the placement log (log_device_placement)")
      ->group(kGraphAndDevices);
  app->add_flag("--soft-placement,--allow-soft-placement", options->soft_placement,
                "allow_soft_placement: move a node that cannot go where it asks")
      ->group(kGraphAndDevices);
  app->add_flag("--no-soft-placement", options->no_soft_placement,
                "turn soft placement off, also where it is the default (--compat eager)")
      ->group(kGraphAndDevices);
  app->add_flag("--place-only", options->place_only,
                "place the whole graph and print the device mapping and placement log; run nothing (also for ops "
                "tfrun cannot run)")
      ->group(kGraphAndDevices);
  app->add_option("--explain", options->explain,
                  "say why NODE went where it went: its colocation group and why each member is in it, the "
                  "requests, the candidate devices in TensorFlow's order and the rule that chose (repeatable; "
                  "also in --json)")
      ->type_name("NODE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kGraphAndDevices);
  app->add_option("--import", options->import_semantics,
                  "session|python: a TensorFlow graph file's devices as a Session gets them (default), or as "
                  "tf.compat.v1.import_graph_def rewrites them for `_class` members")
      ->type_name("MODE")
      ->check(CLI::IsMember({"session", "python"}).description(""))
      ->group(kGraphAndDevices);
  app->add_option("--tag", options->saved_model_tag, "the SavedModel MetaGraphDef with this tag (default: the first)")
      ->type_name("TAG")
      ->group(kGraphAndDevices);
  app->add_option("--compat", options->compat, "print as an era of TensorFlow does: tf2 (default), tf1.15 (1.14 to 2.3), tf1, tf0, eager")
      ->type_name("ERA")
      ->check(CLI::IsMember(ProfileNames()).description(""))
      ->group(kGraphAndDevices);
  app->add_option("--tf32", options->device_flags.tf32,
                  "on|off: TensorFloat-32 for float32 MatMul on GPUs (default: the graph's tensor_float_32, on)")
      ->type_name("MODE")
      ->check(CLI::IsMember({"on", "off"}).description(""))
      ->group(kGraphAndDevices);
  app->add_option("--intra-op-threads", options->intra_op_threads,
                  "threads per op; 0: one per core (default: the graph's intra_op_parallelism_threads; where "
                  "both counts are 0, tfrun chooses: docs/performance.md)")
      ->type_name("N")
      ->check(Quiet(0, 1024))
      ->group(kGraphAndDevices);
  app->add_flag("--do-function-inlining", options->do_function_inlining,
                "graph_options.optimizer_options.do_function_inlining: a Session inlines every function call "
                "before placing (default: the graph's config; v2 control flow's calls are always inlined)")
      ->group(kGraphAndDevices);
  app->add_option("--call", options->call,
                  "place a function of the graph's library as eager TensorFlow 2 places it when the function is "
                  "called: its body, every call in it inlined, on the call's device first, softly")
      ->type_name("FUNCTION")
      ->group(kGraphAndDevices);
  app->add_option("--signature", options->signature,
                  "place a SavedModel signature's function as TF2's loader calls it (loaded.signatures[NAME]), "
                  "as --call does")
      ->type_name("NAME")
      ->group(kGraphAndDevices);
  app->add_option("--call-device", options->call_device,
                  "with --call: the call's device (default: eager's, GPU:0 where there is one, else CPU:0)")
      ->type_name("DEVICE")
      ->group(kGraphAndDevices);
  app->add_option("--arg-device", options->arg_devices,
                  "with --call: where argument ARG (the FunctionDef's name) lives (default: the call's device; "
                  "repeatable)")
      ->type_name("ARG=DEVICE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kGraphAndDevices);
  app->add_option("--inter-op-threads", options->inter_op_threads,
                  "nodes run at once on CPUs; 0 or 1: one at a time (default: the graph's "
                  "inter_op_parallelism_threads; where both counts are 0, tfrun chooses: towers run at once "
                  "with a thread each)")
      ->type_name("N")
      ->check(Quiet(0, 1024))
      ->group(kGraphAndDevices);
  AddDeviceFlags(app, &options->device_flags);

  app->add_option("--fetch", options->fetch, "tensor to run and print, NAME or NAME:INDEX (repeatable; over fetch:)")
      ->type_name("NAME")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kInputsAndOutputs);
  app->add_option("--targets", options->targets,
                  "node to run before the fetches, printing nothing, as sess.run(NODE) (repeatable: one run each, "
                  "in order, e.g. --targets init --targets train; over targets:)")
      ->type_name("NODE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kInputsAndOutputs);
  app->add_option("--init", options->init,
                  "node to run once before anything else, as sess.run(init) (repeatable; each its own run)")
      ->type_name("NODE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kInputsAndOutputs);
  app->add_flag("--no-queue-runners", options->no_queue_runners,
                "do not start a .meta file's queue runners (its `queue_runners` collection); feed its dequeues "
                "instead")
      ->group(kInputsAndOutputs);
  app->add_option("--steps", options->steps,
                  "a training loop: run the fetches and --targets together N times in one session, keeping the "
                  "variables, each step printed as print(sess.run([fetches...])) prints")
      ->type_name("N")
      ->check(Quiet(1, 1000000000))
      ->group(kInputsAndOutputs);
  app->add_option("--timeout", options->timeout_seconds,
                  "stop a run that takes longer than SECONDS (a while loop that never ends): "
                  "DeadlineExceededError, exit 4")
      ->type_name("SECONDS")
      ->check(Quiet(0.001, 1e9))
      ->group(kInputsAndOutputs);
  app->add_option("--print-every", options->print_every, "with --steps: print steps K, 2K, ... (default 1)")
      ->type_name("K")
      ->check(Quiet(1, 1000000000))
      ->group(kInputsAndOutputs);
  app->add_option("--batch", options->batch,
                  "with --steps: feed each step the next B rows of every NAME=@FILE.npy feed (wrapping around), as "
                  "the sample's next_batch loop does")
      ->type_name("B")
      ->check(Quiet(1, 1000000000))
      ->group(kInputsAndOutputs);
  app->add_option("--feed", options->feeds,
                  "give a tensor a value as feed_dict does: NAME=@FILE.npy or NAME=VALUE, e.g. 'x=[[1,2,3]]' "
                  "(repeatable)")
      ->type_name("NAME=VALUE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(kInputsAndOutputs);
  app->add_option("--numpy", options->numpy,
                  "1|2: print results as NumPy 1 or 2 does (default: the era's; tf2 and eager 2, tf1 and tf0 1)")
      ->type_name("VERSION")
      ->check(CLI::IsMember({"1", "2"}).description(""))
      ->group(kInputsAndOutputs);
  app->add_option("--json", options->json_path, "write a JSON report to FILE (- for standard output)")
      ->type_name("FILE")
      ->group(kInputsAndOutputs)
      ->check(NonEmptyPath());
  app->add_option("--out", options->out_dir, "write each fetched tensor as DIR/NAME.npy")
      ->type_name("DIR")
      ->group(kInputsAndOutputs)
      ->check(NonEmptyPath());
  app->add_option("--dot", options->dot_path, "write the placed graph as Graphviz DOT to FILE")
      ->type_name("FILE")
      ->group(kInputsAndOutputs)
      ->check(NonEmptyPath());
  app->add_option("--write-graph", options->write_graph_path,
                  "write the graph as a TensorFlow GraphDef with its requested devices (text for .pbtxt, else "
                  "binary), as tf.io.write_graph would")
      ->type_name("FILE")
      ->group(kInputsAndOutputs)
      ->check(NonEmptyPath());
  app->add_option("--write-graph-placed", options->write_graph_placed_path,
                  "write the graph as a TensorFlow GraphDef with the devices tfrun assigned")
      ->type_name("FILE")
      ->group(kInputsAndOutputs)
      ->check(NonEmptyPath());
  app->add_flag("--quiet,-q", options->quiet,
                "no tfrun: info or warning lines (TF_CPP_MIN_LOG_LEVEL=1 hides info, 2 both); errors always print")
      ->group(kInputsAndOutputs);

  app->add_option("--expect", options->expect_path,
                  "compare standard output with FILE: exit 1 and a unified diff on standard error when they differ")
      ->type_name("FILE")
      ->group(kChecking)
      ->check(NonEmptyPath());
  auto tolerance = [options](const std::string&) { options->tolerance_given = true; };
  app->add_option("--rtol", options->rtol, "with --expect: relative tolerance for the numbers of result lines (default 0)")
      ->type_name("R")
      ->check(CLI::NonNegativeNumber.description(""))
      ->each(tolerance)
      ->group(kChecking);
  app->add_option("--atol", options->atol, "with --expect: absolute tolerance for the numbers of result lines (default 0)")
      ->type_name("A")
      ->check(CLI::NonNegativeNumber.description(""))
      ->each(tolerance)
      ->group(kChecking);

  app->add_option("--benchmark", options->benchmark_runs,
                  "run the graph N more times and print timings on standard error (default: no benchmark)")
      ->type_name("N")
      ->check(Quiet(1, 100000000))
      ->group(kBenchmarking);
  app->add_option("--benchmark-duration", options->benchmark_duration_s,
                  "benchmark until SECONDS have passed (at least --benchmark N runs, 1 without it)")
      ->type_name("SECONDS")
      ->check(Quiet(0.0, 86400.0))
      ->group(kBenchmarking);
  app->add_option("--warmup", options->warmup_runs, "warm-up runs before --benchmark's timed runs (default 3)")
      ->type_name("N")
      ->check(Quiet(0, 100000000))
      ->group(kBenchmarking);
  app->add_option("--export-times", options->export_times_path,
                  "write every benchmark run's wall time and node times to FILE (JSON, or CSV for *.csv)")
      ->type_name("FILE")
      ->group(kBenchmarking)
      ->check(NonEmptyPath());
  app->add_option("--trace", options->trace_path,
                  "write the run as a Chrome trace for Perfetto or chrome://tracing (with --benchmark: the last run; with --steps: the last step)")
      ->type_name("FILE")
      ->group(kBenchmarking)
      ->check(NonEmptyPath());
  app->add_flag("--trace-all", options->trace_all, "with --trace and --benchmark: the first run and every timed run")
      ->group(kBenchmarking);

  app->add_option("--target", options->target,
                  "the master task /job:J/task:T, as tf.Session(server.target) (default: the first task)")
      ->type_name("TASK")
      ->group(kClusters);
  app->add_option("--operation-timeout-ms", options->operation_timeout_ms,
                  "how long a task waits for another before failing (default: the graph's operation_timeout_in_ms, "
                  "else 60000)")
      ->type_name("MS")
      ->check(Quiet(int64_t{1}, int64_t{1} << 40))
      ->group(kClusters);

  const auto positive =
      CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()).description("");
  app->add_option("--max-tensor-bytes", options->limits.max_tensor_bytes,
                  "budget for all tensors in host memory, checked before allocating (default: 16 GiB or 3/4 of RAM)")
      ->type_name("N")
      ->check(positive)
      ->group(kLimits);
  app->add_option("--max-file-bytes", options->limits.max_file_bytes, "limit on the graph file's size (default 64 MiB)")
      ->type_name("N")
      ->check(positive)
      ->group(kLimits);
  app->add_option("--max-nodes", options->limits.max_nodes, "limit on the number of nodes (default 1000000)")
      ->type_name("N")
      ->check(positive)
      ->group(kLimits);
  app->add_option("--max-depth", options->limits.max_depth, "limit on the nesting of scopes (default 64)")
      ->type_name("N")
      ->check(positive)
      ->group(kLimits);
}

}  // namespace tfrun
