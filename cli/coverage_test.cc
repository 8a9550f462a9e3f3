// `tfrun ops --coverage`: per graph, the ops tfrun cannot run as placed,
// by op, dtype and device type; a graph that does not place is a line and
// the exit code, and the listing goes on.
#include <gtest/gtest.h>

#include <string>

#include "cli/run_command.h"

namespace tfrun {
namespace {

TEST(CoverageTest, SaysWhatRunsAndWhatNotPerGraph) {
  // On 8 simulated P40s a classifier's ops go to the GPUs, where tfrun has
  // no CUDA kernel for some of them (a simulated GPU counts as the real
  // GPU it stands for); on the CPU it runs them all.
  const CommandResult gpus = RunCommand(
      "cli/tfrun ops --coverage graphs/tf/classifier_ops_run.pbtxt graphs/matmul.yaml --devices "
      "testdata/topologies/p40_x8.yaml --soft-placement");
  ASSERT_TRUE(gpus.exited);
  EXPECT_EQ(gpus.exit_code, 0) << gpus.err;
  EXPECT_NE(gpus.out.find("graphs/tf/classifier_ops_run.pbtxt: 55 nodes of 23 ops; tfrun cannot run "),
            std::string::npos)
      << gpus.out;
  EXPECT_NE(gpus.out.find("\n  SparseSoftmaxCrossEntropyWithLogits (float32) on GPU: 2 nodes ('xent/xent', "
                          "'wide_xent/wide_xent')\n"),
            std::string::npos)
      << gpus.out;
  EXPECT_NE(gpus.out.find("graphs/matmul.yaml: 3 nodes of 2 ops; tfrun runs every one as placed\n"), std::string::npos)
      << gpus.out;
  const CommandResult cpu = RunCommand("cli/tfrun ops --coverage graphs/tf/classifier_ops_run.pbtxt");
  EXPECT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_EQ(cpu.out, "graphs/tf/classifier_ops_run.pbtxt: 55 nodes of 23 ops; tfrun runs every one as placed\n");
}

TEST(CoverageTest, AGraphThatDoesNotPlaceIsALineAndTheExitCode) {
  const CommandResult r =
      RunCommand("cli/tfrun ops --coverage graphs/tf/tutorial_multi_tower.pbtxt graphs/matmul.yaml");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("graphs/tf/tutorial_multi_tower.pbtxt: not placed: graphs/tf/tutorial_multi_tower.pbtxt:"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("graphs/matmul.yaml: 3 nodes of 2 ops"), std::string::npos) << r.out;
  const CommandResult none = RunCommand("cli/tfrun ops --coverage");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("give the graph files"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace tfrun
