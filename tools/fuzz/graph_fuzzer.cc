// libFuzzer target: load + validate + place (every profile, soft and hard,
// on simulated GPUs) + run on the CPU + print, for arbitrary graph text.
// Any crash, hang, sanitizer report or leak is a finding; every finding is
// fixed and kept as a regression file in testdata/bad/.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/array_printer.h"
#include "core/compat_profile.h"
#include "core/executor.h"
#include "core/graph_file/loader.h"
#include "core/graph_file/yaml_document.h"
#include "core/placement_log.h"
#include "core/placer.h"
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
    return new tfrun::DeviceSet(tfrun::DeviceSet::WithGpus(gpus, true));
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tfrun::SetHostMemoryBudget(4 << 20);
  tfrun::LoadOptions limits;
  limits.max_tensor_bytes = 1 << 20;
  limits.max_nodes = 500;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // A parse in pieces (forced on small inputs) reads what one parse reads.
  {
    tfrun::StatusOr<tfrun::YamlDocument> whole = tfrun::ParseYaml(text, "fuzz.yaml", {1, size + 1});
    tfrun::StatusOr<tfrun::YamlDocument> pieces = tfrun::ParseYaml(text, "fuzz.yaml", {3, 1});
    if (whole.ok() != pieces.ok() || (whole.ok() ? whole->TreeString() != pieces->TreeString()
                                                 : whole.status().message() != pieces.status().message())) {
      __builtin_trap();
    }
  }
  // for_each_device scopes repeat their nodes over the four simulated GPUs.
  auto lister = [](const tfrun::GraphConfig&, std::string_view type) -> tfrun::StatusOr<std::vector<int>> {
    return type == "GPU" ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0};
  };
  tfrun::StatusOr<tfrun::Graph> graph = tfrun::LoadGraphText(text, "fuzz.yaml", limits, lister);
  if (!graph.ok()) return 0;
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
      if (!placed.ok()) continue;
      (void)tfrun::DeviceMappingBlock(Devices(), profile);
      (void)tfrun::PlacementDot(*graph, Devices(), placement);
      if (name != std::string("tf2") || !soft) continue;
      tfrun::Executor executor(*graph, Devices(), placement, Kernels());
      // Once unfed, once with every numeric placeholder fed zeros (its
      // unknown dimensions 2; no known rank: a vector of 2).
      std::vector<tfrun::Feed> feeds;
      for (const tfrun::Node& n : graph->nodes) {
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
      (void)executor.Run(graph->fetch).ok();
      tfrun::StatusOr<tfrun::RunResult> result = executor.Run(graph->fetch, feeds);
      if (!result.ok()) continue;
      for (const tfrun::Tensor& t : result->fetched) {
        if (!t.is_valid()) continue;
        tfrun::NumpyPrintOptions options;
        (void)tfrun::NumpyStr(t, options);
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
