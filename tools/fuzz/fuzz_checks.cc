#include "tools/fuzz/fuzz_checks.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

#include "core/graph/function_library.h"
#include "core/graph/kernel_lookup.h"
#include "core/graph_def/graph_def_export.h"
#include "core/graph_def/graph_def_import.h"
#include "core/graph_def/tf_graph_file.h"
#include "core/graph_file/loader.h"
#include "core/graph_file/yaml_document.h"
#include "core/passes/pass_registry.h"
#include "core/passes/pin_args_and_rets.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placement_log.h"
#include "core/placement/placer.h"
#include "core/printing/array_printer.h"
#include "core/runtime/executor.h"
#include "core/runtime/kernel_registry.h"
#include "kernels/cpu/cpu_kernels.h"

namespace tfrun::fuzz {


const DeviceSet& Devices() {
  static const DeviceSet* devices = [] {
    std::vector<LogicalGpu> gpus(2);
    for (int i = 0; i < 2; ++i) {
      gpus[i].tf_id = i;
      gpus[i].cuda_ordinal = i;
      gpus[i].physical.name = "Fuzz GPU";
      gpus[i].memory_limit_bytes = 1 << 20;
    }
    // Two CPU devices and the XLA devices too: every colocation and
    // candidate rule has more than one way to go.
    auto* set = new DeviceSet(DeviceSet::WithGpus(gpus, true, 2));
    set->AddXlaDevices();
    return set;
  }();
  return *devices;
}

const KernelRegistry& Kernels() {
  static const KernelRegistry* kernels = [] {
    auto* k = new KernelRegistry();
    RegisterCpuKernels(k);
    SetCpuThreads(1);
    return k;
  }();
  return *kernels;
}

// A broken invariant: say which, then stop as a crash would, so libFuzzer
// keeps the input.
void Check(bool holds, const char* invariant, const std::string& detail) {
  if (holds) return;
  std::fprintf(stderr, "graph_fuzzer: invariant broken: %s\n%s\n", invariant, detail.c_str());
  std::abort();
}

// Every node is on a device of the set, which has a kernel for it and
// matches what it asked for (all of it; under soft placement job, replica
// and task, which soft placement keeps), unless a reference edge overrode
// its request.
void CheckPlacement(const Graph& graph, const Placement& placement, bool soft) {
  const DeviceSet& devices = Devices();
  Check(placement.device_of.size() == graph.nodes.size(), "one device per node");
  std::vector<bool> overridden(graph.nodes.size(), false);
  for (int id : placement.request_overridden) overridden[id] = true;
  for (const Node& node : graph.nodes) {
    const int d = placement.device_of[node.id];
    Check(d >= 0 && d < devices.size(), "every node is placed on a device that exists", node.name);
    Check(TfHasKernel(graph, node, devices[d].type), "every node is placed where it has a kernel", node.name);
    // A reference edge's producer decides where its consumer goes, as in
    // TensorFlow, which logs that it ignored the consumer's request.
    if (overridden[node.id]) continue;
    const DeviceSpec spec = soft ? node.requested_device.SoftPlacementRelaxed() : node.requested_device;
    Check(spec.Matches(devices[d].spec), "every node is placed on a device its request matches", node.name);
    // Without soft placement a colocation that cannot hold is an error:
    // placed, every node is with the nodes its _class names.
    for (const std::string& with : node.colocation) {
      const Node* other = graph.Find(with);
      if (!soft && other != nullptr) {
        Check(placement.device_of[other->id] == d, "a node is placed with the nodes it is colocated with", node.name);
      }
    }
  }
}

// --explain of the first and last nodes agrees with the placement: a
// placed node's explanation ends on its device, which is a candidate, and
// every member of its group is on it; the text renders.
void PlaceAndExplain(const Graph& graph, bool soft, const CompatProfile& profile) {
  if (graph.nodes.empty()) return;
  const std::vector<int> explain = {0, static_cast<int>(graph.nodes.size()) - 1};
  Placement placement;
  const Status placed = PlaceGraph(graph, Devices(), soft, profile, &placement, explain);
  Check(placement.explanations.size() == explain.size(), "one explanation per node asked about");
  for (const NodeExplanation& e : placement.explanations) {
    (void)ExplanationText(e, graph, Devices(), profile);
    if (!placed.ok()) continue;
    const int d = placement.device_of[e.node];
    Check(e.device == d, "an explanation ends on the node's device", graph.nodes[e.node].name);
    bool candidate = false;
    for (size_t i = 0; i < e.devices.size(); ++i) candidate = candidate || (e.devices[i] == d && e.excluded[i].empty());
    Check(candidate, "the device chosen is one of the candidates", graph.nodes[e.node].name);
    for (const ExplainedMember& m : e.members) {
      Check(placement.device_of[m.node] == d, "a group's members share its device", graph.nodes[m.node].name);
    }
  }
}

// Soft placement only fails for a node no device could take: one without
// a CPU kernel, or one asking for a job, replica or task that is not here.
bool SoftPlacementMustSucceed(const Graph& graph) {
  const Device& cpu = Devices()[0];
  for (const Node& node : graph.nodes) {
    if (!node.requested_device.SoftPlacementRelaxed().Matches(cpu.spec) || !TfHasKernel(graph, node, "CPU")) return false;
  }
  return true;
}

// NumPy's str() of a numeric result read back gives the value: exactly for
// integers, booleans and floats printed in full; within the 8 digits NumPy
// keeps otherwise. Summarised arrays ("...") are not checked.
void CheckPrintedValue(const Tensor& t, const std::string& text) {
  if (t.dtype() == DType::kString || text.find("...") != std::string::npos) return;
  std::string words = text;
  for (char& c : words) c = (c == '[' || c == ']') ? ' ' : c;
  std::istringstream in(words);
  std::vector<std::string> tokens;
  for (std::string w; in >> w;) tokens.push_back(w);
  Check(static_cast<int64_t>(tokens.size()) == t.num_elements(), "a printed result has one number per element",
        text);
  DispatchDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* values = t.data<T>();
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string& w = tokens[i];
      bool same = false;
      if constexpr (std::is_same_v<T, bool>) {
        same = w == (values[i] ? "True" : "False");
      } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        same = std::strtoll(w.c_str(), nullptr, 10) == static_cast<long long>(values[i]);
      } else if constexpr (!std::is_same_v<T, StringByte>) {
        const double read = std::strtod(w.c_str(), nullptr);
        double exact = 0;
        bool rounds_back = false;  // the text is the shortest that reads back as the narrow float
        if constexpr (std::is_same_v<T, double>) {
          exact = values[i];
        } else {
          exact = static_cast<float>(values[i]);
          rounds_back = static_cast<float>(T(static_cast<float>(read))) == static_cast<float>(values[i]);
        }
        same = (std::isnan(exact) && std::isnan(read)) || read == exact || rounds_back ||
               std::fabs(read - exact) <= 5.000001e-9 * std::fmax(1.0, std::fabs(exact));
      }
      Check(same, "printing then reading a result gives its value", w + " in " + text);
    }
  });
}

