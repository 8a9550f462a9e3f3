// `tfrun GRAPH`: the command line's options resolved once into a core
// session (core/session: load, passes, place, plan, run), and every output
// of the run written by one unit, as IREE's tools write their results:
// standard output, --json, --dot, --out, --trace (and --export-times),
// --write-graph, --write-graph-placed and --expect. Also the session's
// host: the devices the flags describe, a cluster's MPI, the backends'
// kernels and the --feed values.
#pragma once

#include <chrono>
#include <functional>

#include "cli/flags.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/placer.h"

namespace tfrun {

// The run's outputs (--json, --dot, --out, --expect's file), checked before
// the graph is loaded: a bad destination is exit 2 with nothing run. No
// output may be one of the run's inputs (the graph file, `extra_inputs`
// such as the file a wrapper names, --feed's .npy files, --expect's file,
// --devices' topology): tfrun never writes over what it reads.
Status CheckRunOutputs(const RunOptions& options, const std::vector<std::string>& extra_inputs = {});

// Runs the graph and writes every output; the process's exit code.
int RunGraphCommand(const RunOptions& options, std::chrono::steady_clock::time_point process_start);

// Loads and places options.graph_path as a run of it would (devices,
// passes, soft placement), prints nothing and runs nothing, and hands the
// graph, its devices and the placement to `placed` while they live.
using PlacedGraphFn = std::function<Status(const Graph&, const DeviceSet&, const Placement&)>;
Status PlaceGraphQuietly(const RunOptions& options, const PlacedGraphFn& placed);

// An error's line on standard error, and its exit code.
int ExitWith(const Status& status);

}  // namespace tfrun
