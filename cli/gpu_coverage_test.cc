// Every node the training graphs run, placed on real GPUs as TensorFlow
// places them, has a kernel tfrun binds for where it lands: the GPU path of
// the tower sample and the training goldens is complete (CUDA kernels,
// cuDNN, or host kernels where TensorFlow keeps the node in host memory).
// No GPU is touched: binding a kernel loads nothing, and nothing runs, so
// this holds in CI; gpu_kernels_test runs the kernels where a GPU is.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "core/graph_def/graph_file_loader.h"
#include "core/passes/pass_registry.h"
#include "core/passes/pin_args_and_rets.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "core/runtime/kernel_registry.h"
#include "kernels/backends.h"

namespace tfrun {
namespace {

// Eight GPUs that are not simulated (as a real machine's): placement puts
// TensorFlow's GPU ops on them, and the executor would run their CUDA
// kernels.
DeviceSet RealLookingGpus() {
  std::vector<LogicalGpu> gpus(8);
  for (int i = 0; i < 8; ++i) {
    gpus[i].tf_id = i;
    gpus[i].cuda_ordinal = i;
    gpus[i].physical.name = "Tesla P40";
    gpus[i].physical.cc_major = 6;
    gpus[i].physical.cc_minor = 1;
    gpus[i].memory_limit_bytes = int64_t{1} << 34;
  }
  return DeviceSet::WithGpus(gpus, false);
}

// The nodes named in `runs` (with what they need) after placement on the
// GPUs, checked against every backend's bindings. "" for all nodes.
//
// `call`: a library function (or "signature:NAME", a SavedModel
// signature's) placed as --call places it, its body instead of the graph.
// `fed`: nodes whose every output is fed (a train step's IteratorGetNext),
// which then do not run.
std::string MissingKernels(const std::string& path, const std::vector<std::string>& runs,
                           const std::string& call = "", const std::vector<std::string>& fed = {}) {
  StatusOr<Graph> graph = LoadAnyGraphFile(path, LoadOptions(), GraphDefImportOptions(), nullptr);
  if (graph.ok() && !call.empty()) {
    Graph::Call the_call;
    the_call.function = call;
    if (call.rfind("signature:", 0) == 0) {
      the_call.function.clear();
      for (const Graph::Signature& signature : graph->signatures) {
        if (signature.name == call.substr(10)) the_call.function = signature.function;
      }
    }
    graph = CallGraph(*graph, the_call);
  }
  // The passes before placement, as a session runs them (the call's
  // nested calls inlined, its control flow lowered).
  if (graph.ok()) {
    const Status passed = RunPrePlacementPasses(&*graph, nullptr, graph->config.do_function_inlining);
    if (!passed.ok()) return "passes: " + passed.message();
  }
  if (!graph.ok()) return "load: " + graph.status().message();
  const DeviceSet devices = RealLookingGpus();
  Placement placement;
  const Status placed =
      PlaceGraph(*graph, devices, true, *FindProfile("tf2"), &placement, {}, call.empty() ? "" : "default");
  if (!placed.ok()) return "place: " + placed.message();
  int on_gpu = 0;
  for (size_t id = 0; id < graph->nodes.size(); ++id) {
    on_gpu += devices[placement.device_of[id]].type == kGpu ? 1 : 0;
  }
  if (on_gpu == 0) return "no node was placed on a GPU";
  std::vector<int> targets;
  for (const Node& node : graph->nodes) {
    const bool wanted = runs.empty() || std::find(runs.begin(), runs.end(), node.name) != runs.end();
    if (wanted) targets.push_back(node.id);
  }
  if (targets.empty()) return "none of the run's nodes is in the graph";
  KernelRegistry kernels;
  BindAllBackendKernels(&kernels);
  std::vector<Feed> feeds;
  for (const std::string& name : fed) {
    const Node* node = graph->Find(name);
    if (node == nullptr) return "no node " + name + " to feed";
    for (int i = 0; i < node->num_outputs; ++i) feeds.push_back(Feed{NodeOutput{node->id, i}, Tensor()});
  }
  Executor executor(*graph, devices, placement, kernels);
  const Status checked = executor.CheckKernels({}, targets, feeds);
  return checked.ok() ? "" : checked.message();
}

TEST(GpuCoverageTest, TheTowerSampleTrainsOnGpusAtOneToEightTowers) {
  for (const char* towers : {"1", "2", "4", "8"}) {
    const std::string path = std::string("graphs/tf/tower_sample_") + towers + ".pb";
    EXPECT_EQ(MissingKernels(path, {"init", "train", "loss"}), "") << path;
  }
}

// The real programs issue 42 trains: golbin's tower sample (tf.layers,
// stateless initializers) and TensorFlow's CIFAR-10 trainer (soft placement
// puts its summaries on the host, as its session asks).
TEST(GpuCoverageTest, TheRealTowerProgramsTrainOnGpus) {
  for (const char* path : {"graphs/tf/golbin_tower_1.pb", "graphs/tf/golbin_tower_8.pb",
                           "graphs/tf/cifar10_multi_gpu_1.pb", "graphs/tf/cifar10_multi_gpu_4.pb"}) {
    EXPECT_EQ(MissingKernels(path, {"init", "train", "loss"}), "") << path;
  }
}

// tf_cnn_benchmarks' three models, one variable mode each (the modes place
// the same ops): its initializers and its training step.
TEST(GpuCoverageTest, TfCnnBenchmarksTrainsOnGpus) {
  for (const char* path : {"graphs/tf/tfcnn_trivial_ps.pb", "graphs/tf/tfcnn_lenet_replicated.pb",
                           "graphs/tf/tfcnn_resnet20_independent.pb"}) {
    EXPECT_EQ(MissingKernels(path, {"init", "local_var_init_op_group", "main_fetch_group", "average_loss/Mean"}), "")
        << path;
  }
}

TEST(GpuCoverageTest, TheTrainingGoldensRunOnAGpu) {
  for (const char* path : {"graphs/tf/training_ops.pbtxt", "graphs/tf/optimizers.pbtxt", "graphs/tf/nan_loss.pbtxt",
                           "graphs/tf/initializers_run.pbtxt", "graphs/tf/resource_run.pbtxt"}) {
    EXPECT_EQ(MissingKernels(path, {}), "") << path;
  }
}

// Issue 42's op goldens: each op's GPU kernel (or TensorFlow's host
// placement for it) is there, so a real GPU finds every one (summary_run's
// ops have CPU kernels only: nothing of it goes to a GPU).
TEST(GpuCoverageTest, TheRealProgramsOpsRunOnAGpu) {
  for (const char* path :
       {"graphs/tf/classifier_ops_run.pbtxt", "graphs/tf/strided_slice_run.pbtxt", "graphs/tf/pool_lrn_run.pbtxt",
        "graphs/tf/batch_norm_run.pbtxt", "graphs/tf/scatter_run.pbtxt", "graphs/tf/random_int_run.pbtxt",
        "graphs/tf/equal_run.pbtxt", "graphs/tf/stateless_random_run.pbtxt"}) {
    EXPECT_EQ(MissingKernels(path, {}), "") << path;
  }
}

// Issue 44's TF2 programs, each call's body as eager TensorFlow places it
// on a GPU machine (the call on GPU:0): depthwise convolutions, tensor
// lists in a while loop, Keras models with an LSTM (Transpose, LogicalAnd).
TEST(GpuCoverageTest, TheTf2CallsAndKerasSavedModelsRunOnGpus) {
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"graphs/tf/call_depthwise.pbtxt", "__inference_f_56"},
      {"graphs/tf/call_tensor_array.pbtxt", "__inference_f_101"},
      {"graphs/tf/sm_keras_dense", "signature:serving_default"},
      {"graphs/tf/sm_keras_conv", "signature:serving_default"},
      {"graphs/tf/sm_keras_lstm", "signature:serving_default"},
      {"graphs/tf/sm_module", "signature:serving_default"},
  };
  for (const auto& [path, call] : calls) EXPECT_EQ(MissingKernels(path, {}, call), "") << path;
}

// The MirroredStrategy train step traced for 2 and 3 GPUs (Keras 3), run
// as tfrun trains it: each replica's IteratorGetNext fed.
TEST(GpuCoverageTest, TheMirroredStrategyTrainStepRunsOnGpus) {
  for (const char* replicas : {"2", "3"}) {
    const std::string golden = std::string("graphs/tf/call_mirrored_gpu_") + replicas + ".train.expected";
    std::ifstream in(golden);
    std::string word, function;
    while (in >> word && word != "--call") {
    }
    in >> function;
    ASSERT_FALSE(function.empty()) << golden;
    std::vector<std::string> fed = {"IteratorGetNext", "IteratorGetNext_1"};
    if (std::string(replicas) == "3") fed.push_back("IteratorGetNext_2");
    EXPECT_EQ(MissingKernels(std::string("graphs/tf/call_mirrored_gpu_") + replicas + ".pbtxt", {"identity_RetVal"},
                             function, fed),
              "")
        << golden;
  }
}

}  // namespace
}  // namespace tfrun