// Zeros for every numeric placeholder: its unknown dimensions 2, no known
// rank a vector of 2.
std::vector<Feed> ZeroFeeds(const Graph& graph) {
  std::vector<Feed> feeds;
  for (const Node& n : graph.nodes) {
    if (n.op != "Placeholder" || n.dtype == DType::kString) continue;
    Shape shape = n.unknown_rank ? Shape{2} : n.shape;
    for (int64_t& d : shape) d = d == kUnknownDim ? 2 : d;
    const std::optional<int64_t> elements = NumElements(shape);
    if (!elements || *elements > 4096) continue;
    StatusOr<Tensor> value = Tensor::AllocateHost(n.dtype, shape);
    if (!value.ok()) continue;
    std::memset(value->raw(), 0, value->num_bytes());
    feeds.push_back({{n.id, 0}, *value});
  }
  return feeds;
}

// A TensorFlow graph placed on the CPU runs every node twice, as two
// training steps would (the kernels of training graphs are reachable only
// from such files): whatever the attrs and shapes, a run ends in a result
// or an error, never a crash.
void RunEveryNode(const Graph& graph, const Placement& placement) {
  Executor executor(graph, Devices(), placement, Kernels());
  // A while loop may never end: a run is bounded, as --timeout bounds it.
  executor.set_timeout(2.0);
  std::vector<NodeOutput> fetch;
  std::vector<int> targets;
  // With control flow, every node runs as a target: fetching one inside a
  // loop, or a dead one, would fail the run before the propagator worked.
  const bool control_flow = graph.HasControlFlow();
  for (const Node& n : graph.nodes) {
    if (n.has_output() && fetch.size() < 64 && !control_flow) fetch.push_back({n.id, 0});
    targets.push_back(n.id);
  }
  if (!executor.CheckKernels(fetch, targets, {}).ok()) return;
  const std::vector<Feed> feeds = ZeroFeeds(graph);
  for (int step = 0; step < 2; ++step) {
    StatusOr<RunResult> result = executor.Run(fetch, feeds, targets);
    if (!result.ok()) return;
    for (const Tensor& t : result->fetched) {
      if (t.is_valid()) (void)NumpyStr(t, NumpyPrintOptions());
    }
  }
}

