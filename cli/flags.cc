#include "cli/flags.h"

#include <limits>

#include "core/allocator.h"
#include "core/compat_profile.h"

namespace tfrun {

void AddDeviceFlags(CLI::App* app, DeviceFlags* flags) {
  app->add_option("--devices", flags->topology_path, "use the simulated GPUs of a topology file");
  app->add_option("--visible-devices", flags->visible_devices, "gpu_options.visible_device_list, e.g. 1,2");
  app->add_option("--virtual-devices", flags->virtual_devices,
                  "virtual devices: memory limits in MB per visible GPU, e.g. 1024,1024;2048");
  app->add_option("--per-process-gpu-memory-fraction", flags->memory_fraction,
                  "gpu_options.per_process_gpu_memory_fraction")
      ->check(CLI::Range(0.0, 1e6));
  app->add_flag("--allow-growth", flags->allow_growth, "gpu_options.allow_growth");
}

void AddRunFlags(CLI::App* app, RunOptions* options) {
  options->limits.max_tensor_bytes = static_cast<int64_t>(DefaultHostMemoryBudget());
  // --help shows each option's default; a repeated single-value option keeps
  // its last value, as most tools do (--fetch collects every one).
  app->option_defaults()->always_capture_default()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app->add_option("graph", options->graph_path, "graph file (YAML, format version 1)");
  app->add_flag("--log-placement,--log-device-placement", options->log_placement,
                "print the device mapping and the placement log");
  app->add_flag("--soft-placement,--allow-soft-placement", options->soft_placement, "allow_soft_placement");
  app->add_flag("--no-soft-placement", options->no_soft_placement,
                "turn soft placement off, also where it is the default (--compat eager)");
  app->add_option("--fetch", options->fetch,
                  "tensor to run and print, NAME or NAME:INDEX (repeatable); overrides fetch:")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app->add_option("--feed", options->feeds,
                  "feed a tensor as feed_dict does: NAME=@FILE.npy or NAME=VALUE, e.g. 'x=[[1,2,3]]' (repeatable)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app->add_option("--compat", options->compat, "output style of an era (default tf2)")
      ->check(CLI::IsMember(ProfileNames()));
  app->add_option("--numpy", options->numpy,
                  "print results as NumPy 1 or 2 prints them (default: the era's; tf2 and eager: 2, what TensorFlow "
                  "2.21 installs; tf1 and tf0: 1)")
      ->check(CLI::IsMember({"1", "2"}));
  app->add_option("--json", options->json_path, "write a JSON report to FILE (- for standard output)");
  app->add_option("--out", options->out_dir, "write each fetched tensor as DIR/NAME.npy");
  app->add_option("--dot", options->dot_path, "write the placed graph as Graphviz DOT to FILE");
  app->add_option("--tf32", options->tf32, "TensorFloat-32 for float32 MatMul on GPUs (default: tensor_float_32, on)")
      ->check(CLI::IsMember({"on", "off"}));
  app->add_option("--benchmark", options->benchmark_runs, "run the graph N more times and report timings on stderr")
      ->check(CLI::Range(1, 100000000));
  app->add_option("--benchmark-duration", options->benchmark_duration_s,
                  "benchmark until SECONDS have passed (at least --benchmark N runs, 1 without it)")
      ->check(CLI::Range(0.0, 86400.0));
  app->add_option("--export-times", options->export_times_path,
                  "write every benchmark run's wall time and node times to FILE (JSON, or CSV for *.csv)");
  app->add_option("--trace", options->trace_path,
                  "write the run as a Chrome trace (JSON) for Perfetto or chrome://tracing, laid out as "
                  "TensorFlow's timeline; under --benchmark the last timed run");
  app->add_flag("--trace-all", options->trace_all, "with --trace and --benchmark: the first run and every timed run");
  app->add_option("--warmup", options->warmup_runs, "warm-up runs before --benchmark's timed runs (default 3)")
      ->check(CLI::Range(0, 100000000));
  app->add_option("--intra-op-threads", options->intra_op_threads,
                  "threads per op (0: one per core; default: the graph's config)")
      ->check(CLI::Range(0, 1024));
  const auto positive = CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()).description("a positive number");
  app->add_option("--max-tensor-bytes", options->limits.max_tensor_bytes,
                  "budget for all tensors in host memory together, checked before allocating (16 GiB or 3/4 of RAM)")
      ->check(positive);
  app->add_option("--max-file-bytes", options->limits.max_file_bytes, "limit on the graph file's size")
      ->check(positive);
  app->add_option("--max-nodes", options->limits.max_nodes, "limit on the number of nodes")->check(positive);
  app->add_option("--max-depth", options->limits.max_depth, "limit on the nesting of scopes")->check(positive);
  app->add_flag("--quiet,-q", options->quiet,
                "no tfrun: info or warning lines on standard error (TF_CPP_MIN_LOG_LEVEL=1 hides info, 2 both)");
  app->add_option("--target", options->target,
                  "cluster runs: the master task /job:J/task:T, as tf.Session(server.target) (default: the first)");
  app->add_option("--operation-timeout-ms", options->operation_timeout_ms,
                  "cluster runs: how long a task waits for another before failing (default: the graph's "
                  "operation_timeout_in_ms, else 60000)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app->add_option("--expect", options->expect_path,
                  "compare standard output with FILE: exit 1 and a unified diff on standard error when they differ");
  auto tolerance = [options](const std::string&) { options->tolerance_given = true; };
  app->add_option("--rtol", options->rtol, "with --expect: relative tolerance for the numbers of result lines")
      ->check(CLI::NonNegativeNumber)
      ->each(tolerance);
  app->add_option("--atol", options->atol, "with --expect: absolute tolerance for the numbers of result lines")
      ->check(CLI::NonNegativeNumber)
      ->each(tolerance);
  AddDeviceFlags(app, &options->device_flags);
}

}  // namespace tfrun
