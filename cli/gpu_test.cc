// On a machine with a GPU: the example graphs run on it (no --devices) and
// print what they print on the CPU (CUDA_VISIBLE_DEVICES=-1), with TF32 off
// so float32 is bit-faithful. Skips, saying why, where no GPU is visible.
#include <gtest/gtest.h>

#include "cli/run_command.h"
#include "kernels/cuda/gpu_visible.h"
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
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

// The training goldens (TensorFlow's own output, graphs/tf/*.expected) on
// the GPU: cuDNN convolutions, the CUDA math, reductions, softmax, pooling
// and optimizer kernels, with TF32 off. The goldens' own tolerance
// (1e-6) is the CPU's; a GPU sums in other orders (cuDNN's algorithms,
// tree reductions), so 1e-4 relative here.
std::string GoldenArgs(const std::string& expected) {
  std::ifstream in(expected);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.rfind("# args: ", 0), 0u) << expected;
  std::string args = first.substr(8);
  args = std::regex_replace(args, std::regex(" ?--(rtol|atol) [^ ]+"), "");
  return args;
}

TEST(GpuTrainingTest, TrainingGoldensMatchTensorFlowOnTheGpu) {
  TFRUN_SKIP_WITHOUT_GPU();
  for (const char* name : {"training_ops.run", "optimizers.run", "nan_loss.steps"}) {
    const std::string stem = std::string(name).substr(0, std::string(name).find('.'));
    const std::string expected = std::string("graphs/tf/") + name + ".expected";
    // --expect compares every line: the golden without its "# args:" line.
    const std::string bare = ::testing::TempDir() + "/" + name + ".expected";
    {
      std::ifstream in(expected);
      std::ofstream out(bare);
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("# ", 0) != 0) out << line << "\n";
      }
    }
    const tfrun::CommandResult r = tfrun::RunCommand("cli/tfrun graphs/tf/" + stem + ".pbtxt " + GoldenArgs(expected) +
                                                     " --tf32 off --rtol 1e-4 --atol 1e-5 --expect " + bare);
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    const tfrun::CommandResult log =
        tfrun::RunCommand("cli/tfrun graphs/tf/" + stem + ".pbtxt --place-only --log-placement");
    EXPECT_NE(log.out.find("device:GPU:0"), std::string::npos) << log.out;
  }
}

// The tower sample (its GPU graph, every op on GPU:0) trains on the GPU as
// on the CPU: the same losses step for step within 1e-3 (cuDNN and the
// CUDA reductions sum in other orders than oneDNN and Eigen).
TEST(GpuTrainingTest, TowerSampleTrainsOnTheGpuAsOnTheCpu) {
  TFRUN_SKIP_WITHOUT_GPU();
  const std::string run =
      "graphs/tf/tower_sample_1.pb --init init --targets train --fetch loss --steps 4 --batch 8 "
      "--feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy --quiet";
  const tfrun::CommandResult gpu = tfrun::RunCommand("cli/tfrun " + run + " --tf32 off");
  const tfrun::CommandResult cpu = tfrun::RunCommand("CUDA_VISIBLE_DEVICES=-1 cli/tfrun " + run + " --soft-placement");
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  std::istringstream g(gpu.out), c(cpu.out);
  std::string gl, cl;
  int steps = 0;
  while (std::getline(c, cl)) {
    ASSERT_TRUE(std::getline(g, gl)) << gpu.out;
    ASSERT_EQ(cl.rfind("[np.float32(", 0), 0u) << cl;
    ASSERT_EQ(gl.rfind("[np.float32(", 0), 0u) << gl;
    const double want = std::stod(cl.substr(12)), got = std::stod(gl.substr(12));
    EXPECT_NEAR(got, want, 1e-3 * std::abs(want)) << "step " << steps + 1;
    ++steps;
  }
  EXPECT_EQ(steps, 4);
  // On two logical GPUs of one device, two towers: the same program runs.
  const tfrun::CommandResult two = tfrun::RunCommand(
      "cli/tfrun graphs/tf/tower_sample_2.pb --init init --targets train --fetch loss --steps 2 --batch 8 "
      "--feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy --quiet --virtual-devices "
      "2048,2048");
  EXPECT_EQ(two.exit_code, 0) << two.err;
}

}  // namespace
