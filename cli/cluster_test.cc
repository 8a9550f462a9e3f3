// Cluster runs under a real MPI launcher: the golden cases of
// testdata/golden/cluster_cases.txt, a failing task, a task that stops
// answering, a run without a launcher, and no process left behind. Every
// launch is bounded by `timeout`. Skips (with the reason) where OpenMPI's
// mpirun is not installed, and fails there under TFRUN_REQUIRE_SETUP=1 (CI, after tools/setup.sh).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli/run_command.h"

namespace {

struct ClusterCase {
  std::string name;
  int exit_code = 0;
  int processes = 1;
  std::string args;
  std::string golden;
};

std::vector<ClusterCase> LoadCases() {
  std::vector<ClusterCase> cases;
  for (const std::vector<std::string>& f : tfrun::ReadCaseTable("testdata/golden/cluster_cases.txt", 5)) {
    cases.push_back({f[0], std::stoi(f[1]), std::stoi(f[2]), f[3], f[4]});
  }
  return cases;
}

bool HaveMpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

// mpirun as CI runs it: as root allowed, quiet (no launcher banners),
// oversubscribed on a 2-core machine, killed if it outlives 60 s. Under
// --config=asan, leak checking is off for these processes only: OpenMPI
// never frees what MPI_Init allocates, from libraries and components whose
// stacks LeakSanitizer cannot name to suppress (memory errors are still
// checked).
std::string Mpirun(int processes, const std::string& env = "") {
  return "env -u CUDA_VISIBLE_DEVICES OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" " +
         env + " timeout -k 5 60 mpirun -q --oversubscribe -n " + std::to_string(processes) + " ";
}

#define SKIP_WITHOUT_MPI()                                                                    \
  do {                                                                                        \
    if (!HaveMpirun()) {                                                                      \
      if (std::getenv("TFRUN_REQUIRE_SETUP") != nullptr) FAIL() << "TFRUN_REQUIRE_SETUP=1 but no mpirun"; \
      GTEST_SKIP() << "OpenMPI's mpirun is not installed (tools/setup.sh installs openmpi-bin)"; \
    }                                                                                         \
  } while (0)

class ClusterGoldenTest : public ::testing::TestWithParam<ClusterCase> {};

// The job's standard error less OpenMPI's own libevent warnings, which its
// launcher may print when a task exits while a socket is being torn down
// ("[warn] Epoll MOD(1) on fd 25 failed. ...": seen once in CI under ASan
// on a loaded machine). They are the launcher's, not tfrun's.
std::string WithoutLauncherWarnings(const std::string& err) {
  std::istringstream lines(err);
  std::string line, kept;
  while (std::getline(lines, line)) {
    if (line.rfind("[warn] Epoll ", 0) == 0) continue;
    kept += line + "\n";
  }
  return kept;
}

TEST_P(ClusterGoldenTest, MatchesGolden) {
  SKIP_WITHOUT_MPI();
  const ClusterCase& c = GetParam();
  const std::string cmd = Mpirun(c.processes) + "cli/tfrun " + c.args;
  tfrun::CommandResult r = tfrun::RunCommand(cmd);
  r.err = WithoutLauncherWarnings(r.err);
  ASSERT_TRUE(r.exited) << cmd << "\n" << r.err;
  EXPECT_EQ(r.exit_code, c.exit_code) << cmd << "\nstderr:\n" << r.err;
  std::string expected;
  ASSERT_TRUE(tfrun::ReadWholeFile("testdata/golden/" + c.golden + ".out", &expected)) << c.golden;
  EXPECT_EQ(r.out, expected) << cmd << "\nstderr:\n" << r.err;
  std::string expected_err;
  if (tfrun::ReadWholeFile("testdata/golden/" + c.golden + ".err", &expected_err)) {
    EXPECT_EQ(r.err, expected_err) << cmd;
  } else if (c.args.find("--benchmark") != std::string::npos) {
    // The timing table goes to standard error; its numbers vary by run.
    EXPECT_EQ(r.err.find("error"), std::string::npos) << cmd << "\n" << r.err;
  } else {
    // The goldens shared with TensorFlow hold standard output only; tfrun
    // prints nothing else for these runs.
    EXPECT_EQ(r.err, "") << cmd;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ClusterGoldenTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<ClusterCase>& info) {
                           std::string s;
                           for (char ch : info.param.name) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return s;
                         });

TEST(ClusterTest, WithoutALauncherSaysToUseMpirun) {
  const tfrun::CommandResult r = tfrun::RunCommand("env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u SLURM_NTASKS "
                                                   "cli/tfrun graphs/cluster_hello.yaml");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "tfrun: error: graphs/cluster_hello.yaml: config.cluster has 2 tasks (/job:local/task:0, "
            "/job:local/task:1): start one process per task with `mpirun -n 2 tfrun graphs/cluster_hello.yaml ...`\n");
}

