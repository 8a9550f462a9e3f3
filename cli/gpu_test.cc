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
  std::string why;
  if (!tfrun::GpuVisible(&why)) GTEST_SKIP() << why;
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
                                           "testdata/graphs/variables.yaml"));

}  // namespace