// A library's functions called as TF2 calls them (--call): instantiated,
// pinned, lowered and inlined, placed on the default and on the last
// device with the placement invariants.
void FuzzCalls(const Graph& graph) {
  // The names, from the library itself (a node that calls one names it).
  std::vector<std::string> names;
  for (const Node& n : graph.nodes) {
    const std::string called = CalledFunction(graph, n);
    if (!called.empty() && names.size() < 2) names.push_back(called);
  }
  if (names.empty()) names.push_back(graph.functions->FirstName());
  const CompatProfile& profile = *FindProfile("tf2");
  for (const std::string& name : names) {
    StatusOr<Graph> called = CallGraph(graph, Graph::Call{name, "", {}});
    if (!called.ok()) continue;
    if (!RunPrePlacementPasses(&*called, &Devices(), true).ok()) continue;
    for (const std::string& device : {std::string("default"), Devices()[Devices().size() - 1].name}) {
      Placement placement;
      if (PlaceGraph(*called, Devices(), true, profile, &placement, {}, device).ok()) {
        CheckPlacement(*called, placement, true);
        (void)PlacementLines(*called, Devices(), placement, profile);
      }
    }
  }
}

// A TensorFlow graph file: read (as the name "fuzz" leaves it to the
// content, and as a SavedModel), imported as a Session and as Python's
// importer would, placed soft and hard with the same invariants, and run
// (RunEveryNode) where soft placement put every node on CPU:0.
void FuzzTfGraphFile(const std::string& bytes, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    StatusOr<TfGraphFile> file = ParseTfGraphBytes(bytes, name, "");
    if (!file.ok()) continue;
    for (ImportSemantics semantics : {ImportSemantics::kSession, ImportSemantics::kPython}) {
      GraphDefImportOptions options;
      options.semantics = semantics;
      options.max_nodes = 500;
      options.max_tensor_bytes = kFuzzTensorBytes;
      StatusOr<Graph> graph = ImportGraphDef(*file, name, options);
      if (!graph.ok()) continue;
      // Each of the library's first functions as a TF2 call places it.
      if (semantics == ImportSemantics::kSession && graph->functions != nullptr) FuzzCalls(*graph);
      // TensorFlow's passes before placement, as a run makes them.
      if (!RunPrePlacementPasses(&*graph, &Devices()).ok()) continue;
      const CompatProfile& profile = *FindProfile("tf2");
      for (bool soft : {false, true}) {
        Placement placement;
        Status placed = PlaceGraph(*graph, Devices(), soft, profile, &placement);
        (void)PlacementLines(*graph, Devices(), placement, profile);
        PlaceAndExplain(*graph, soft, profile);
        if (!placed.ok()) continue;
        CheckPlacement(*graph, placement, soft);
        (void)PlacementDot(*graph, Devices(), placement);
        const bool all_on_cpu0 = std::all_of(placement.device_of.begin(), placement.device_of.end(),
                                             [](int d) { return d == 0; });
        if (soft && semantics == ImportSemantics::kSession && all_on_cpu0) RunEveryNode(*graph, placement);
      }
    }
  }
}

}  // namespace tfrun::fuzz
