// What the fuzz targets share (tools/fuzz.sh builds them): the devices and
// kernels every input is placed on and run with, the invariants a
// placement, a printed result and a run must keep, and the whole path of a
// TensorFlow graph file (parse, import both ways, place soft and hard,
// explain, run every node on CPU:0 twice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "core/runtime/kernel_registry.h"

namespace tfrun::fuzz {

// The tensor budget a fuzz input may reach: large enough that a limit that
// does not count what is really allocated (a string's payload, an output
// list) shows as libFuzzer's RSS limit (2 GB), small enough that honest
// inputs stay far below it.
inline constexpr int64_t kFuzzTensorBytes = int64_t{16} << 20;
inline constexpr size_t kFuzzHostBytes = size_t{64} << 20;

// Two CPUs, two simulated GPUs and the XLA devices.
const DeviceSet& Devices();
// The CPU kernels (one thread).
const KernelRegistry& Kernels();

// A broken invariant: says which, then aborts as a crash would, so
// libFuzzer keeps the input.
void Check(bool holds, const char* invariant, const std::string& detail = "");

// Every node on a device of the set that has a kernel for it and matches
// what it asked for; without soft placement, with its colocation group.
void CheckPlacement(const Graph& graph, const Placement& placement, bool soft);
// --explain of the first and last nodes agrees with the placement.
void PlaceAndExplain(const Graph& graph, bool soft, const CompatProfile& profile);
// Soft placement fails only for a node no device could take.
bool SoftPlacementMustSucceed(const Graph& graph);
// NumPy's str() of a numeric result read back gives the value.
void CheckPrintedValue(const Tensor& t, const std::string& text);
// Zeros for every numeric placeholder.
std::vector<Feed> ZeroFeeds(const Graph& graph);
// Every node of a graph placed on CPU:0, run twice: a result or an error,
// never a crash.
void RunEveryNode(const Graph& graph, const Placement& placement);

// A TensorFlow graph file's bytes, read under each of `names` (the name
// decides the kind where it can: "saved_model.pb", "x.meta", "x.pbtxt";
// "fuzz" leaves it to the bytes), imported as a Session and as Python's
// importer would, placed soft and hard with the invariants above, and run
// (RunEveryNode) where soft placement put every node on CPU:0.
void FuzzTfGraphFile(const std::string& bytes, std::initializer_list<const char*> names);

}  // namespace tfrun::fuzz
