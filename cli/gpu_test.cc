// On a machine with a GPU: the example graphs run on it (no --devices) and
// print what they print on the CPU (CUDA_VISIBLE_DEVICES=-1), with TF32 off
// so float32 is bit-faithful. Skips, saying why, where no GPU is visible.
#include <gtest/gtest.h>

#include "cli/run_command.h"
#include "kernels/cuda/gpu_visible.h"
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

std::string Output(const std::string& command, int* exit_code) {
  const tfrun::CommandResult r = tfrun::RunCommand(command);
  *exit_code = r.exit_code;
  return r.out;
}

class GpuGraphTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuGraphTest, SameResultsOnGpuAndCpu) {
  TFRUN_SKIP_WITHOUT_GPU();
  int gpu_exit = 0, cpu_exit = 0;
  const std::string gpu = Output("cli/tfrun " + GetParam() + " --tf32 off --soft-placement", &gpu_exit);
  const std::string cpu = Output("CUDA_VISIBLE_DEVICES=-1 cli/tfrun " + GetParam() + " --soft-placement", &cpu_exit);
  EXPECT_EQ(gpu_exit, 0);
  EXPECT_EQ(cpu_exit, 0);
  EXPECT_EQ(gpu, cpu);
  const std::string log = Output("cli/tfrun " + GetParam() + " --soft-placement --log-placement", &gpu_exit);
  EXPECT_NE(log.find("device:GPU:0"), std::string::npos) << log;
}

INSTANTIATE_TEST_SUITE_P(Examples, GpuGraphTest,
                         ::testing::Values("graphs/matmul.yaml", "graphs/addn.yaml", "graphs/multi_tower.yaml",
                                           "graphs/cast_cpu_only.yaml", "graphs/variable_int32_gpu.yaml",
                                           "graphs/npy_input.yaml", "testdata/graphs/ops_dtypes.yaml",
                                           "testdata/graphs/variables.yaml",
                                           // TensorFlow's graph files: its random numbers (drawn on the
                                           // host, so the CPU kernels' on a GPU too), resource variables,
                                           // Reshape, Shape and Fill.
                                           "graphs/tf/initializers_run.pbtxt --targets init --fetch w --fetch v "
                                           "--fetch t --fetch y",
                                           "graphs/tf/resource_run.pbtxt --targets init --fetch y",
                                           "graphs/tf/reshape_fill.pbtxt --fetch z --fetch r --fetch s --fetch f"));

// Two towers on four virtual GPUs of one device (their streams ordered by
// events), an allow_growth run with real allocations, and a real
// out-of-memory on a small virtual device, as TensorFlow reports it.
TEST(GpuRunTest, VirtualGpusGrowthAndOutOfMemory) {
  TFRUN_SKIP_WITHOUT_GPU();
  int code = 0, cpu_code = 0;
  const std::string towers = Output(
      "cli/tfrun graphs/multi_tower.yaml --tf32 off --log-placement --virtual-devices 1024,1024,1024,1024", &code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(towers.find("MatMul: (MatMul): /job:localhost/replica:0/task:0/device:GPU:2"), std::string::npos) << towers;
  EXPECT_NE(towers.find("MatMul_1: (MatMul): /job:localhost/replica:0/task:0/device:GPU:3"), std::string::npos);
  const std::string cpu = Output("CUDA_VISIBLE_DEVICES=-1 cli/tfrun graphs/multi_tower.yaml", &cpu_code);
  EXPECT_EQ(towers.substr(towers.rfind("[[")), cpu);

  const std::string grown = Output("cli/tfrun graphs/matmul.yaml --allow-growth --tf32 off", &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(grown, Output("CUDA_VISIBLE_DEVICES=-1 cli/tfrun graphs/matmul.yaml", &cpu_code));

  const tfrun::CommandResult oom =
      tfrun::RunCommand("cli/tfrun graphs/oom_gpu.yaml --no-soft-placement --virtual-devices 64");
  EXPECT_EQ(oom.exit_code, 4) << oom.err;
  EXPECT_NE(oom.err.find("ResourceExhaustedError: OOM when allocating tensor with shape[10000,10000] and type float "
                         "on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"),
            std::string::npos)
      << oom.err;
}

}  // namespace
