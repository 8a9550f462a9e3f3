// tfrun: runs a graph file and prints the device mapping, the placement log
// and the results exactly as TensorFlow and NumPy print them.
//
// Every error travels up as a Status; only main() turns it into a message on
// standard error and an exit code (graph-format.md, "Exit codes").
#include <spdlog/sinks/stdout_color_sinks.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "cli/devices.h"
#include "cli/expect.h"
#include "cli/flags.h"
#include "cli/last_resort.h"
#include "cli/coverage.h"
#include "cli/ops_listing.h"
#include "cli/report.h"
#include "cli/run_graph.h"
#include "cli/test_command.h"
#include "cli/version.h"
#include "core/base/allocator.h"
#include "core/base/atomic_file.h"
#include "core/base/did_you_mean.h"

namespace tfrun {
namespace {

// --quiet and TF_CPP_MIN_LOG_LEVEL over tfrun's info and warning lines.
void ApplyLogLevel(bool quiet) {
  int level = 0;
  if (const char* tf_level = std::getenv("TF_CPP_MIN_LOG_LEVEL")) level = std::atoi(tf_level);
  if (quiet) level = std::max(level, 2);
  spdlog::set_level(level >= 2 ? spdlog::level::err : level == 1 ? spdlog::level::warn : spdlog::level::info);
}

// tfrun's own lines on standard error: colored unless NO_COLOR is set
// (no-color.org). Errors always print; --quiet and TF_CPP_MIN_LOG_LEVEL
// (TensorFlow's levels: 1 hides info, 2 warnings too) silence the rest.
void SetUpLogging() {
  const char* no_color = std::getenv("NO_COLOR");
  const bool color = no_color == nullptr || *no_color == '\0';
  auto logger = spdlog::stderr_color_mt("tfrun", color ? spdlog::color_mode::automatic : spdlog::color_mode::never);
  logger->set_pattern("tfrun: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  ApplyLogLevel(false);
}

// `tfrun devices`: the physical and logical devices under the options; as
// a run's --json, `--json FILE` writes JSON to FILE beside the listing on
// standard output, and `--json` or `--json -` writes only the JSON there.
int ListDevices(const DeviceFlags& flags, const std::string& json_path) {
  StatusOr<OutputTarget> json_target = OutputTarget{};
  const bool json_to_stdout = json_path == "-";
  if (!json_path.empty() && !json_to_stdout) json_target = CheckOutputTarget(json_path, "--json", true);
  if (!json_target.ok()) return ExitWith(json_target.status());
  StatusOr<GpuOptions> gpu_options = ResolveGpuOptions(flags, nullptr);
  if (!gpu_options.ok()) return ExitWith(gpu_options.status());
  StatusOr<Devices> devices = BuildDevices(flags, *gpu_options, GpuInventory::kDevicesAndMemory);
  if (!devices.ok()) return ExitWith(devices.status());
  if (json_to_stdout) return ExitWith(WriteStdout(DevicesJson(*devices, VersionField())));
  if (Status written = WriteStdout(DevicesListing(*devices)); !written.ok()) return ExitWith(written);
  if (!json_path.empty()) return ExitWith(WriteOutput(*json_target, DevicesJson(*devices, VersionField())));
  return 0;
}

// `tfrun test PATH...`: exit 1 when a case failed, 2 for bad usage.
int RunTests(const TestOptions& options) {
  StatusOr<int> failed = RunTestCommand(options);
  if (!failed.ok()) return ExitWith(failed.status());
  return *failed > 0 ? 1 : 0;
}

constexpr const char* kHelpFooter = R"(
Subcommands: tfrun devices [device options] [--json [FILE]] [-q] | tfrun test PATH... | tfrun ops [--json] [OP...] | tfrun ops --coverage GRAPH... [device options]
(tfrun SUBCOMMAND --help)

Examples:
  tfrun graphs/matmul.yaml --log-placement
      the device mapping, placement log and result, as TensorFlow prints them
  tfrun graphs/multi_tower.yaml --log-placement --devices testdata/topologies/k20m_x4.yaml
      placed on four simulated Tesla K20m GPUs (no GPU needed)
  tfrun devices --devices testdata/topologies/k20m_x4.yaml --visible-devices 1,2
      which GPUs a TensorFlow program would see under these options
  tfrun graphs/split_towers.yaml --feed x=@graphs/data/towers_batch.npy
      a Placeholder fed from a .npy file, as feed_dict does
  tfrun graphs/matmul.yaml --expect matmul.expected
      compare standard output with a golden file (exit 1 and a diff when it differs)
  tfrun test graphs/
      every graph with a NAME.expected beside it, compared; ends with N passed, M failed
  mpirun -n 2 tfrun graphs/cluster_hello.yaml --log-placement
      a graph over the tasks of a cluster, one process per task

Exit codes: 0 success; 1 a comparison failed (--expect, tfrun test); 2 bad command line or graph file;
3 placement error (InvalidArgumentError); 4 run-time error (out of memory, CUDA/cuBLAS, a write that failed).

Environment: CUDA_VISIBLE_DEVICES (GPUs CUDA shows, before --visible-devices); TF_FORCE_GPU_ALLOW_GROWTH
(true/false, over allow_growth); TF_CPP_MIN_LOG_LEVEL (1 hides info lines, 2 warnings too); NO_COLOR (no
colors); TFRUN_CUBLAS (cuBLAS's path); TFRUN_MPI_PLUGIN (the MPI plugin's path, cluster runs).
More: README.md and docs/ (graph-format.md: the graph file; json-report.md: --json).
)";

// " (did you mean '--log-placement'?)" for a misspelt option on the command
// line, or a misspelt subcommand given where the graph goes.
std::string UnknownFlagHint(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  std::vector<const CLI::App*> apps = {&app};
  for (const CLI::App* sub : app.get_subcommands({})) apps.push_back(sub);
  for (const CLI::App* a : apps) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const std::string flag = word.substr(0, word.find('='));
    if (flag.rfind("--", 0) == 0 && std::find(names.begin(), names.end(), flag) == names.end()) {
      const std::string hint = ClosestMatch(flag, names);
      if (!hint.empty()) return fmt::format(" (did you mean '{}'?)", hint);
    }
  }
  return "";
}

int Main(int argc, char** argv) {
  const auto process_start = std::chrono::steady_clock::now();
  RemoveTemporariesOnSignals();
  SetUpLogging();
  RunOptions options;
  CLI::App app{"tfrun: run a TensorFlow-style graph file and print placement and results as TensorFlow does"};
  AddRunFlags(&app, &options);
  app.set_version_flag("--version", [] { return VersionText(); }, "print the version, git commit, build mode, "
                       "CUDA runtime and driver versions and where cuBLAS loads from, and exit");
  app.footer(kHelpFooter);
  // `tfrun devices` takes the device options only (after it), and nothing else.
  DeviceFlags devices_flags;
  CLI::App* devices_command =
      app.add_subcommand("devices", "list physical and logical devices (like tf.config.list_*_devices)");
  devices_command->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddDeviceFlags(devices_command, &devices_flags);
  std::string devices_json;
  CLI::Option* devices_json_option =
      devices_command
          ->add_option("--json", devices_json,
                       "write the devices as JSON to FILE (docs/json-report.md); alone or with -, to standard output "
                       "instead of the listing")
          ->type_name("[FILE]")
          ->expected(0, 1);
  bool devices_quiet = false;
  devices_command->add_flag("--quiet,-q", devices_quiet, "no tfrun: info or warning lines");
  bool ops_json = false;
  std::vector<std::string> ops_names;
  CLI::App* ops_command = app.add_subcommand(
      "ops", "list TensorFlow's ops with their kernels by device type, and what tfrun runs of them");
  ops_command->add_flag("--json", ops_json, "as JSON");
  ops_command->add_option("names", ops_names, "only these ops (default: all); with --coverage, graph files")
      ->type_name("OP")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // `tfrun ops --coverage GRAPH...`: each graph placed (the device options
  // describe the machine), and what of it tfrun cannot run there.
  bool ops_coverage = false;
  RunOptions coverage_options;
  ops_command->add_flag("--coverage", ops_coverage,
                        "for each graph file given, the ops tfrun cannot run where TensorFlow places them");
  ops_command->add_flag("--soft-placement", coverage_options.soft_placement,
                        "with --coverage: place as allow_soft_placement=True does");
  ops_command->add_option("--signature", coverage_options.signature,
                          "with --coverage: a SavedModel signature's function, as --signature places it")
      ->type_name("NAME");
  ops_command->add_option("--call", coverage_options.call,
                          "with --coverage: a library function's body, as --call places it")
      ->type_name("FUNCTION");
  ops_command->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddDeviceFlags(ops_command, &coverage_options.device_flags);
  TestOptions test_options;
  CLI::App* test_command = app.add_subcommand(
      "test", "run every graph that has a NAME.expected beside it and compare its output; ends with N passed, M failed");
  test_command->add_option("paths", test_options.paths, "graph files, expected files or folders (searched recursively)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  test_command->add_option("-j,--jobs", test_options.jobs, "cases run at once (default: one per core)")
      ->check(CLI::Range(1, 4096));
  test_command->add_option("--junit", test_options.junit_path, "write JUnit XML to FILE");
  test_command->add_flag("--update", test_options.update,
                         "rewrite the expected files of failing cases from their output");
  try {
    app.parse(argc, argv);
    if (!devices_command->parsed() && !test_command->parsed() && !ops_command->parsed() && options.graph_path.empty()) {
      throw CLI::RequiredError("graph");
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    spdlog::error("{}{} (see tfrun --help)", EscapeForTerminal(e.what()), UnknownFlagHint(app, argc, argv));
    return 2;
  }
  ApplyLogLevel(options.quiet || devices_quiet);
  if (devices_command->parsed()) {
    if (devices_json_option->count() > 0 && devices_json.empty()) devices_json = "-";
    return ListDevices(devices_flags, devices_json);
  }
  if (ops_command->parsed() && ops_coverage) {
    if (ops_names.empty()) return ExitWith(BadInput("tfrun ops --coverage: give the graph files to look at"));
    if (ops_json) return ExitWith(BadInput("tfrun ops --coverage: --json is for the op listing"));
    ApplyLogLevel(true);  // the placements' info lines (soft moves) are not the listing's
    const Coverage coverage = CoverageListing(ops_names, coverage_options);
    if (Status written = WriteStdout(coverage.text); !written.ok()) return ExitWith(written);
    return coverage.first_error.ok() ? 0 : ExitCodeFor(coverage.first_error.kind());
  }
  if (ops_command->parsed()) {
    const StatusOr<std::string> listing = ops_json ? OpsJson(ops_names) : OpsListing(ops_names);
    return ExitWith(listing.ok() ? WriteStdout(*listing) : listing.status());
  }
  if (!test_command->parsed() && options.graph_path != "-" && access(options.graph_path.c_str(), F_OK) != 0) {
    // `tfrun devcies`: a misspelt subcommand reads as a graph path.
    const std::string hint = ClosestMatch(options.graph_path, {"devices", "test", "ops"});
    if (!hint.empty()) {
      return ExitWith(BadInput(fmt::format("{}: no such graph file (did you mean the subcommand '{}'?)",
                                           options.graph_path, hint)));
    }
  }
  if (test_command->parsed()) return RunTests(test_options);
  return RunGraphCommand(options, process_start);
}

}  // namespace
}  // namespace tfrun

int main(int argc, char** argv) {
  std::set_terminate(tfrun::TerminateWithOneLine);
  return tfrun::RunCatchingEverything([&] { return tfrun::Main(argc, argv); });
}
