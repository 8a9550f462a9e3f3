// --trace FILE: a run as Chrome Trace Event Format JSON, laid out as
// TensorFlow's python/client/timeline.py lays out a RunMetadata's
// step_stats, so that Perfetto's UI and chrome://tracing open it as they
// open TensorFlow's: a process per device named "<device> Compute" (and
// "<device>/stream:all Compute" for the device-side spans of a real GPU),
// one complete event ("X", category "Op") per node per run named by its op
// type with `name`, `op` and `input0`... in `args`, flow arrows ("s"/"t",
// category "DataFlow") for tensors that cross devices, an "Allocators"
// process with a memory counter ("C") per allocator, and tfrun's own
// phases (load, devices, placement) on a "tfrun" process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "core/session/session.h"

namespace tfrun {

// A stage before the runs (load, devices, placement), steady_clock
// nanoseconds as NodeEvent's (core/session/session.h).
using TracePhase = SessionPhase;

struct TraceInput {
  const Graph* graph = nullptr;
  const DeviceSet* devices = nullptr;
  const Placement* placement = nullptr;
  std::vector<const RunResult*> runs;  // in order; each adds its events
  std::vector<TracePhase> phases;
  int64_t origin_ns = 0;  // the trace's time 0 (the process start)
};

std::string ChromeTrace(const TraceInput& input);

// A task's runs as text for the master of a cluster run, which draws every
// task's nodes in one file (tasks on one host share the monotonic clock;
// on other hosts their clocks are offset by however far they differ).
std::string EncodeRunEvents(const std::vector<const RunResult*>& runs);
// Adds the decoded runs' events to `runs` (run i to runs[i], grown as
// needed); `nodes` bounds the node ids.
Status DecodeRunEvents(const std::string& text, size_t nodes, std::vector<RunResult>* runs);

}  // namespace tfrun
