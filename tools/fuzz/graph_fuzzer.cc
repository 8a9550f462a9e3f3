// libFuzzer target: load + validate + place (every profile, soft and hard,
// on simulated GPUs) + run on the CPU + print, for arbitrary graph text
// (a Keras program: its build's ops, each logged);
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
#include "core/session/keras_build.h"
#include "kernels/cpu/cpu_kernels.h"
#include "tools/fuzz/fuzz_checks.h"

namespace {

using namespace tfrun::fuzz;  // NOLINT(build/namespaces): the shared checks

// Both unset, or the same dtype, shape and bytes.
bool SameTensor(const tfrun::Tensor& a, const tfrun::Tensor& b) {
  if (!a.is_valid() || !b.is_valid()) return a.is_valid() == b.is_valid();
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.num_bytes() == b.num_bytes() &&
         std::memcmp(a.raw(), b.raw(), a.num_bytes()) == 0;
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
  tfrun::SetHostMemoryBudget(kFuzzHostBytes);
  // A YAML graph's constants stay small (an alias bomb of values reaches
  // its budget, and every phase below walks the values); TensorFlow's
  // files get the larger budget (FuzzTfGraphFile).
  tfrun::LoadOptions limits;
  limits.max_tensor_bytes = 1 << 20;
  limits.max_nodes = 500;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (tfrun::IsTfGraphPath("fuzz", text)) {
    FuzzTfGraphFile(text, {"fuzz", "saved_model.pb"});
    return 0;
  }
  // A parse in pieces (forced on small inputs) reads what one parse reads,
  // and libyaml reads what yaml-cpp reads (or leaves the text to it).
  {
    // The trees compared up to 20,000 lines: an alias bomb expands to the
    // printer's 200,000, and four of them under ASan took the 10 s a unit
    // has (CI, 2026-11-27).
    constexpr size_t kTreeLines = 20000;
    auto same = [](const tfrun::StatusOr<tfrun::YamlDocument>& a, const tfrun::StatusOr<tfrun::YamlDocument>& b) {
      return a.ok() == b.ok() && (a.ok() ? a->TreeString(kTreeLines) == b->TreeString(kTreeLines)
                                         : a.status().message() == b.status().message());
    };
    tfrun::StatusOr<tfrun::YamlDocument> whole = tfrun::ParseYaml(text, "fuzz.yaml", {1, size + 1});
    tfrun::StatusOr<tfrun::YamlDocument> pieces = tfrun::ParseYaml(text, "fuzz.yaml", {3, 1});
    tfrun::StatusOr<tfrun::YamlDocument> yaml_cpp =
        tfrun::ParseYaml(text, "fuzz.yaml", {1, size + 1, tfrun::YamlReader::kYamlCppOnly});
    if (!same(whole, pieces)) __builtin_trap();
    Check(same(whole, yaml_cpp), "libyaml reads what yaml-cpp reads",
          whole.ok() ? (yaml_cpp.ok() ? whole->TreeString(kTreeLines) + "---\n" + yaml_cpp->TreeString(kTreeLines)
                                      : std::string(yaml_cpp.status().message()))
                     : std::string(whole.status().message()));
  }
  // for_each_device scopes repeat their nodes over the four simulated GPUs.
  auto lister = [](const tfrun::GraphConfig&, std::string_view type) -> tfrun::StatusOr<std::vector<int>> {
    return type == "GPU" ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0};
  };
  tfrun::StatusOr<tfrun::Graph> graph = tfrun::LoadGraphText(text, "fuzz.yaml", limits, lister);
  if (!graph.ok()) return 0;
  if (graph->keras.present) {
    // A Keras program: its build's ops on the simulated GPUs (and CPU:0
    // where it mirrors over CPUs), each logged; every op is on a device.
    for (tfrun::KerasVersion version : {tfrun::KerasVersion::kKeras3, tfrun::KerasVersion::kKeras2}) {
      const tfrun::KerasBuild build = tfrun::BuildKerasProgram(graph->keras, version, Devices());
      Check(!build.replicas.empty(), "a Keras program has replicas");
      tfrun::EagerOpLog log(Devices(), "fuzz.yaml");
      for (const tfrun::EagerOpCall& op : build.ops) {
        Check(op.device >= 0 && op.device < Devices().size(), "a Keras op is on a device", op.op);
        tfrun::StatusOr<std::string> lines = log.Execute(op);
        Check(lines.ok(), "every op of a Keras build is logged", lines.ok() ? "" : lines.status().message());
      }
    }
    return 0;
  }
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
        Check(SameTensor(result->fetched[i], again->fetched[i]), "two runs give the same output",
              graph->nodes[graph->fetch[i].node].name);
      }
      // Fused elementwise chains (elementwise_fusion.h) compute what the
      // nodes' own kernels compute, bit for bit.
      tfrun::Executor unfused(*graph, Devices(), placement, Kernels());
      unfused.set_fuse_elementwise(false);
      (void)unfused.Run(graph->fetch).ok();
      tfrun::StatusOr<tfrun::RunResult> plain = unfused.Run(graph->fetch, feeds);
      Check(plain.ok(), "a run without fusion succeeds where the fused run did", plain.status().message());
      for (size_t i = 0; i < result->fetched.size(); ++i) {
        Check(SameTensor(result->fetched[i], plain->fetched[i]), "a run without fusion gives the same output",
              graph->nodes[graph->fetch[i].node].name);
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
