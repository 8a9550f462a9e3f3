// The Keras build's op sequence and eager's one-op wrapper log, on CPUs and
// simulated GPUs. Whole transcripts are TensorFlow's goldens
// (graphs/tf2_guide_mirrored*, testdata/graphs/keras_*); these pin the
// rules one at a time.
#include "core/session/keras_build.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/devices/simulated_gpus_for_tests.h"

namespace tfrun {
namespace {

Graph::KerasProgram GuideProgram(const std::string& type) {
  Graph::KerasProgram program;
  program.present = true;
  program.strategy_device_type = type;
  program.input_shape = {1};
  program.layers = {{1, true}};
  program.loss = "mse";
  program.optimizer = "SGD";
  return program;
}

int Count(const KerasBuild& build, const std::string& op) {
  int n = 0;
  for (const EagerOpCall& call : build.ops) n += call.op == op;
  return n;
}

// The number of `Executing op` lines TensorFlow 2.21 printed for the
// guide's program over 1, 2 and 3 CPUs (tools/keras_compile_conformance.py).
TEST(KerasBuildTest, ExecutesWhatTensorFlowExecutesOnCpus) {
  const std::vector<std::pair<int, size_t>> keras3 = {{1, 34}, {2, 67}, {3, 100}};
  for (const auto& [cpus, ops] : keras3) {
    const KerasBuild build = BuildKerasProgram(GuideProgram("CPU"), KerasVersion::kKeras3, DeviceSet::CpuOnly(cpus));
    EXPECT_EQ(build.ops.size(), ops) << cpus << " CPUs";
    EXPECT_EQ(build.replicas.size(), static_cast<size_t>(cpus));
    // No Python value is copied anywhere under CPU:0's scope.
    EXPECT_EQ(Count(build, "_EagerConst"), (cpus - 1) + 2) << "the strategy's variable, iterations, learning rate";
  }
  const KerasBuild keras2 = BuildKerasProgram(GuideProgram("CPU"), KerasVersion::kKeras2, DeviceSet::CpuOnly(2));
  EXPECT_EQ(keras2.ops.size(), 93u);
  EXPECT_EQ(Count(keras2, "FloorMod"), 0) << "tf_keras draws with an int32 seed";
}

// mirrored_strategy.py all_local_devices: the GPUs, else the CPUs.
TEST(KerasBuildTest, NoDeviceOfTheTypeMirrorsOverTheLocalDevicesAsMirroredStrategyOfNoneDoes) {
  EXPECT_EQ(BuildKerasProgram(GuideProgram("GPU"), KerasVersion::kKeras3, DeviceSet::CpuOnly(2)).replicas,
            std::vector<int>({0, 1}));
  EXPECT_EQ(BuildKerasProgram(GuideProgram("XLA_CPU"), KerasVersion::kKeras3, SimulatedGpus(2)).replicas,
            std::vector<int>({1, 2}));
}

TEST(KerasBuildTest, GpuReplicasCopyPythonValuesAndGroupOnTheDefaultDevice) {
  const DeviceSet gpus = SimulatedGpus(4);
  const KerasBuild build = BuildKerasProgram(GuideProgram("GPU"), KerasVersion::kKeras3, gpus);
  EXPECT_EQ(build.replicas, std::vector<int>({1, 2, 3, 4}));
  // The strategy's variable: a copy of its value on each GPU first.
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(build.ops[3 * k].op, "_EagerConst");
    EXPECT_EQ(build.ops[3 * k].device, 1 + k);
  }
  for (const EagerOpCall& call : build.ops) {
    if (call.op == "NoOp") EXPECT_EQ(call.device, 1) << "eager's default device is GPU:0";
  }
  EXPECT_EQ(MirroredStrategyInfoLine({0}, gpus),
            "INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:CPU:0',)\n");
}

TEST(EagerOpLogTest, AWrapperIsPlacedOncePerOpDeviceAndAttrs) {
  const DeviceSet cpus = DeviceSet::CpuOnly(2);
  EagerOpLog log(cpus, "g.yaml");
  EagerOpCall cast{"Cast", 0, {{"SrcT", AttrValue{"type", {"INT32"}}}, {"DstT", AttrValue{"type", {"INT64"}}}}, ""};
  const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
  EXPECT_EQ(*log.Execute(cast), "x: (_DeviceArg): " + cpu0 + "\nCast: (Cast): " + cpu0 + "\ny_RetVal: (_Retval): " +
                                    cpu0 + "\nExecuting op Cast in device " + cpu0 + "\n");
  EXPECT_EQ(*log.Execute(cast), "Executing op Cast in device " + cpu0 + "\n");
  cast.device = 1;
  EXPECT_NE(log.Execute(cast)->find("Cast: (Cast): /job:localhost/replica:0/task:0/device:CPU:1"), std::string::npos);
  // A kernel that keeps an output in host memory keeps int32 arguments
  // there too: _Arg, not _DeviceArg (execute.cc IntArgsAndRetvalsOnDevice).
  EagerOpCall key_counter{"StatelessRandomGetKeyCounter", 0, {{"Tseed", AttrValue{"type", {"INT32"}}}}, ""};
  EXPECT_EQ(log.Execute(key_counter)->rfind("seed: (_Arg): " + cpu0, 0), 0u);
}

TEST(EagerOpLogTest, AVariableHandleIsLoggedAfterItsResult) {
  const DeviceSet cpus = DeviceSet::CpuOnly(1);
  EagerOpLog log(cpus, "g.yaml");
  EagerOpCall handle{"VarHandleOp",
                     0,
                     {{"dtype", AttrValue{"type", {"FLOAT"}}},
                      {"shape", AttrValue{"shape", {"(1x1)"}}},
                      {"debug_name", AttrValue{"string", {"dense/kernel/"}}}},
                     ""};
  const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
  EXPECT_EQ(*log.Execute(handle), "resource_RetVal: (_Retval): " + cpu0 + "\nVarHandleOp: (VarHandleOp): " + cpu0 +
                                      "\nExecuting op VarHandleOp in device " + cpu0 + "\n");
  handle.attrs["debug_name"].items = {"dense/bias/"};
  EXPECT_NE(log.Execute(handle)->find("resource_RetVal"), std::string::npos) << "a new name, a new wrapper";
}

TEST(EagerOpLogTest, OnAGpuAnArgumentTheKernelReadsFromHostMemoryIsOnTheHost) {
  const DeviceSet gpus = SimulatedGpus(1);
  EagerOpLog log(gpus, "g.yaml");
  EagerOpCall fill{"Fill", 1, {{"T", AttrValue{"type", {"FLOAT"}}}, {"index_type", AttrValue{"type", {"INT32"}}}}, ""};
  const std::string text = *log.Execute(fill);
  EXPECT_NE(text.find("dims: (_DeviceArg): /job:localhost/replica:0/task:0/device:CPU:0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("value: (_Arg): /job:localhost/replica:0/task:0/device:GPU:0\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace tfrun