// --trace in a cluster run: the master writes one file with every task's
// devices and nodes, and flows between the tasks.
TEST(ClusterTest, TraceHoldsEveryTasksNodes) {
  SKIP_WITHOUT_MPI();
  const std::string trace = ::testing::TempDir() + "/cluster_trace.json";
  const tfrun::CommandResult r =
      tfrun::RunCommand(Mpirun(3) + "cli/tfrun graphs/cluster_towers.yaml --benchmark 2 --warmup 0 --trace-all --trace " +
                        trace);
  ASSERT_TRUE(r.exited) << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const tfrun::CommandResult checked = tfrun::RunCommand(
      "python3 tools/check_trace.py " + trace + " --runs 3 --nodes Const,Const_1,MatMul,Const_2,Const_3,MatMul_1,AddN");
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  std::string text;
  ASSERT_TRUE(tfrun::ReadWholeFile(trace, &text));
  for (const char* process : {"/job:ps/replica:0/task:0/device:CPU:0 Compute",
                              "/job:worker/replica:0/task:1/device:CPU:0 Compute",
                              "\"name\":\"/job:worker/replica:0/task:0 cpu\""}) {
    EXPECT_NE(text.find(process), std::string::npos) << process;
  }
}

// Worker 1's simulated GPU cannot hold its constant: it fails, tells the
// others, and every task exits 4; the master names the failing task.
TEST(ClusterTest, AFailingTaskEndsEveryTaskWithItsError) {
  SKIP_WITHOUT_MPI();
  const tfrun::CommandResult r = tfrun::RunCommand(
      Mpirun(3) + "cli/tfrun testdata/graphs/cluster_oom_task.yaml --log-placement --devices "
                  "testdata/topologies/small_gpu.yaml");
  ASSERT_TRUE(r.exited) << r.err;
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.out,
            "b: (MatMul): /job:worker/replica:0/task:1/device:GPU:0\n"
            "total: (AddN): /job:ps/replica:0/task:0/device:GPU:0\n"
            "a: (Const): /job:worker/replica:0/task:1/device:GPU:0\n")
      << r.err;
  EXPECT_NE(r.err.find("tfrun: error: /job:worker/replica:0/task:1 failed: testdata/graphs/cluster_oom_task.yaml:10:9: "
                       "node 'a' on /job:worker/replica:0/task:1/device:GPU:0: ResourceExhaustedError: OOM when "
                       "allocating tensor with shape[4500,4500] and type float on "
                       "/job:worker/replica:0/task:1/device:GPU:0 by allocator GPU_0_bfc\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("MPI_ABORT"), std::string::npos) << r.err;
}

// A task that stops answering is reported within the operation timeout,
// and no process of the run is left behind.
TEST(ClusterTest, ASilentTaskIsReportedWithinTheTimeoutAndNothingIsLeft) {
  SKIP_WITHOUT_MPI();
  // A copy under a name no other test uses, to look for leftovers by.
  const std::string graph = tfrun::TestTmpDir() + "/cluster_stall_" + std::to_string(::getpid()) + ".yaml";
  ASSERT_EQ(std::system(("cp graphs/cluster_towers.yaml " + graph).c_str()), 0);
  const auto started = std::chrono::steady_clock::now();
  tfrun::CommandResult r =
      tfrun::RunCommand(Mpirun(3, "TFRUN_TEST_STALL_TASK=2") + "-x TFRUN_TEST_STALL_TASK cli/tfrun " + graph +
                        " --operation-timeout-ms 500");
  r.err = WithoutLauncherWarnings(r.err);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(r.exited) << r.err;
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "tfrun: error: DeadlineExceededError: /job:worker/replica:0/task:1 did not answer "
            "/job:ps/replica:0/task:0 within 500 ms (waiting for the output of node 'MatMul_1'; "
            "--operation-timeout-ms 500)\n");
  // Far below the 60 s bound: the timeout, the verdict's grace, shutdown.
  EXPECT_LT(seconds, 30.0);
  // The bracket keeps the pattern from matching the shell that runs pgrep.
  const tfrun::CommandResult left =
      tfrun::RunCommand("sleep 1; pgrep -f 'cluster_stall_" + std::to_string(::getpid()) + "[.]yaml' || true");
  EXPECT_EQ(left.out, "") << "processes left behind";
}

// tools/install.sh puts tfrun and its plugin under a prefix, and the
// installed binary runs clusters from there; a binary copied alone says
// where it looked for the plugin and how to fix it.
TEST(ClusterTest, AnInstalledTfrunFindsItsPlugin) {
  SKIP_WITHOUT_MPI();
  const std::string prefix = tfrun::TestTmpDir() + "/prefix";
  tfrun::CommandResult r = tfrun::RunCommand("TFRUN_INSTALL_FROM=. tools/install.sh " + prefix);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = tfrun::RunCommand(Mpirun(2) + prefix + "/bin/tfrun graphs/cluster_hello.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string expected;
  ASSERT_TRUE(tfrun::ReadWholeFile("testdata/golden/tf_cluster_hello.plain.out", &expected));
  EXPECT_EQ(r.out, expected) << r.err;

  const std::string alone = tfrun::TestTmpDir() + "/alone";
  ASSERT_EQ(tfrun::RunCommand("mkdir -p " + alone + " && cp " + prefix + "/bin/tfrun " + alone).exit_code, 0);
  r = tfrun::RunCommand(Mpirun(2) + alone + "/tfrun graphs/cluster_hello.yaml");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("tried " + alone + "/../lib/tfrun/libtfrun_mpi.so ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Install tfrun with tools/install.sh PREFIX"), std::string::npos) << r.err;
}

}  // namespace
