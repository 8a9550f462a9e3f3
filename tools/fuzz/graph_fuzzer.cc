// libFuzzer target: load + validate + place (every profile, soft and hard,
// on simulated GPUs) + run on the CPU + print, for arbitrary graph text;
// and for bytes that are not YAML, TensorFlow's graph files (GraphDef,
// MetaGraphDef, SavedModel, text or binary): parse, import both ways, place.
// Any crash, hang, sanitizer report or leak is a finding, and so is a
// broken invariant (Check below): a node placed on a device that does not
// exist, cannot run it or was not asked for; soft placement failing where
// every node has a CPU kernel; a printed result that reads back as another
// value; two runs of one graph that differ. Every finding is fixed and kept
// as a regression file in testdata/bad/.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

#include "core/graph/kernel_lookup.h"
#include "core/graph_def/graph_def_export.h"
#include "core/graph_def/graph_def_import.h"
#include "core/graph_def/tf_graph_file.h"
#include "core/graph_file/loader.h"
#include "core/graph_file/yaml_document.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placement_log.h"
#include "core/placement/placer.h"
#include "core/printing/array_printer.h"
#include "core/runtime/executor.h"
#include "core/runtime/kernel_registry.h"
#include "kernels/cpu/cpu_kernels.h"

namespace {

const tfrun::DeviceSet& Devices() {
  static const tfrun::DeviceSet* devices = [] {
    std::vector<tfrun::LogicalGpu> gpus(2);
    for (int i = 0; i < 2; ++i) {
      gpus[i].tf_id = i;
      gpus[i].cuda_ordinal = i;
      gpus[i].physical.name = "Fuzz GPU";
      gpus[i].memory_limit_bytes = 1 << 20;
    }
    // Two CPU devices and the XLA devices too: every colocation and
    // candidate rule has more than one way to go.
    auto* set = new tfrun::DeviceSet(tfrun::DeviceSet::WithGpus(gpus, true, 2));
    set->AddXlaDevices();
    return set;
  }();
  return *devices;
}

const tfrun::KernelRegistry& Kernels() {
  static const tfrun::KernelRegistry* kernels = [] {
    auto* k = new tfrun::KernelRegistry();
    tfrun::RegisterCpuKernels(k);
    tfrun::SetCpuThreads(1);
    return k;
  }();
  return *kernels;
}

// A broken invariant: say which, then stop as a crash would, so libFuzzer
// keeps the input.
void Check(bool holds, const char* invariant, const std::string& detail = "") {
  if (holds) return;
  std::fprintf(stderr, "graph_fuzzer: invariant broken: %s\n%s\n", invariant, detail.c_str());
  std::abort();
}

// Every node is on a device of the set, which has a kernel for it and
// matches what it asked for (all of it; under soft placement job, replica
// and task, which soft placement keeps).
void CheckPlacement(const tfrun::Graph& graph, const tfrun::Placement& placement, bool soft) {
  const tfrun::DeviceSet& devices = Devices();
  Check(placement.device_of.size() == graph.nodes.size(), "one device per node");
  for (const tfrun::Node& node : graph.nodes) {
    const int d = placement.device_of[node.id];
    Check(d >= 0 && d < devices.size(), "every node is placed on a device that exists", node.name);
    Check(tfrun::TfHasKernel(graph, node, devices[d].type), "every node is placed where it has a kernel", node.name);
    const tfrun::DeviceSpec spec = soft ? node.requested_device.SoftPlacementRelaxed() : node.requested_device;
    Check(spec.Matches(devices[d].spec), "every node is placed on a device its request matches", node.name);
    // Without soft placement a colocation that cannot hold is an error:
    // placed, every node is with the nodes its _class names.
    for (const std::string& with : node.colocation) {
      const tfrun::Node* other = graph.Find(with);
      if (!soft && other != nullptr) {
        Check(placement.device_of[other->id] == d, "a node is placed with the nodes it is colocated with", node.name);
      }
    }
  }
}

// --explain of the first and last nodes agrees with the placement: a
// placed node's explanation ends on its device, which is a candidate, and
// every member of its group is on it; the text renders.
void PlaceAndExplain(const tfrun::Graph& graph, bool soft, const tfrun::CompatProfile& profile) {
  if (graph.nodes.empty()) return;
  const std::vector<int> explain = {0, static_cast<int>(graph.nodes.size()) - 1};
  tfrun::Placement placement;
  const tfrun::Status placed = tfrun::PlaceGraph(graph, Devices(), soft, profile, &placement, explain);
  Check(placement.explanations.size() == explain.size(), "one explanation per node asked about");
  for (const tfrun::NodeExplanation& e : placement.explanations) {
    (void)tfrun::ExplanationText(e, graph, Devices(), profile);
    if (!placed.ok()) continue;
    const int d = placement.device_of[e.node];
    Check(e.device == d, "an explanation ends on the node's device", graph.nodes[e.node].name);
    bool candidate = false;
    for (size_t i = 0; i < e.devices.size(); ++i) candidate = candidate || (e.devices[i] == d && e.excluded[i].empty());
    Check(candidate, "the device chosen is one of the candidates", graph.nodes[e.node].name);
    for (const tfrun::ExplainedMember& m : e.members) {
      Check(placement.device_of[m.node] == d, "a group's members share its device", graph.nodes[m.node].name);
    }
  }
}

// Soft placement only fails for a node no device could take: one without
// a CPU kernel, or one asking for a job, replica or task that is not here.
bool SoftPlacementMustSucceed(const tfrun::Graph& graph) {
  const tfrun::Device& cpu = Devices()[0];
  for (const tfrun::Node& node : graph.nodes) {
    if (!node.requested_device.SoftPlacementRelaxed().Matches(cpu.spec) || !tfrun::TfHasKernel(graph, node, "CPU")) return false;
  }
  return true;
}

// NumPy's str() of a numeric result read back gives the value: exactly for
// integers, booleans and floats printed in full; within the 8 digits NumPy
// keeps otherwise. Summarised arrays ("...") are not checked.
void CheckPrintedValue(const tfrun::Tensor& t, const std::string& text) {
  if (t.dtype() == tfrun::DType::kString || text.find("...") != std::string::npos) return;
  std::string words = text;
  for (char& c : words) c = (c == '[' || c == ']') ? ' ' : c;
  std::istringstream in(words);
  std::vector<std::string> tokens;
  for (std::string w; in >> w;) tokens.push_back(w);
  Check(static_cast<int64_t>(tokens.size()) == t.num_elements(), "a printed result has one number per element",
        text);
  tfrun::DispatchDType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* values = t.data<T>();
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string& w = tokens[i];
      bool same = false;
      if constexpr (std::is_same_v<T, bool>) {
        same = w == (values[i] ? "True" : "False");
      } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        same = std::strtoll(w.c_str(), nullptr, 10) == static_cast<long long>(values[i]);
      } else if constexpr (!std::is_same_v<T, uint8_t>) {
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
std::vector<tfrun::Feed> ZeroFeeds(const tfrun::Graph& graph) {
  std::vector<tfrun::Feed> feeds;
  for (const tfrun::Node& n : graph.nodes) {
    if (n.op != "Placeholder" || n.dtype == tfrun::DType::kString) continue;
    tfrun::Shape shape = n.unknown_rank ? tfrun::Shape{2} : n.shape;
    for (int64_t& d : shape) d = d == tfrun::kUnknownDim ? 2 : d;
    const std::optional<int64_t> elements = tfrun::NumElements(shape);
    if (!elements || *elements > 4096) continue;
    tfrun::StatusOr<tfrun::Tensor> value = tfrun::Tensor::AllocateHost(n.dtype, shape);
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
void RunEveryNode(const tfrun::Graph& graph, const tfrun::Placement& placement) {
  tfrun::Executor executor(graph, Devices(), placement, Kernels());
  std::vector<tfrun::NodeOutput> fetch;
  std::vector<int> targets;
  for (const tfrun::Node& n : graph.nodes) {
    if (n.has_output() && fetch.size() < 64) fetch.push_back({n.id, 0});
    targets.push_back(n.id);
  }
  if (!executor.CheckKernels(fetch, targets, {}).ok()) return;
  const std::vector<tfrun::Feed> feeds = ZeroFeeds(graph);
  for (int step = 0; step < 2; ++step) {
    tfrun::StatusOr<tfrun::RunResult> result = executor.Run(fetch, feeds, targets);
    if (!result.ok()) return;
    for (const tfrun::Tensor& t : result->fetched) {
      if (t.is_valid()) (void)tfrun::NumpyStr(t, tfrun::NumpyPrintOptions());
    }
  }
}

// A TensorFlow graph file: read (as the name "fuzz" leaves it to the
// content, and as a SavedModel), imported as a Session and as Python's
// importer would, placed soft and hard with the same invariants, and run
// (RunEveryNode) where soft placement put every node on CPU:0.
void FuzzTfGraphFile(const std::string& bytes) {
  for (const char* name : {"fuzz", "saved_model.pb"}) {
    tfrun::StatusOr<tfrun::TfGraphFile> file = tfrun::ParseTfGraphBytes(bytes, name, "");
    if (!file.ok()) continue;
    for (tfrun::ImportSemantics semantics : {tfrun::ImportSemantics::kSession, tfrun::ImportSemantics::kPython}) {
      tfrun::GraphDefImportOptions options;
      options.semantics = semantics;
      options.max_nodes = 500;
      options.max_tensor_bytes = 1 << 20;
      tfrun::StatusOr<tfrun::Graph> graph = tfrun::ImportGraphDef(*file, name, options);
      if (!graph.ok()) continue;
      const tfrun::CompatProfile& profile = *tfrun::FindProfile("tf2");
      for (bool soft : {false, true}) {
        tfrun::Placement placement;
        tfrun::Status placed = tfrun::PlaceGraph(*graph, Devices(), soft, profile, &placement);
        (void)tfrun::PlacementLines(*graph, Devices(), placement, profile);
        PlaceAndExplain(*graph, soft, profile);
        if (!placed.ok()) continue;
        CheckPlacement(*graph, placement, soft);
        (void)tfrun::PlacementDot(*graph, Devices(), placement);
        const bool all_on_cpu0 = std::all_of(placement.device_of.begin(), placement.device_of.end(),
                                             [](int d) { return d == 0; });
        if (soft && semantics == tfrun::ImportSemantics::kSession && all_on_cpu0) RunEveryNode(*graph, placement);
      }
    }
  }
}

// A graph file's graph, written as a GraphDef (--write-graph), imports
// back with the same nodes, ops and inputs.
void CheckWrittenGraphDef(const tfrun::Graph& graph) {
  std::vector<std::string> requested;
  for (const tfrun::Node& node : graph.nodes) requested.push_back(node.requested_device.ToString());
  tfrun::StatusOr<std::string> bytes = tfrun::GraphDefBytes(graph, requested, false, "");
  Check(bytes.ok(), "every graph loaded can be written as a GraphDef", bytes.ok() ? "" : std::string(bytes.status().message()));
  tfrun::StatusOr<tfrun::TfGraphFile> file = tfrun::ParseTfGraphBytes(*bytes, "fuzz.pb", "");
  Check(file.ok(), "a written GraphDef parses", file.ok() ? "" : std::string(file.status().message()));
  tfrun::GraphDefImportOptions options;
  options.max_nodes = 1 << 20;
  options.max_tensor_bytes = int64_t{1} << 40;
  tfrun::StatusOr<tfrun::Graph> back = tfrun::ImportGraphDef(*file, "fuzz.pb", options);
  Check(back.ok(), "a written GraphDef imports", back.ok() ? "" : std::string(back.status().message()));
  Check(back->nodes.size() == graph.nodes.size(), "a written GraphDef has the graph's nodes");
  for (const tfrun::Node& node : back->nodes) {
    const tfrun::Node* original = graph.Find(node.name);
    Check(original != nullptr && original->op == node.op && original->inputs.size() == node.inputs.size() &&
              original->dtype == node.dtype,
          "a written node reads back as it was", node.name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tfrun::SetHostMemoryBudget(4 << 20);
  tfrun::LoadOptions limits;
  limits.max_tensor_bytes = 1 << 20;
  limits.max_nodes = 500;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (tfrun::IsTfGraphPath("fuzz", text)) {
    FuzzTfGraphFile(text);
    return 0;
  }
  // A parse in pieces (forced on small inputs) reads what one parse reads,
  // and libyaml reads what yaml-cpp reads (or leaves the text to it).
  {
    auto same = [](const tfrun::StatusOr<tfrun::YamlDocument>& a, const tfrun::StatusOr<tfrun::YamlDocument>& b) {
      return a.ok() == b.ok() &&
             (a.ok() ? a->TreeString() == b->TreeString() : a.status().message() == b.status().message());
    };
    tfrun::StatusOr<tfrun::YamlDocument> whole = tfrun::ParseYaml(text, "fuzz.yaml", {1, size + 1});
    tfrun::StatusOr<tfrun::YamlDocument> pieces = tfrun::ParseYaml(text, "fuzz.yaml", {3, 1});
    tfrun::StatusOr<tfrun::YamlDocument> yaml_cpp =
        tfrun::ParseYaml(text, "fuzz.yaml", {1, size + 1, tfrun::YamlReader::kYamlCppOnly});
    if (!same(whole, pieces)) __builtin_trap();
    Check(same(whole, yaml_cpp), "libyaml reads what yaml-cpp reads",
          whole.ok() ? (yaml_cpp.ok() ? whole->TreeString() + "---\n" + yaml_cpp->TreeString()
                                      : std::string(yaml_cpp.status().message()))
                     : std::string(whole.status().message()));
  }
  // for_each_device scopes repeat their nodes over the four simulated GPUs.
  auto lister = [](const tfrun::GraphConfig&, std::string_view type) -> tfrun::StatusOr<std::vector<int>> {
    return type == "GPU" ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0};
  };
  tfrun::StatusOr<tfrun::Graph> graph = tfrun::LoadGraphText(text, "fuzz.yaml", limits, lister);
  if (!graph.ok()) return 0;
  CheckWrittenGraphDef(*graph);
  for (bool soft : {false, true}) {
    tfrun::Placement placement;
    tfrun::EagerPlan eager;
    if (tfrun::PlanEager(*graph, Devices(), soft, &placement, &eager).ok()) {
      (void)tfrun::ExecutedOpLines(eager.executed, Devices());
      for (const tfrun::NodeOutput& f : graph->fetch) (void)tfrun::EagerValueNode(*graph, eager, f.node);
    }
  }
  for (const char* name : {"tf0", "tf1", "tf2"}) {
    const tfrun::CompatProfile& profile = *tfrun::FindProfile(name);
    for (bool soft : {false, true}) {
      tfrun::Placement placement;
      tfrun::Status placed = tfrun::PlaceGraph(*graph, Devices(), soft, profile, &placement);
      (void)tfrun::PlacementLines(*graph, Devices(), placement, profile);
      if (soft && SoftPlacementMustSucceed(*graph)) {
        Check(placed.ok(), "soft placement never fails where every node has a CPU kernel", placed.message());
      }
      PlaceAndExplain(*graph, soft, profile);
      if (!placed.ok()) continue;
      CheckPlacement(*graph, placement, soft);
      (void)tfrun::DeviceMappingBlock(Devices(), profile);
      (void)tfrun::PlacementDot(*graph, Devices(), placement);
      if (name != std::string("tf2") || !soft) continue;
      tfrun::Executor executor(*graph, Devices(), placement, Kernels());
      // Once unfed, once with every numeric placeholder fed zeros.
      const std::vector<tfrun::Feed> feeds = ZeroFeeds(*graph);
      (void)executor.Run(graph->fetch).ok();
      tfrun::StatusOr<tfrun::RunResult> result = executor.Run(graph->fetch, feeds);
      if (!result.ok()) continue;
      // Variables are assigned once, before the fetches, so a second run
      // sees the same state.
      tfrun::StatusOr<tfrun::RunResult> again = executor.Run(graph->fetch, feeds);
      Check(again.ok(), "a graph that ran runs again", again.status().message());
      Check(again->fetched.size() == result->fetched.size(), "two runs fetch as many results");
      for (size_t i = 0; i < result->fetched.size(); ++i) {
        const tfrun::Tensor& a = result->fetched[i];
        const tfrun::Tensor& b = again->fetched[i];
        Check(a.is_valid() == b.is_valid(), "two runs give the same output");
        if (!a.is_valid()) continue;
        Check(a.dtype() == b.dtype() && a.shape() == b.shape() && a.num_bytes() == b.num_bytes() &&
                  std::memcmp(a.raw(), b.raw(), a.num_bytes()) == 0,
              "two runs give the same output", graph->nodes[graph->fetch[i].node].name);
      }
      for (const tfrun::Tensor& t : result->fetched) {
        if (!t.is_valid()) continue;
        tfrun::NumpyPrintOptions options;
        CheckPrintedValue(t, tfrun::NumpyStr(t, options));
        options.numpy2 = true;
        (void)tfrun::NumpyStr(t, options);
        options.legacy_113 = true;
        (void)tfrun::NumpyStr(t, options);
        (void)tfrun::EagerTensorStr(t, true);
        (void)tfrun::EagerVariableStr("v", t, true);
      }
    }
  }
  return 0;
}
