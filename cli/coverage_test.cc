// `tfrun ops --coverage`: per graph, the ops tfrun cannot run as placed,
// by op, dtype and device type; a graph that does not place is a line and
// the exit code, and the listing goes on.
#include <gtest/gtest.h>

#include <string>

#include "cli/run_command.h"

namespace tfrun {
namespace {

TEST(CoverageTest, SaysWhatRunsAndWhatNotPerGraph) {
  // On 8 simulated P40s soft placement puts an NcclBroadcast on a GPU,
  // where tfrun has no kernel for it (a simulated GPU counts as the real
  // GPU it stands for); an NcclAllReduce, and a classifier's ops, have
  // one there.
  const std::string gpus_flags = " --devices testdata/topologies/p40_x8.yaml --soft-placement";
  const CommandResult gpus = RunCommand("cli/tfrun ops --coverage testdata/graphs/nccl_broadcast.pbtxt "
                                        "testdata/bad/tf/no_kernel_anywhere.pbtxt graphs/tf/classifier_ops_run.pbtxt "
                                        "graphs/matmul.yaml" + gpus_flags);
  ASSERT_TRUE(gpus.exited);
  EXPECT_EQ(gpus.exit_code, 0) << gpus.err;
  EXPECT_EQ(gpus.out,
            "testdata/graphs/nccl_broadcast.pbtxt: 4 nodes of 3 ops; tfrun cannot run 1 of the ops as placed:\n"
            "  NcclBroadcast (float32) on GPU: 1 node ('n')\n"
            "testdata/bad/tf/no_kernel_anywhere.pbtxt: 4 nodes of 3 ops; tfrun runs every one as placed\n"
            "graphs/tf/classifier_ops_run.pbtxt: 55 nodes of 23 ops; tfrun runs every one as placed\n"
            "graphs/matmul.yaml: 3 nodes of 2 ops; tfrun runs every one as placed\n");
  // Without GPUs the graph does not place (its node asks for CPU:1).
  const CommandResult cpu = RunCommand("cli/tfrun ops --coverage testdata/graphs/nccl_broadcast.pbtxt "
                                       "--device-count CPU=2");
  EXPECT_EQ(cpu.exit_code, 3) << cpu.err;
  EXPECT_NE(cpu.out.find("No OpKernel was registered to support Op 'NcclBroadcast'"), std::string::npos) << cpu.out;
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
