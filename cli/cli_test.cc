// The tfrun binary's file outputs and exit codes: --out writes .npy files
// NumPy can load, --json reports results and errors, a failed run leaves no
// output files, and bad .npy inputs are clean errors (exit 2).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <sstream>
#include <string>

#include "cli/run_command.h"
#include "core/base/npy.h"

namespace tfrun {
namespace {

using Outcome = CommandResult;

std::string TmpDir() { return TestTmpDir(); }

std::string Slurp(const std::string& path) {
  std::string text;
  ReadWholeFile(path, &text);
  return text;
}

Outcome Tfrun(const std::string& args) { return RunCommand("cli/tfrun " + args); }

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The binary starts where no CUDA library is installed: cudart is linked
// statically and cuBLAS is opened at the first GPU MatMul.
TEST(CliTest, LinksNoCudaLibrary) {
  const Outcome ldd = RunCommand("ldd cli/tfrun");
  if (ldd.exit_code != 0) GTEST_SKIP() << "ldd is not available here";
  for (const char* lib : {"libcuda", "libcudart", "libcublas", "libnvrtc"}) {
    EXPECT_EQ(ldd.out.find(lib), std::string::npos) << lib << " in:\n" << ldd.out;
  }
}

// Where the NVIDIA driver's device file exists but CUDA finds no GPU, tfrun
// says so with CUDA's error name (the machine is not simply CPU-only).
TEST(CliTest, ADriverWithoutWorkingCudaIsReported) {
  const Outcome r = RunCommand("TFRUN_TEST_DRIVER_DEVICE=graphs/matmul.yaml cli/tfrun devices");
  EXPECT_EQ(r.exit_code, 0);
  const std::string gpus = RunCommand("nvidia-smi -L 2>/dev/null").out;
  if (!gpus.empty()) GTEST_SKIP() << "this machine has a working GPU";
  EXPECT_NE(r.err.find("tfrun: warning: the NVIDIA driver is installed but CUDA finds no GPU: cudaError"),
            std::string::npos)
      << r.err;
}

// Under TFRUN_REQUIRE_GPU=1 a GPU test that finds no GPU fails instead of
// skipping, so a GPU run that never reached a GPU cannot pass. The GPU
// tests run whole: this test's own shard and filter (Bazel's sharding and
// --test_filter variables, which gtest reads) are not theirs.
TEST(CliTest, RequireGpuTurnsSkipsIntoFailures) {
  const std::string whole =
      "env -u TEST_SHARD_INDEX -u TEST_TOTAL_SHARDS -u TEST_SHARD_STATUS_FILE -u GTEST_SHARD_INDEX "
      "-u GTEST_TOTAL_SHARDS -u GTEST_SHARD_STATUS_FILE -u TESTBRIDGE_TEST_ONLY -u GTEST_FILTER ";
  if (RunCommand(whole + "kernels/cuda_elementwise_test --gtest_brief=1").out.find("[  SKIPPED ]") ==
      std::string::npos) {
    GTEST_SKIP() << "a GPU is visible: the GPU tests run instead of skipping";
  }
  for (const char* test :
       {"kernels/cuda_elementwise_test", "kernels/cublas_test", "kernels/cudnn_test", "cli/gpu_kernels_test",
        "cli/gpu_test"}) {
    const Outcome r = RunCommand(whole + "TFRUN_REQUIRE_GPU=1 " + test + " --gtest_brief=1");
    EXPECT_NE(r.exit_code, 0) << test;
    EXPECT_NE(r.out.find("TFRUN_REQUIRE_GPU=1 but no GPU visible"), std::string::npos) << test << "\n" << r.out;
  }
}

// libmpi is loaded through the plugin only for cluster runs.
TEST(CliTest, LinksNoMpiLibrary) {
  const Outcome ldd = RunCommand("ldd cli/tfrun");
  ASSERT_TRUE(ldd.exited);
  EXPECT_EQ(ldd.out.find("libmpi"), std::string::npos) << ldd.out;
}

TEST(CliTest, StringResultsGoToNpyAsBytes) {
  const std::string dir = TmpDir() + "/strings_out";
  const Outcome r = Tfrun("testdata/graphs/strings.yaml --out " + dir + " --fetch d");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string npy = Slurp(dir + "/d.npy");
  // NumPy's S dtype at the longest element's width (6 bytes), NUL-padded.
  EXPECT_NE(npy.find("'descr': '|S6'"), std::string::npos) << npy.substr(0, 80);
  EXPECT_NE(npy.find("'shape': (2, 2)"), std::string::npos);
  EXPECT_EQ(npy.substr(npy.size() - 24), std::string("a\0\0\0\0\0h\xc3\xa9llox'y\0\0\0q\"\0\0\0\0", 24));
}

// --expect: the run's output as usual, exit 1 and a unified diff on a
// mismatch, numbers within --rtol.
TEST(CliTest, ExpectComparesStandardOutput) {
  const std::string good = TmpDir() + "/matmul.good", bad = TmpDir() + "/matmul.bad", close = TmpDir() + "/matmul.close";
  std::ofstream(good) << "[[22. 28.]\n [49. 64.]]\n";
  std::ofstream(bad) << "[[22. 28.]\n [49. 65.]]\n";
  std::ofstream(close) << "[[22.000002 28.      ]\n [49.       64.      ]]\n";
  Outcome r = Tfrun("graphs/matmul.yaml --expect " + good);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[[22. 28.]\n [49. 64.]]\n");
  r = Tfrun("graphs/matmul.yaml --expect " + bad);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "[[22. 28.]\n [49. 64.]]\n");
  EXPECT_EQ(r.err, "--- " + bad + "\n+++ standard output\n@@ -1,2 +1,2 @@\n [[22. 28.]\n- [49. 65.]]\n+ [49. 64.]]\n" +
                       "tfrun: error: standard output differs from " + bad + "\n");
  r = Tfrun("graphs/matmul.yaml --expect " + close);
  EXPECT_EQ(r.exit_code, 1);
  r = Tfrun("graphs/matmul.yaml --rtol 1e-5 --expect " + close);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Tfrun("graphs/matmul.yaml --expect " + TmpDir() + "/no_such_file");
  EXPECT_EQ(r.exit_code, 2);
  // Read first and bounded: a folder, or a file that never ends, is bad
  // usage before anything runs (a folder was a mismatch, exit 1; /dev/zero
  // was read until memory ran out).
  r = Tfrun("graphs/matmul.yaml --expect graphs");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tfrun: error: --expect graphs: is a directory, not a file\n");
  r = Tfrun("graphs/matmul.yaml --max-file-bytes 1000 --expect /dev/zero");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tfrun: error: --expect /dev/zero: the file has more than 1000 bytes, the most tfrun reads of it "
                   "(--max-file-bytes)\n");
}

// `tfrun test` over a folder with a passing and a failing case: both
// verdicts, the summary, exit 1, JUnit XML that Python reads; after
// --update the same command passes and the header lines are kept.
TEST(CliTest, TestCommandRunsAFolderOfCases) {
  const std::string dir = TmpDir() + "/cases";
  ASSERT_EQ(RunCommand("rm -rf " + dir + " && mkdir -p " + dir + "/sub && cp graphs/matmul.yaml " + dir +
                       "/ok.yaml && cp graphs/matmul.yaml " + dir + "/sub/bad.yaml && cp graphs/matmul.yaml " + dir +
                       "/ignored.yaml")
                .exit_code,
            0);
  std::ofstream(dir + "/ok.expected") << "[[22. 28.]\n [49. 64.]]\n";
  std::ofstream(dir + "/sub/bad.expected") << "# args: --log-placement\n[[22. 28.]\n [49. 64.]]\n";
  const std::string junit = TmpDir() + "/cases.xml";
  Outcome r = RunCommand("cli/tfrun test " + dir + " -j 2 --junit " + junit);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), "PASS " + dir + "/ok\n");
  EXPECT_NE(r.out.find("FAIL " + dir + "/sub/bad\n--- " + dir + "/sub/bad.expected\n+++ standard output\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("+Device mapping: no known devices.\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 19), "1 passed, 1 failed\n");
  const Outcome xml = RunCommand(
      "python3 -c \"import xml.etree.ElementTree as ET, sys; r = ET.parse(sys.argv[1]).getroot(); "
      "c = list(r.iter('testcase')); print(len(c), sum(x.find('failure') is not None for x in c), "
      "r.find('testsuite').get('tests'), r.find('testsuite').get('failures'))\" " +
      junit);
  EXPECT_EQ(xml.out, "2 1 2 1\n") << xml.err;

  r = RunCommand("cli/tfrun test " + dir + " --update");
  EXPECT_EQ(r.exit_code, 0);  // the failing case is UPDATED (robustness_test.cc)
  EXPECT_EQ(Slurp(dir + "/ok.expected"), "[[22. 28.]\n [49. 64.]]\n");
  EXPECT_EQ(Slurp(dir + "/sub/bad.expected").rfind("# args: --log-placement\nDevice mapping: no known devices.\n", 0), 0u);
  r = RunCommand("cli/tfrun test " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "PASS " + dir + "/ok\nPASS " + dir + "/sub/bad\n2 passed, 0 failed\n");

  // A case that must fail: its exit code and standard error.
  std::ofstream(dir + "/sub/bad.expected") << "# args: --compat bogus\n# exit: 2\n";
  std::ofstream(dir + "/sub/bad.expected-stderr") << "wrong\n";
  r = RunCommand("cli/tfrun test " + dir + "/sub/bad.yaml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("-wrong\n+"), std::string::npos) << r.out;
  EXPECT_EQ(RunCommand("cli/tfrun test " + dir + "/no_such_folder").exit_code, 2);
  // The verdicts have standard output: the XML needs a file (exit 2, nothing run).
  r = RunCommand("cli/tfrun test " + dir + " --junit -");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "tfrun: error: --junit -: standard output cannot take this output; give a path\n");
}

TEST(CliTest, OutWritesNpyFilesPerFetch) {
  const std::string dir = TmpDir() + "/out1";
  Outcome o = Tfrun("graphs/multi_tower.yaml --out " + dir + " --fetch AddN --fetch MatMul_1");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  StatusOr<Tensor> sum = ReadNpy(dir + "/AddN.npy");
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->shape(), (Shape{2, 2}));
  EXPECT_EQ(sum->data<float>()[3], 128.0f);
  EXPECT_TRUE(Exists(dir + "/MatMul_1.npy"));
  EXPECT_FALSE(Exists(dir + "/AddN.npy.tmp"));
}

TEST(CliTest, OutNamesEscapeSlashes) {
  const std::string graph = TmpDir() + "/scoped.yaml";
  std::ofstream(graph) << "nodes:\n  - name_scope: s\n    nodes: [{name: c, op: Const, dtype: bfloat16, value: [1.5]}]\n";
  const std::string dir = TmpDir() + "/out2";
  Outcome o = Tfrun(graph + " --out " + dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  StatusOr<Tensor> t = ReadNpy(dir + "/s%2Fc.npy");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->dtype(), DType::kFloat32);  // bfloat16 widened for NumPy
  EXPECT_EQ(t->data<float>()[0], 1.5f);
}

// A SavedModel signature's variables come from variables/: a data shard
// cut short is RestoreV2's error (exit 4), an index gone is one line that
// says what the function reads (exit 2); neither runs the call.
TEST(CliTest, ADamagedSavedModelBundleIsACleanError) {
  const std::string dir = TmpDir() + "/sm_module_damaged";
  std::filesystem::remove_all(dir);
  std::filesystem::copy("graphs/tf/sm_module", dir, std::filesystem::copy_options::recursive);
  const std::string args = " --signature serving_default --feed x=[[1.0,2.0]]";
  ASSERT_EQ(Tfrun(dir + args).exit_code, 0);
  const std::string data = dir + "/variables/variables.data-00000-of-00001";
  std::filesystem::resize_file(data, std::filesystem::file_size(data) / 2);
  Outcome cut = Tfrun(dir + args);
  EXPECT_EQ(cut.exit_code, 4) << cut.err;
  EXPECT_NE(cut.err.find("/variables/variables: "), std::string::npos) << cut.err;  // which bundle
  EXPECT_NE(cut.err.find("OutOfRangeError: Read less bytes than requested"), std::string::npos) << cut.err;
  EXPECT_EQ(cut.out, "");
  std::filesystem::remove(dir + "/variables/variables.index");
  Outcome gone = Tfrun(dir + args);
  EXPECT_EQ(gone.exit_code, 2) << gone.err;
  EXPECT_NE(gone.err.find("reads variables, and the SavedModel's folder has no variables/variables.index"),
            std::string::npos)
      << gone.err;
}

TEST(CliTest, FailedRunWritesNoOutputFiles) {
  const std::string dir = TmpDir() + "/out3";
  Outcome o = Tfrun("graphs/matmul_gpu2.yaml --out " + dir);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_FALSE(Exists(dir + "/MatMul.npy"));
}

TEST(CliTest, JsonReportsResultsAndErrors) {
  const std::string path = TmpDir() + "/report.json";
  Outcome o = Tfrun("graphs/matmul.yaml --json " + path);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::string json = Slurp(path);
  EXPECT_NE(json.find("\"results\":[{\"name\":\"MatMul\",\"dtype\":\"float32\",\"shape\":[2,2]"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"values\":[22,28,49,64]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"exit_code\":0"), std::string::npos);

  Outcome to_stdout = Tfrun("graphs/matmul_gpu2.yaml --json -");
  EXPECT_EQ(to_stdout.exit_code, 3);
  EXPECT_EQ(to_stdout.out.rfind("{", 0), 0u) << to_stdout.out;  // only the JSON
  EXPECT_NE(to_stdout.out.find("\"exit_code\":3"), std::string::npos);
  EXPECT_NE(to_stdout.out.find("InvalidArgumentError"), std::string::npos);
}

// --compat eager lists the ops it executes, up to a hard placement failure.
TEST(CliTest, JsonListsWhatEagerExecutes) {
  Outcome o = Tfrun("graphs/tf2_guide_matmul.yaml --compat eager --json -");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"executed\":[{\"op\":\"_EagerConst\",\"device\":\"/job:localhost/replica:0/task:0/"
                       "device:CPU:0\",\"node\":\"a\"},"),
            std::string::npos)
      << o.out;
  Outcome failed = Tfrun("graphs/matmul_gpu2.yaml --compat eager --no-soft-placement --json -");
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_NE(failed.out.find("\"executed\":[]"), std::string::npos) << failed.out;
}

// Edges that cross devices are copied (Send/Recv) and each device reports
// its peak memory; simulated GPUs account memory as real ones do.
TEST(CliTest, JsonReportsCopiesAndPeakMemoryPerDevice) {
  Outcome o = Tfrun("graphs/multi_tower.yaml --devices testdata/topologies/k20m_x4.yaml --json -");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("{\"from_node\":\"MatMul\",\"to_node\":\"AddN\",\"from\":\"GPU_2_bfc\",\"to\":\"cpu\","
                       "\"bytes\":16}"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\"from\":\"GPU_3_bfc\""), std::string::npos);
  // GPU:2 held its two constants (24 bytes each) and the 16-byte product.
  EXPECT_NE(o.out.find("device:GPU:2\",\"type\":\"GPU\""), std::string::npos);
  EXPECT_NE(o.out.find("\"memory_limit_bytes\":4448059392,\"allow_growth\":false,\"reserved_bytes\":4448059392,"
                       "\"peak_bytes\":64"),
            std::string::npos)
      << o.out;
}

TEST(CliTest, BadNpyInputsAreCleanErrors) {
  for (const char* file : {"truncated.npy", "bad_magic.npy", "complex.npy", "missing.npy"}) {
    const std::string graph = TmpDir() + "/npy_" + file + ".yaml";
    // Paths are relative to the graph file: point at testdata by absolute path.
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
    std::ofstream(graph) << "nodes:\n  - {name: x, op: Const, npy: " << cwd << "/testdata/npy/" << file << "}\n";
    Outcome o = Tfrun(graph);
    EXPECT_EQ(o.exit_code, 2) << file << ": " << o.err;
    EXPECT_NE(o.err.find(":2:"), std::string::npos) << o.err;  // names the line
    EXPECT_NE(o.err.find("node 'x'"), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "");
  }
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  const std::string graph = TmpDir() + "/npy_dtype.yaml";
  std::ofstream(graph) << "nodes:\n  - {name: x, op: Const, dtype: float32, npy: " << cwd << "/testdata/npy/int64.npy}\n";
  Outcome o = Tfrun(graph);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("holds int64 but dtype is float32"), std::string::npos) << o.err;
}

TEST(CliTest, NpyDtypesRoundTrip) {
  for (const char* file : {"int64.npy", "bool.npy", "half.npy"}) {
    StatusOr<Tensor> t = ReadNpy(std::string("testdata/npy/") + file);
    ASSERT_TRUE(t.ok()) << t.status().message();
    const std::string copy = TmpDir() + "/copy_" + file;
    ASSERT_TRUE(WriteNpy(copy, *t).ok());
    EXPECT_EQ(Slurp(copy), Slurp(std::string("testdata/npy/") + file)) << file;  // byte-identical to np.save
  }
}

// Inputs too big or too strange to commit: made here, each must give one
// line and exit 2, never a hang or a crash.
TEST(CliTest, HugeAndFifoGraphFiles) {
  const std::string huge = TmpDir() + "/huge.yaml";
  {
    std::ofstream out(huge);
    out << "nodes:\n";
    const std::string line = "  - {op: Const, value: 1.0}   # padding padding padding padding padding\n";
    for (size_t written = 0; written < (100u << 20); written += line.size()) out << line;
  }
  Outcome big = Tfrun(huge);
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("over the 67108864-byte limit for graph files (--max-file-bytes)"), std::string::npos)
      << big.err;
  std::remove(huge.c_str());

  // A FIFO is read as it comes (as `cat` reads it), within the same limit.
  const std::string fifo = TmpDir() + "/graph.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Outcome pipe = RunCommand("(cat graphs/matmul.yaml > " + fifo + " &); cli/tfrun " + fifo);
  EXPECT_EQ(pipe.exit_code, 0) << pipe.err;
  EXPECT_EQ(pipe.out, "[[22. 28.]\n [49. 64.]]\n");
  Outcome flood = RunCommand("(head -c 200000 /dev/zero | tr '\\0' a > " + fifo + " &); cli/tfrun " + fifo +
                             " --max-file-bytes 1000");
  EXPECT_EQ(flood.exit_code, 2);
  EXPECT_EQ(flood.err, "tfrun: error: " + fifo + ": more than the 1000-byte limit for graph files (--max-file-bytes)\n");
}

// The graph from standard input: "-", /dev/stdin, a process substitution;
// locations say <stdin>.
TEST(CliTest, GraphFromStandardInput) {
  Outcome r = RunCommand("cat graphs/matmul.yaml | cli/tfrun - --log-placement");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string expected;
  ASSERT_TRUE(ReadWholeFile("graphs/matmul.tf2.expected", &expected));
  EXPECT_EQ(r.out, expected.substr(expected.find('\n') + 1));  // after its # args: line
  r = RunCommand("cli/tfrun /dev/stdin < graphs/addn.yaml");
  EXPECT_EQ(r.out, "[2. 4. 6.]\n") << r.err;
  r = RunCommand("printf 'nodes:\\n  - {op: Bogus}\\n' | cli/tfrun -");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tfrun: error: <stdin>:2:10: unknown op 'Bogus'"), std::string::npos) << r.err;
  // A GraphDef on standard input or a pipe, text or binary, is one (it was
  // read as YAML): its bytes decide, as for a file of no known extension.
  const std::string placed = "c: (AddN): /job:localhost/replica:0/task:0/device:CPU:0\n";
  r = RunCommand("cat graphs/tf/blog_addn.pbtxt | cli/tfrun - --place-only --log-placement");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(placed), std::string::npos) << r.out;
  r = RunCommand("cli/tfrun /dev/stdin --place-only --log-placement --write-graph " + TmpDir() +
                 "/addn.pb < graphs/tf/blog_addn.pbtxt && cat " + TmpDir() + "/addn.pb | cli/tfrun - --place-only "
                 "--log-placement");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(placed), std::string::npos) << r.out;
  r = RunCommand("printf 'node {\\n  name: \"a\"\\n  op: \"Bogus\"\\n}\\n' | cli/tfrun -");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tfrun: error: <stdin>:2:3: node 'a': Op type not registered 'Bogus'"), std::string::npos)
      << r.err;
}

// Outputs: special files are written in place, symlinks followed, "-" is
// standard output where it can be, and every destination is checked before
// anything runs; write errors are exit 4 and name what failed.
// No output may be an input of the run: the graph file (also through a
// symlink or a wrapper's graph_def), a --feed file, --expect's file. Each
// was overwritten silently.
TEST(CliTest, AnOutputThatIsAnInputIsRefused) {
  const std::string dir = TmpDir() + "/inputs";
  ASSERT_EQ(RunCommand("rm -rf " + dir + " && mkdir -p " + dir + " && cp graphs/matmul.yaml graphs/tf/blog_addn.pbtxt " +
                       dir + " && ln -s matmul.yaml " + dir + "/link.yaml").exit_code,
            0);
  std::ofstream(dir + "/wrapper.yaml") << "graph_def: blog_addn.pbtxt\n";
  const std::string graph = Slurp(dir + "/matmul.yaml");
  for (const char* flag : {"--json", "--dot", "--write-graph", "--write-graph-placed", "--trace"}) {
    const Outcome o = Tfrun(dir + "/matmul.yaml " + flag + " " + dir + "/link.yaml");
    EXPECT_EQ(o.exit_code, 2) << flag;
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(o.err, fmt::format("tfrun: error: {} {}/link.yaml: is the graph file of this run ({}/matmul.yaml); tfrun "
                                 "does not write over its inputs\n",
                                 flag, dir, dir));
  }
  EXPECT_EQ(Slurp(dir + "/matmul.yaml"), graph);
  const std::string addn = Slurp(dir + "/blog_addn.pbtxt");
  const Outcome wrapped = Tfrun(dir + "/wrapper.yaml --write-graph " + dir + "/blog_addn.pbtxt");
  EXPECT_EQ(wrapped.exit_code, 2);
  EXPECT_NE(wrapped.err.find("is the graph file it names of this run"), std::string::npos) << wrapped.err;
  EXPECT_EQ(Slurp(dir + "/blog_addn.pbtxt"), addn);
  std::ofstream(dir + "/expected.txt") << "[[22. 28.]\n [49. 64.]]\n";
  EXPECT_EQ(Tfrun(dir + "/matmul.yaml --expect " + dir + "/expected.txt --json " + dir + "/expected.txt").exit_code, 2);
  // --out's file for a fetch that is a --feed file.
  ASSERT_EQ(RunCommand("cp graphs/data/towers_batch.npy " + dir + "/x.npy").exit_code, 0);
  const Outcome fed = Tfrun("graphs/split_towers.yaml --devices testdata/topologies/k20m_x4.yaml --feed x=@" + dir +
                            "/x.npy --fetch x --out " + dir);
  EXPECT_EQ(fed.exit_code, 2);
  EXPECT_NE(fed.err.find("the file for 'x' would be " + dir + "/x.npy, an input of this run"), std::string::npos)
      << fed.err;
}

TEST(CliTest, OutputFilesAreWrittenSafely) {
  const std::string dir = TmpDir() + "/outputs";
  ASSERT_EQ(RunCommand("rm -rf " + dir + " && mkdir -p " + dir).exit_code, 0);
  struct stat st;
  if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode)) {
    Outcome full = Tfrun("graphs/matmul.yaml --json /dev/full");
    EXPECT_EQ(full.exit_code, 4);
    EXPECT_EQ(full.err, "tfrun: error: cannot write /dev/full: No space left on device\n");
    ASSERT_EQ(stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full was replaced";
    Outcome out_full = RunCommand("cli/tfrun graphs/matmul.yaml > /dev/full");
    EXPECT_EQ(out_full.exit_code, 4);
    EXPECT_EQ(out_full.err, "tfrun: error: cannot write standard output: No space left on device\n");
  }
  Outcome closed = RunCommand("cli/tfrun graphs/matmul.yaml >&-");
  EXPECT_EQ(closed.exit_code, 4);
  EXPECT_EQ(closed.err, "tfrun: error: cannot write standard output: Bad file descriptor\n");

  // A symlink: its target gets the report, the link stays a link.
  std::ofstream(dir + "/target.json") << "old";
  ASSERT_EQ(symlink("target.json", (dir + "/link.json").c_str()), 0);
  Outcome linked = Tfrun("graphs/matmul.yaml --json " + dir + "/link.json");
  EXPECT_EQ(linked.exit_code, 0) << linked.err;
  ASSERT_EQ(lstat((dir + "/link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Slurp(dir + "/target.json").substr(0, 11), "{\"schema\":1");
  // A FIFO: written in place, its reader gets the report.
  const std::string fifo = dir + "/report.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Outcome piped = RunCommand("(cat " + fifo + " > " + dir + "/from_fifo &); cli/tfrun graphs/matmul.yaml --json " +
                             fifo + "; sleep 0.2");
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(Slurp(dir + "/from_fifo").substr(0, 11), "{\"schema\":1");
  // "-": standard output for --dot and --json, refused for --out.
  Outcome dot = Tfrun("graphs/matmul.yaml --dot -");
  EXPECT_EQ(dot.out.substr(0, 15), "digraph tfrun {");
  EXPECT_EQ(Tfrun("graphs/matmul.yaml --out -").exit_code, 2);
  EXPECT_FALSE(Exists("-"));
  // Checked before anything runs: exit 2, no output.
  Outcome bad = Tfrun("graphs/matmul.yaml --json " + dir + "/no/such/folder/r.json");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "");
  Outcome is_dir = Tfrun("graphs/matmul.yaml --json " + dir);
  EXPECT_EQ(is_dir.exit_code, 2);
  EXPECT_EQ(is_dir.out, "");
}

// Every report validates against docs/json-report.schema.json: the example
// and test graphs, with and without simulated GPUs and --benchmark, every
// bad input, and `tfrun devices --json`. Errors are objects; non-finite
// floats are null with their spelling in "non_finite"; int64 are strings.
TEST(CliTest, EveryJsonReportFollowsTheSchema) {
  if (RunCommand("python3 -c 'import jsonschema'").exit_code != 0) {
    if (std::getenv("TFRUN_REQUIRE_SETUP") != nullptr) FAIL() << "python3-jsonschema is not installed";
    GTEST_SKIP() << "python3-jsonschema is not installed (tools/setup.sh installs it)";
  }
  const std::string dir = TmpDir() + "/reports";
  const Outcome made = RunCommand(
      "rm -rf " + dir + " && mkdir -p " + dir + " && i=0 && for g in graphs/*.yaml testdata/graphs/*.yaml "
      "testdata/bad/*.yaml; do i=$((i+1)); cli/tfrun $g --json " + dir + "/r$i.json >/dev/null 2>&1; "
      "cli/tfrun $g --json " + dir + "/s$i.json --soft-placement --devices testdata/topologies/k20m_x4.yaml "
      "--benchmark 1 --warmup 0 >/dev/null 2>&1; done; cli/tfrun graphs/split_towers.yaml --feed "
      "x=@graphs/data/towers_batch.npy --devices testdata/topologies/k20m_x4.yaml --json " + dir + "/f.json "
      "--fetch split:1 --fetch concat >/dev/null 2>&1; cli/tfrun graphs/variable_int32_gpu.yaml --explain v "
      "--explain Identity --devices testdata/topologies/k20m_x4.yaml --json " + dir + "/e0.json >/dev/null 2>&1; "
      "TF_XLA_FLAGS=--tf_xla_enable_xla_devices cli/tfrun graphs/tf/adam_xla.pbtxt --device-count CPU=3 --explain w "
      "--json " + dir + "/e1.json >/dev/null 2>&1; cli/tfrun devices --json > " + dir + "/d0.json && "
      "cli/tfrun devices --json --devices testdata/topologies/k20m_x4.yaml > " + dir + "/d1.json");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const Outcome valid =
      RunCommand("python3 tools/validate_reports.py docs/json-report.schema.json " + dir + "/*.json");
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
  EXPECT_EQ(valid.out.find(" 0 valid"), std::string::npos) << valid.out;

  const Outcome special = RunCommand(
      "printf 'nodes:\\n  - {name: f, op: Const, value: [1.0, .nan, -.inf]}\\n  - {name: i, op: Const, dtype: "
      "int64, value: [9007199254740993]}\\n' | cli/tfrun - --json -");
  EXPECT_NE(special.out.find("\"values\":[1,null,null],\"non_finite\":{\"1\":\"NaN\",\"2\":\"-Infinity\"}"),
            std::string::npos)
      << special.out;
  EXPECT_NE(special.out.find("\"values\":[\"9007199254740993\"]"), std::string::npos) << special.out;
  const Outcome failed = Tfrun("graphs/matmul_gpu2.yaml --json -");
  EXPECT_NE(failed.out.find("\"error\":{\"kind\":\"placement\",\"exit_code\":3,\"message\":"), std::string::npos)
      << failed.out;
  EXPECT_NE(failed.out.find("\"file\":\"graphs/matmul_gpu2.yaml\",\"line\":13,\"column\":9,\"node\":\"MatMul\"}"),
            std::string::npos)
      << failed.out;
  // A phase that did not finish is absent, not 0.
  EXPECT_NE(failed.out.find("\"timings_ms\":{\"load\":"), std::string::npos);
  EXPECT_EQ(failed.out.find("\"place\":"), std::string::npos) << failed.out;
  // Bytes that are not UTF-8 (a Latin-1 file name) or control characters
  // in a path or a message are escaped: the report is still JSON.
  const Outcome latin1 = RunCommand("cli/tfrun $(printf 'caf\\351\\033.yaml') --json - | python3 -c "
                                    "'import json, sys; print(json.load(sys.stdin)[\"error\"][\"message\"])'");
  EXPECT_EQ(latin1.exit_code, 0) << latin1.err;
  EXPECT_EQ(latin1.out, "caf\u00e9\u001b.yaml: cannot read graph file: No such file or directory\n");
  // On standard error the same bytes are escaped: no escape sequence
  // reaches the terminal.
  EXPECT_EQ(RunCommand("cli/tfrun $(printf 'caf\\351\\033.yaml')").err,
            "tfrun: error: caf\\xe9\\x1b.yaml: cannot read graph file: No such file or directory\n");
}

// --feed: the fed tensors in the report, outputs by their tensor names in
// the report and as --out files, and one feed for every benchmark run.
TEST(CliTest, FeedsReachTheReportTheOutputsAndTheBenchmark) {
  const std::string dir = TmpDir() + "/fed";
  const std::string run = "graphs/split_towers.yaml --feed x=@graphs/data/towers_batch.npy --devices "
                          "testdata/topologies/k20m_x4.yaml ";
  Outcome o = Tfrun(run + "--fetch split:1 --fetch concat --json - --out " + dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"feeds\":[{\"name\":\"x:0\",\"dtype\":\"float32\",\"shape\":[8,4]}]"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\"results\":[{\"name\":\"split:1\",\"dtype\":\"float32\",\"shape\":[2,4]"),
            std::string::npos)
      << o.out;
  StatusOr<Tensor> slice = ReadNpy(dir + "/split:1.npy");
  ASSERT_TRUE(slice.ok()) << slice.status().message();
  EXPECT_EQ(slice->data<float>()[0], -1.0f);  // rows 2 and 3 of the batch
  EXPECT_TRUE(Exists(dir + "/concat.npy"));
  Outcome bench = Tfrun(run + "--benchmark 3 --warmup 1");
  EXPECT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_NE(bench.err.find("tower_3/out"), std::string::npos) << bench.err;
  // Fed values too big for the tensor budget are refused like constants.
  Outcome big = Tfrun("testdata/graphs/placeholder.yaml --max-tensor-bytes 8 --feed 'x=[[1, 2, 3]]'");
  EXPECT_EQ(big.exit_code, 2) << big.err;
}

// --benchmark's report: a header, the spread, the percentiles the runs
// support, throughput; --benchmark-duration and --export-times.
TEST(CliTest, BenchmarkReportsStatisticsAndExportsTimes) {
  Outcome o = Tfrun("graphs/matmul.yaml --benchmark 20 --warmup 1 --json -");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* part : {"benchmark: tfrun ", "20 runs after 1 warm-up run\n", "  host:    ", "intra-op thread",
                           "  devices: /job:localhost/replica:0/task:0/device:CPU:0\n", "mean ", "stddev ", "(cv ",
                           "p95 ", "p99 needs 100 runs (had 20)", "  throughput: ", " runs/s, ", " GFLOP/s"}) {
    EXPECT_NE(o.err.find(part), std::string::npos) << part << "\n" << o.err;
  }
  EXPECT_NE(o.out.find("\"p99\":null"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"gflops\":null"), std::string::npos) << o.out;  // the Consts
  EXPECT_NE(o.out.find("\"count\":20,"), std::string::npos) << o.out;

  const std::string json = TmpDir() + "/times.json", csv = TmpDir() + "/times.csv";
  Outcome timed = Tfrun("graphs/matmul.yaml --benchmark 2 --benchmark-duration 0.2 --warmup 0 --export-times " + json);
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  const Outcome runs = RunCommand("python3 -c \"import json; d = json.load(open('" + json +
                                  "')); r = d['runs_ms']; print(len(r) > 2, sum(r) > 0, sorted(d['nodes']), "
                                  "all(len(n['ms']) == len(r) for n in d['nodes'].values()))\"");
  EXPECT_EQ(runs.out, "True True ['MatMul', 'a', 'b'] True\n") << runs.err;
  ASSERT_EQ(Tfrun("graphs/matmul.yaml --benchmark 3 --warmup 0 --export-times " + csv).exit_code, 0);
  const std::string table = Slurp(csv);
  EXPECT_EQ(table.rfind("run,wall_ms,a,b,MatMul\n0,", 0), 0u) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4);
  // Standard output cannot take the times: it carries the results.
  EXPECT_EQ(Tfrun("graphs/matmul.yaml --benchmark 2 --export-times -").exit_code, 2);
}

// --trace: Chrome Trace Event Format that Perfetto and chrome://tracing
// read (tools/check_trace.py checks the format's fields and the layout),
// every node once per run, and tools/plot_trace.py draws it.
TEST(CliTest, TraceIsATimelineOfEveryRun) {
  const std::string dir = TmpDir() + "/trace";
  ASSERT_EQ(RunCommand("mkdir -p " + dir).exit_code, 0);
  const std::string towers = "graphs/multi_tower.yaml --devices testdata/topologies/k20m_x4.yaml ";
  const std::string nodes = " --nodes Const,Const_1,MatMul,Const_2,Const_3,MatMul_1,AddN";
  Outcome o = Tfrun(towers + "--trace " + dir + "/one.json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  Outcome checked = RunCommand("python3 tools/check_trace.py " + dir + "/one.json --runs 1" + nodes);
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  const std::string one = Slurp(dir + "/one.json");
  for (const char* part : {"\"name\":\"/job:localhost/replica:0/task:0/device:GPU:3 Compute\"",
                           "\"name\":\"Allocators\"", "\"cat\":\"Phase\",\"name\":\"placement\"",
                           "\"name\":\"AddN\",\"op\":\"AddN\",\"input0\":\"MatMul\",\"input1\":\"MatMul_1\"",
                           "\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"MatMul_1\"", "\"GPU_2_bfc\":"}) {
    EXPECT_NE(one.find(part), std::string::npos) << part;
  }
  // Two flows: each tower's MatMul to the CPU's AddN.
  EXPECT_EQ(RunCommand("grep -c '\"ph\":\"t\"' " + dir + "/one.json").out, "2\n");
  // Under --benchmark the last timed run; --trace-all the first and every timed run.
  ASSERT_EQ(Tfrun(towers + "--benchmark 4 --warmup 1 --trace " + dir + "/last.json").exit_code, 0);
  EXPECT_EQ(RunCommand("python3 tools/check_trace.py " + dir + "/last.json --runs 1" + nodes).exit_code, 0);
  ASSERT_EQ(Tfrun(towers + "--benchmark 4 --warmup 1 --trace-all --trace " + dir + "/all.json").exit_code, 0);
  checked = RunCommand("python3 tools/check_trace.py " + dir + "/all.json --runs 5" + nodes);
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  // A fed graph: the placeholder does not run, so it has no event.
  ASSERT_EQ(Tfrun("graphs/split_towers.yaml --feed x=@graphs/data/towers_batch.npy --devices "
                  "testdata/topologies/k20m_x4.yaml --trace " + dir + "/fed.json").exit_code,
            0);
  checked = RunCommand("python3 tools/check_trace.py " + dir + "/fed.json --runs 1 --nodes split,tower_3/out,concat");
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  EXPECT_EQ(Slurp(dir + "/fed.json").find("\"op\":\"Placeholder\""), std::string::npos);
  // The checker fails what it should: overlapping ops, a flow without its end.
  std::ofstream(dir + "/bad.json") << R"({"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"/job:localhost/replica:0/task:0/device:CPU:0 Compute"}},
{"ph":"X","cat":"Op","name":"A","pid":1,"tid":0,"ts":0,"dur":5,"args":{"name":"a","op":"A"}},
{"ph":"X","cat":"Op","name":"B","pid":1,"tid":0,"ts":3,"dur":5,"args":{"name":"b","op":"B"}},
{"ph":"s","cat":"DataFlow","name":"a","pid":1,"tid":0,"ts":5,"id":0}]})";
  checked = RunCommand("python3 tools/check_trace.py " + dir + "/bad.json");
  EXPECT_EQ(checked.exit_code, 1);
  EXPECT_NE(checked.out.find("b starts at 3 before a ends at 5"), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find("flow 0: ['s'] only"), std::string::npos) << checked.out;
  EXPECT_EQ(Tfrun("graphs/matmul.yaml --trace -").exit_code, 2);  // standard output carries the results

  if (RunCommand("python3 -c 'import matplotlib'").exit_code != 0) {
    if (std::getenv("TFRUN_REQUIRE_SETUP") != nullptr) FAIL() << "python3-matplotlib is not installed";
    GTEST_SKIP() << "python3-matplotlib is not installed (tools/setup.sh installs it)";
  }
  const Outcome plot = RunCommand("python3 tools/plot_trace.py " + dir + "/all.json -o " + dir + "/all.png");
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  EXPECT_EQ(Slurp(dir + "/all.png").substr(0, 8), "\x89PNG\r\n\x1a\n");
}

// On a terminal tfrun colors its level names, unless NO_COLOR is set.
TEST(CliTest, NoColorTurnsColorsOff) {
  if (RunCommand("command -v script").exit_code != 0) GTEST_SKIP() << "no script(1) to make a terminal";
  // spdlog colors a terminal whose TERM it knows; Bazel's test environment has none.
  const std::string cmd = "TERM=xterm script -qc 'cli/tfrun graphs/matmul_gpu2.yaml' /dev/null";
  EXPECT_NE(RunCommand(cmd).out.find("\x1b["), std::string::npos);
  EXPECT_EQ(RunCommand("NO_COLOR=1 " + cmd).out.find("\x1b["), std::string::npos);
}

// A process substitution (/dev/fd/N) takes the report in place; the report
// names the version.
TEST(CliTest, ProcessSubstitutionTakesTheReport) {
  const Outcome r = RunCommand(
      "bash -c 'cli/tfrun graphs/matmul.yaml --json >(grep -o \"\\\"version\\\":\\\"0.15.0\" > " + TmpDir() +
      "/ps.txt) > /dev/null; sleep 0.3'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Slurp(TmpDir() + "/ps.txt"), "\"version\":\"0.15.0\n");
}

// Someone who clones tfrun has every document README points to.
TEST(CliTest, ReadmeLinksOnlyInsideTheRepository) {
  std::string readme;
  ASSERT_TRUE(ReadWholeFile("README.md", &readme));
  // A link or a quoted path that climbs out ("/job:.../device" is no path).
  for (const char* outside : {"](../", "`../", " ../shared"}) {
    EXPECT_EQ(readme.find(outside), std::string::npos) << "README points outside the repository: " << outside;
  }
  for (const char* doc : {"docs/graph-format.md", "docs/topologies.md", "docs/json-report.md"}) {
    EXPECT_NE(readme.find(doc), std::string::npos) << doc;
  }
}

// The printer-case generator refuses to run without ml_dtypes, whose
// bfloat16 cases share its random stream, instead of writing other cases.
TEST(CliTest, PrinterCaseGeneratorNeedsMlDtypes) {
  if (RunCommand("python3 -c 'import numpy'").exit_code != 0) GTEST_SKIP() << "no NumPy here";
  if (RunCommand("python3 -c 'import ml_dtypes'").exit_code == 0) GTEST_SKIP() << "ml_dtypes is installed";
  const Outcome r = RunCommand("python3 tools/gen_print_cases.py");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gen_print_cases.py: ml_dtypes is required", 0), 0u) << r.err;
}

// `tfrun ops` is TensorFlow's own table as a user reads it, with what
// tfrun runs; --json has every OpDef and every KernelDef of the five
// device types, as TensorFlow 2.21's CUDA wheel registers them (the counts
// its get_all_registered_kernels() gives once the XLA devices exist).
TEST(CliTest, OpsListsTensorFlowsTableAndWhatTfrunRuns) {
  const Outcome r = Tfrun("ops MatMul NoOp");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("MatMul  [tfrun runs: CPU float32 float64 float16 bfloat16 int32 int64; GPU float32 float64 "
                        "float16 bfloat16]\n"
                        "  CPU      T: int64, int32, int16, float64, float32, bfloat16, float16, complex128, complex64\n"
                        "  GPU      T: float64, float32, bfloat16, float16, complex128, complex64\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("NoOp  [tfrun runs: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  DEFAULT  any attrs\n"), std::string::npos) << r.out;
  const Outcome typo = Tfrun("ops Matmul");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err, "tfrun: error: tfrun ops: TensorFlow 2.21.0 has no op 'Matmul' (did you mean 'MatMul'?)\n");
  const Outcome json = RunCommand(
      "cli/tfrun ops --json | python3 -c \"import json, sys, collections; d = json.load(sys.stdin); "
      "c = collections.Counter(k['device_type'] for o in d['ops'] for k in o['kernels']); "
      "m = [o for o in d['ops'] if o['op'] == 'MatMul'][0]; "
      "print(d['tensorflow'], len(d['ops']), sorted(c.items()), m['kernels'][0], m['runs']['GPU'])\"");
  EXPECT_EQ(json.out,
            "2.21.0 1910 [('CPU', 9276), ('DEFAULT', 1176), ('GPU', 5017), ('XLA_CPU', 519), ('XLA_GPU', 519)] "
            "{'device_type': 'CPU', 'constraints': {'T': ['int64']}, 'host_memory': [], 'priority': 0, 'label': ''} "
            "['float32', 'float64', 'float16', 'bfloat16']\n")
      << json.err;
}

// --place-only: the device mapping and the placement log of the whole
// graph (an unused node included), nothing run, nothing printed of results.
TEST(CliTest, PlaceOnlyPlacesTheWholeGraphAndRunsNothing) {
  const Outcome r = RunCommand(
      "printf 'nodes:\\n  - {name: a, op: Const, value: [[1.0]]}\\n  - {name: m, op: MatMul, inputs: [a, a]}\\n"
      "  - {name: unused, op: Cast, inputs: [a], DstT: int32}\\nfetch: [m]\\n' | "
      "cli/tfrun - --place-only --log-placement --devices testdata/topologies/k40c_x1.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Device mapping:\n"
            "/job:localhost/replica:0/task:0/device:GPU:0 -> device: 0, name: Tesla K40c, pci bus id: 0000:05:00.0, "
            "compute capability: 3.5\n"
            "m: (MatMul): /job:localhost/replica:0/task:0/device:GPU:0\n"
            "unused: (Cast): /job:localhost/replica:0/task:0/device:GPU:0\n"
            "a: (Const): /job:localhost/replica:0/task:0/device:GPU:0\n");
  EXPECT_EQ(r.err, "");
  // Placement errors still fail, with TensorFlow's text and exit 3.
  const Outcome bad = RunCommand("printf 'nodes:\\n  - {name: a, op: Const, value: 1.0, device: /gpu:3}\\n' | "
                                 "cli/tfrun - --place-only --devices testdata/topologies/k40c_x1.yaml");
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("Cannot assign a device for operation a"), std::string::npos) << bad.err;
}

// --device-count CPU=N, as ConfigProto.device_count: more CPU devices in
// `tfrun devices` and for placement; GPU=N keeps the first N GPUs.
// --explain: the text after the placement log, the same in --json, also
// when placement fails; an unknown node or eager's op-by-op placement is
// a usage error.
TEST(CliTest, ExplainSaysWhyANodeWentWhereItWent) {
  const Outcome o = Tfrun("graphs/variable_int32_gpu.yaml --devices testdata/topologies/k40c_x1.yaml --quiet "
                          "--log-placement --explain v/read --json -");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("\"explain\":[{\"node\":\"v/read\",\"op\":\"Identity\",\"group\":[{\"node\":\"v\","
                       "\"op\":\"VariableV2\",\"requested\":\"/device:GPU:0\",\"kernels\":[\"CPU\"]}"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("{\"node\":\"v/Assign\",\"with\":\"v\",\"why\":\"ref_edge\",\"input\":0}"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\"stage\":\"soft_relaxed\""), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"rule\":\"first_candidate\",\"decided_by\":\"v\""), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"device\":\"/job:localhost/replica:0/task:0/device:CPU:0\",\"error\":null}]"),
            std::string::npos)
      << o.out;

  const Outcome text = Tfrun("graphs/variable_int32_gpu.yaml --devices testdata/topologies/k40c_x1.yaml --quiet "
                             "--log-placement --explain v/read");
  const size_t log_end = text.out.find("v/initial_value: (Const)");
  const size_t explain = text.out.find("Explain 'v/read' (Identity):\n  Colocation group: 3 nodes\n");
  ASSERT_NE(explain, std::string::npos) << text.out;
  EXPECT_LT(log_end, explain);  // after the placement log, before the result
  EXPECT_EQ(text.out.substr(text.out.size() - 2), "5\n");

  const Outcome failed = Tfrun("graphs/matmul_gpu2.yaml --no-soft-placement --explain MatMul");
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_NE(failed.out.find("  No device fits: the group cannot be placed\n"), std::string::npos) << failed.out;
  EXPECT_NE(failed.out.find("  Placement fails here: "), std::string::npos) << failed.out;

  // A generator whose consumer is a generator placed after it (b takes a
  // control input from c): Heuristic A cannot look at b's device yet.
  const std::string chain = TmpDir() + "/control_chain.pbtxt";
  std::ofstream(chain) << "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
                          "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }\n"
                          "node { name: 'b' op: 'Const' input: '^c' attr { key: 'dtype' value { type: DT_FLOAT } } "
                          "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }\n";
  const Outcome unplaced = Tfrun(chain + " -q --explain c");
  EXPECT_EQ(unplaced.exit_code, 0) << unplaced.err;
  EXPECT_NE(unplaced.out.find("    (Heuristic A did not apply: its consumers were not placed yet)\n"), std::string::npos)
      << unplaced.out;

  const Outcome unknown = Tfrun("graphs/matmul.yaml --explain MatMull");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "tfrun: error: --explain MatMull: graphs/matmul.yaml has no node named 'MatMull' (did you mean "
            "'MatMul'?)\n");
  EXPECT_EQ(unknown.out, "");
  const Outcome eager = Tfrun("graphs/matmul.yaml --compat eager --explain MatMul");
  EXPECT_EQ(eager.exit_code, 2);
  EXPECT_NE(eager.err.find("--explain explains a graph's placement"), std::string::npos) << eager.err;

  // A hard failure is not called soft placement's doing, and the node's
  // kernels are still listed (it said "soft placement ignored" and "has
  // kernels for none").
  const Outcome hard = Tfrun("graphs/tf/colocated_conflict.pbtxt --place-only --device-count CPU=3 --explain c");
  EXPECT_EQ(hard.exit_code, 3);
  EXPECT_NE(hard.out.find("    c (Neg): requests '/device:CPU:2', has kernels for CPU\n      asked to join 'a' (_class), "
                          "which cannot hold, so placement failed: Cannot colocate nodes"),
            std::string::npos)
      << hard.out;
  EXPECT_EQ(hard.out.find("soft placement"), std::string::npos) << hard.out;
}

TEST(CliTest, DeviceCountMakesCpuDevicesAndLimitsGpus) {
  const Outcome listed = Tfrun("devices -q --device-count CPU=3,GPU=1 --devices testdata/topologies/k20m_x4.yaml");
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("  LogicalDevice(name='/device:CPU:2', device_type='CPU')\n"
                            "  LogicalDevice(name='/device:GPU:0', device_type='GPU')"),
            std::string::npos)
      << listed.out;
  EXPECT_NE(listed.out.find("4 Physical GPUs, 1 Logical GPUs\n"), std::string::npos) << listed.out;
  const Outcome bad = Tfrun("devices --device-count CPU=3,TPU=1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--device-count: expected TYPE=N,... with TYPE CPU or GPU"), std::string::npos) << bad.err;
}

// --version: the version, the commit and what CUDA the binary has.
TEST(CliTest, VersionSaysWhatThisBuildIs) {
  const Outcome r = Tfrun("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("tfrun 0.15.0 (git ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nCUDA runtime 13."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncuBLAS: "), std::string::npos) << r.out;
}

// A graph file the user may not read: exit 2 with the system's reason. Root
// reads every file through its capabilities, so as root (as CI runs) tfrun
// runs without the two that override file modes (setpriv); bazel's sandbox
// maps no other user to switch to.
TEST(CliTest, UnreadableGraphFile) {
  const std::string locked = TmpDir() + "/locked.yaml";
  std::ofstream(locked) << "nodes: [{op: Const, value: 1}]\n";
  ASSERT_EQ(chmod(locked.c_str(), 0), 0);
  const std::string command = std::string(getuid() == 0 ? "setpriv --bounding-set=-dac_override,-dac_read_search " : "") +
                              "cli/tfrun " + locked;
  Outcome denied = RunCommand(command);
  EXPECT_EQ(denied.exit_code, 2) << command << "\n" << denied.err;
  EXPECT_EQ(denied.out, "");
  EXPECT_EQ(denied.err, "tfrun: error: " + locked + ": cannot read graph file: Permission denied\n");
}

// A failed run leaves existing outputs as they were.
TEST(CliTest, FailedRunDoesNotClobberExistingOutputs) {
  const std::string dir = TmpDir() + "/keep";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/MatMul.npy") << "previous";
  Outcome o = Tfrun("graphs/matmul_gpu2.yaml --out " + dir);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(Slurp(dir + "/MatMul.npy"), "previous");
}

// The folder's entries, sorted ("" when it does not exist).
std::string Entries(const std::string& dir) {
  return RunCommand("test -d " + dir + " && ls -A " + dir + " | sort | tr '\\n' ' '").out;
}

// x is fed [2,3]; d = x is ready before s = d + y runs and fails on y's shape.
std::string GraphWithALateKernelError() {
  const std::string graph = TmpDir() + "/late_error.yaml";
  std::ofstream(graph) << "nodes:\n"
                          "  - {name: x, op: Placeholder, shape: [null, 3]}\n"
                          "  - {name: y, op: Placeholder, shape: [null]}\n"
                          "  - {name: d, op: Identity, inputs: [x]}\n"
                          "  - {name: s, op: Add, inputs: [d, y]}\n";
  return graph + " --feed 'x=[[1,2,3],[4,5,6]]' --fetch d --fetch s ";
}

// A kernel that fails after other results exist: no --out file, and a
// folder that was there keeps what it held.
TEST(CliTest, AKernelErrorAfterSomeResultsWritesNoOutput) {
  const std::string run = GraphWithALateKernelError() + "--feed 'y=[1,2]' --out ";
  const std::string fresh = TmpDir() + "/late_fresh";
  Outcome o = Tfrun(run + fresh);
  EXPECT_EQ(o.exit_code, 4) << o.err;
  EXPECT_NE(o.err.find("Incompatible shapes: [2,3] vs. [2]"), std::string::npos) << o.err;
  EXPECT_EQ(Entries(fresh), "");
  const std::string kept = TmpDir() + "/late_kept";
  mkdir(kept.c_str(), 0755);
  std::ofstream(kept + "/d.npy") << "previous";
  o = Tfrun(run + kept);
  EXPECT_EQ(o.exit_code, 4) << o.err;
  EXPECT_EQ(Entries(kept), "d.npy ");
  EXPECT_EQ(Slurp(kept + "/d.npy"), "previous");
  // The same run with a y that broadcasts writes both.
  o = Tfrun(GraphWithALateKernelError() + "--feed 'y=[1,2,3]' --out " + fresh);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(Entries(fresh), "d.npy s.npy ");
}

// Results are written together: when the second cannot be written (a folder
// holds its name), the first is not written either, nor left half-way.
TEST(CliTest, AFailedOutputFileWritesNoneOfTheOthers) {
  const std::string dir = TmpDir() + "/half";
  mkdir(dir.c_str(), 0755);
  mkdir((dir + "/s.npy").c_str(), 0755);
  Outcome o = Tfrun(GraphWithALateKernelError() + "--feed 'y=[1,2,3]' --out " + dir);
  EXPECT_EQ(o.exit_code, 4) << o.err;
  EXPECT_EQ(o.err, "tfrun: error: " + dir + "/s.npy: is a directory\n");
  EXPECT_EQ(Entries(dir), "s.npy ");
}

TEST(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Tfrun("").exit_code, 2);
  EXPECT_EQ(Tfrun("graphs/matmul.yaml --compat tf9").exit_code, 2);
  EXPECT_EQ(Tfrun("graphs/matmul.yaml --no-such-flag").exit_code, 2);
  Outcome o = Tfrun("graphs/matmul.yaml --fetch MatMull");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("did you mean 'MatMul'"), std::string::npos) << o.err;
  Outcome dir = Tfrun("graphs");
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_NE(dir.err.find("is a directory without saved_model.pb"), std::string::npos) << dir.err;
  Outcome missing = Tfrun("no/such.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no/such.yaml: cannot read graph file"), std::string::npos);
  // A path option given '' (an unset shell variable) was silently left out.
  for (const char* flag : {"--json", "--dot", "--out", "--trace", "--write-graph", "--write-graph-placed",
                           "--export-times", "--expect", "--devices"}) {
    const Outcome empty = Tfrun(std::string("graphs/matmul.yaml ") + flag + " ''");
    EXPECT_EQ(empty.exit_code, 2) << flag;
    EXPECT_EQ(empty.out, "") << flag;
    EXPECT_EQ(empty.err, std::string("tfrun: error: ") + flag + ": needs a path, not '' (see tfrun --help)\n");
  }
}

// A TensorFlow graph's variables wait for the program's own init, as in a
// Session (a graph file's start initialised); --targets runs it, each
// --targets its own run in order; an unknown target is a usage error.
TEST(CliTest, TargetsRunATensorFlowGraphsInitFirst) {
  Outcome uninitialized = Tfrun("graphs/tf/variables_run.pbtxt --fetch y");
  EXPECT_EQ(uninitialized.exit_code, 4);
  EXPECT_NE(uninitialized.err.find("node 'w/read': FailedPreconditionError: Attempting to use uninitialized value w"),
            std::string::npos)
      << uninitialized.err;
  Outcome init = Tfrun("graphs/tf/variables_run.pbtxt --targets init --fetch y");
  EXPECT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out, "[[3. 3.]\n [7. 7.]]\n");
  // double before init reads w uninitialised (w * 2.0).
  Outcome wrong_order = Tfrun("graphs/tf/variables_run.pbtxt --targets double --targets init --fetch y");
  EXPECT_EQ(wrong_order.exit_code, 4);
  EXPECT_NE(wrong_order.err.find("Attempting to use uninitialized value w"), std::string::npos) << wrong_order.err;
  Outcome unknown = Tfrun("graphs/tf/variables_run.pbtxt --targets innit");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--targets innit: graphs/tf/variables_run.pbtxt has no node named 'innit' (did you "
                             "mean 'init'?)"),
            std::string::npos)
      << unknown.err;
  // A MetaGraphDef's collection is a target too (train_op); a misspelt one
  // is offered among the nodes and collections.
  Outcome collection = Tfrun("graphs/tf/variables_meta.meta --targets init --targets train_op --fetch y");
  EXPECT_EQ(collection.exit_code, 0) << collection.err;
  EXPECT_EQ(collection.out, "[[ 6.  6.]\n [14. 14.]]\n");
  Outcome misspelt = Tfrun("graphs/tf/variables_meta.meta --targets train_opp");
  EXPECT_EQ(misspelt.exit_code, 2);
  EXPECT_NE(misspelt.err.find("has no node or collection named 'train_opp' (did you mean 'train_op'?)"),
            std::string::npos)
      << misspelt.err;
}

// A YAML file may wrap one of TensorFlow's graph files (graph_def:,
// relative to the wrapper, or absolute) with a YAML graph's config, fetch
// and targets; --fetch and --targets still override them. A wrapper that
// names no TensorFlow graph file, or a key a wrapper has not, is refused
// with the wrapper's line and column (exit 2).
TEST(CliTest, AYamlWrapperRunsATensorFlowGraph) {
  const std::string dir = TmpDir() + "/wrapper";
  std::filesystem::create_directories(dir);
  const std::string graph_def = std::filesystem::absolute("graphs/tf/variables_run.pbtxt").string();
  std::filesystem::copy_file(graph_def, dir + "/model.pbtxt", std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir + "/run.yaml") << "graph_def: model.pbtxt\ntargets: [init]\nfetch: [y]\n";
  Outcome run = Tfrun(dir + "/run.yaml");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "[[3. 3.]\n [7. 7.]]\n");
  // Without the wrapper's init, the variables are not initialised.
  std::ofstream(dir + "/no_init.yaml") << "graph_def: " << graph_def << "\nfetch: [y]\n";
  Outcome no_init = Tfrun(dir + "/no_init.yaml");
  EXPECT_EQ(no_init.exit_code, 4);
  EXPECT_NE(no_init.err.find("Attempting to use uninitialized value w"), std::string::npos) << no_init.err;
  Outcome flags = Tfrun(dir + "/no_init.yaml --targets init --targets double --fetch y");
  EXPECT_EQ(flags.exit_code, 0) << flags.err;
  EXPECT_EQ(flags.out, "[[ 6.  6.]\n [14. 14.]]\n");
  // Nothing to fetch: placed whole, as the graph file alone.
  std::ofstream(dir + "/place.yaml") << "graph_def: model.pbtxt\nconfig: {device_count: {CPU: 2}}\n";
  Outcome place = Tfrun(dir + "/place.yaml --log-placement");
  EXPECT_EQ(place.exit_code, 0) << place.err;
  EXPECT_NE(place.out.find("init: (NoOp): /job:localhost/replica:0/task:0/device:CPU:0"), std::string::npos);

  std::ofstream(dir + "/missing.yaml") << "graph_def: nowhere.pbtxt\n";
  Outcome missing = Tfrun(dir + "/missing.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("missing.yaml:1:12: graph_def: cannot read " + dir + "/nowhere.pbtxt: No such file"),
            std::string::npos)
      << missing.err;
  std::ofstream(dir + "/yaml.yaml") << "graph_def: run.yaml\n";
  Outcome yaml = Tfrun(dir + "/yaml.yaml");
  EXPECT_EQ(yaml.exit_code, 2);
  EXPECT_NE(yaml.err.find("yaml.yaml:1:12: graph_def: " + dir + "/run.yaml is not a TensorFlow graph file"),
            std::string::npos)
      << yaml.err;
  std::ofstream(dir + "/nodes.yaml") << "graph_def: model.pbtxt\nnodes: []\n";
  Outcome nodes = Tfrun(dir + "/nodes.yaml");
  EXPECT_EQ(nodes.exit_code, 2);
  EXPECT_NE(nodes.err.find("nodes.yaml:2:1"), std::string::npos) << nodes.err;
  std::ofstream(dir + "/fetch.yaml") << "graph_def: model.pbtxt\nfetch: [yy]\n";
  Outcome fetch = Tfrun(dir + "/fetch.yaml");
  EXPECT_EQ(fetch.exit_code, 2);
  EXPECT_NE(fetch.err.find("fetch.yaml:2:9"), std::string::npos) << fetch.err;
  std::ofstream(dir + "/list.yaml") << "graph_def: [model.pbtxt]\n";
  Outcome list = Tfrun(dir + "/list.yaml");
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_NE(list.err.find("list.yaml:1:12: graph_def names a TensorFlow graph file"), std::string::npos) << list.err;
}

// --write-graph writes what tfrun read as a TensorFlow GraphDef (text by
// extension, else binary) with requested devices, --write-graph-placed
// with the assigned ones; read back, the graph places and runs as the
// original did. (TensorFlow reading them back is .ci/run's
// graphdef-round-trip suite.)
TEST(CliTest, WriteGraphWritesAGraphDefThatRunsTheSame) {
  const std::string dir = TmpDir() + "/write_graph";
  std::filesystem::create_directories(dir);
  const Outcome yaml = Tfrun("graphs/matmul.yaml --log-placement --write-graph " + dir + "/m.pbtxt --write-graph " +
                             dir + "/m.pb");
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  std::string text;
  ASSERT_TRUE(ReadWholeFile(dir + "/m.pb", &text));  // the last --write-graph given
  EXPECT_EQ(text.find("node {"), std::string::npos) << "binary for .pb";
  ASSERT_EQ(Tfrun("graphs/matmul.yaml --write-graph " + dir + "/m.pbtxt").exit_code, 0);
  ASSERT_TRUE(ReadWholeFile(dir + "/m.pbtxt", &text));
  EXPECT_NE(text.find("  name: \"MatMul\"\n  op: \"MatMul\"\n  input: \"a\"\n  input: \"b\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("key: \"transpose_a\""), std::string::npos) << text;
  EXPECT_NE(text.find("producer: 2474"), std::string::npos) << text;
  for (const char* written : {"/m.pbtxt", "/m.pb"}) {
    const Outcome back = Tfrun(dir + written + " --log-placement --fetch MatMul");
    EXPECT_EQ(back.exit_code, 0) << back.err;
    EXPECT_EQ(back.out, yaml.out) << written;
  }
  // A Variable's Assign and read are colocated with it (_class); placed,
  // soft placement's CPU stands where the GPU was asked for.
  ASSERT_EQ(Tfrun("graphs/tf1_blog_variables.yaml -q --write-graph " + dir + "/v.pbtxt --write-graph-placed " + dir +
                  "/v_placed.pbtxt")
                .exit_code,
            0);
  ASSERT_TRUE(ReadWholeFile(dir + "/v.pbtxt", &text));
  EXPECT_NE(text.find("  name: \"a_gpu/read\"\n  op: \"Identity\"\n  input: \"a_gpu\"\n  device: \"/device:GPU:0\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("s: \"loc:@a_gpu\""), std::string::npos) << text;
  ASSERT_TRUE(ReadWholeFile(dir + "/v_placed.pbtxt", &text));
  EXPECT_NE(text.find("  name: \"a_gpu/read\"\n  op: \"Identity\"\n  input: \"a_gpu\"\n  device: "
                      "\"/job:localhost/replica:0/task:0/device:CPU:0\"\n"),
            std::string::npos)
      << text;
  // A TensorFlow graph file is its own NodeDefs, with the devices set.
  const Outcome towers = Tfrun("graphs/tf/towers.pbtxt --device-count CPU=3 --log-placement --write-graph-placed " +
                               dir + "/towers_placed.pb");
  ASSERT_EQ(towers.exit_code, 0) << towers.err;
  const Outcome again = Tfrun(dir + "/towers_placed.pb --device-count CPU=3 --log-placement");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, towers.out);
  // A graph the passes rewrote (v2 tf.cond lowered into Switch and Merge,
  // its branches inlined): the file's nodes that remain, then the passes'
  // nodes, each with its device; read back, the same nodes go to the same
  // devices (in the written file's order) and it computes the same.
  const std::string cond = "graphs/tf/cond_v2_run.pbtxt --device-count CPU=3 --log-placement --fetch out --fetch "
                           "out2 --fetch out3";
  const Outcome lowered = Tfrun(cond + " --write-graph-placed " + dir + "/cond_placed.pbtxt");
  ASSERT_EQ(lowered.exit_code, 0) << lowered.err;
  ASSERT_TRUE(ReadWholeFile(dir + "/cond_placed.pbtxt", &text));
  EXPECT_NE(text.find("  name: \"cond\"\n  op: \"IdentityN\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  op: \"Switch\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("library {"), std::string::npos) << text;
  const Outcome lowered_again = Tfrun(dir + "/cond_placed.pbtxt --device-count CPU=3 --log-placement --fetch out "
                                      "--fetch out2 --fetch out3");
  ASSERT_EQ(lowered_again.exit_code, 0) << lowered_again.err;
  auto sorted_lines = [](const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  EXPECT_EQ(sorted_lines(lowered_again.out), sorted_lines(lowered.out));
  // A TF2 call's graph is the function's body as placed: its _Arg and
  // _Retval nodes, each on its device.
  const Outcome call = Tfrun("graphs/tf/call_cond.pbtxt --call __inference_f_26 --device-count CPU=3 -q "
                             "--write-graph-placed " + dir + "/call_body.pbtxt");
  ASSERT_EQ(call.exit_code, 0) << call.err;
  ASSERT_TRUE(ReadWholeFile(dir + "/call_body.pbtxt", &text));
  EXPECT_EQ(text.find("node {\n  name: \"x\"\n  op: \"_Arg\"\n  device: "
                      "\"/job:localhost/replica:0/task:0/device:CPU:0\"\n"),
            0u)
      << text;
  EXPECT_NE(text.find("  op: \"_Retval\"\n"), std::string::npos) << text;
  // An output that cannot be written stops the run before anything runs.
  const Outcome bad = Tfrun("graphs/matmul.yaml --write-graph /nonexistent/folder/m.pb");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("--write-graph"), std::string::npos) << bad.err;
}

// Resource variables (TensorFlow 2's default): read before init, the
// error is TensorFlow 2.21's own text (a Session reading y of
// graphs/tf/resource_run.pbtxt uninitialised); VarIsInitializedOp says
// so; init, then y (the golden resource_run.run has TensorFlow's output).
TEST(CliTest, ResourceVariablesRunAsInASession) {
  const Outcome uninitialized = Tfrun("graphs/tf/resource_run.pbtxt --fetch y");
  EXPECT_EQ(uninitialized.exit_code, 4);
  EXPECT_NE(uninitialized.err.find(
                "node 'y/ReadVariableOp' on /job:localhost/replica:0/task:0/device:CPU:0: FailedPreconditionError: "
                "Could not find variable w. This could mean that the variable has been deleted. In TF1, it can also "
                "mean the variable is uninitialized. Debug info: container=localhost, status error message=Container "
                "localhost does not exist. (Could not find resource: localhost/w)\n\t [[{{node y/ReadVariableOp}}]]"),
            std::string::npos)
      << uninitialized.err;
  const Outcome asked = Tfrun("graphs/tf/resource_run.pbtxt --fetch w/IsInitialized/VarIsInitializedOp");
  EXPECT_EQ(asked.out, "False\n") << asked.err;
  const Outcome run = Tfrun("graphs/tf/resource_run.pbtxt --targets init --fetch w/IsInitialized/VarIsInitializedOp "
                            "--fetch y");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "True\n[[3. 3.]\n [7. 7.]]\n");
  // sess.run of the handle itself gives its raw bytes in TensorFlow: no
  // value to print, so tfrun refuses it rather than print another.
  const Outcome handle = Tfrun("graphs/tf/resource_run.pbtxt --targets init --fetch w");
  EXPECT_EQ(handle.exit_code, 2);
  EXPECT_EQ(handle.out, "");
  EXPECT_EQ(handle.err, "tfrun: error: --fetch w:0: a resource tensor: TensorFlow's sess.run returns its raw in-memory "
                        "bytes, which tfrun does not print (fetch what reads it, such as a ReadVariableOp)\n");
}

// What --help and the flags tell a new user: defaults, exit codes,
// environment; a hint for a misspelt flag or subcommand; options that do
// not apply to `devices` refused; a repeated option keeps its last value.
TEST(CliTest, HelpAndFlagsGuideANewUser) {
  const Outcome help = Tfrun("--help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* text : {"--warmup N                  warm-up runs before --benchmark's timed runs (default 3)",
                           "Exit codes: 0 success", "TF_CPP_MIN_LOG_LEVEL", "NO_COLOR", "CUDA_VISIBLE_DEVICES",
                           "Examples:", "budget for all tensors in host memory", "\nGraph and devices:\n",
                           "\nInputs and outputs:\n", "\nChecking:\n", "\nBenchmarking:\n", "\nClusters:\n",
                           "tfrun test graphs/", "--feed x=@graphs/data/towers_batch.npy", "--expect matmul.expected",
                           "--devices testdata/topologies/k20m_x4.yaml --visible-devices 1,2"}) {
    EXPECT_NE(help.out.find(text), std::string::npos) << text;
  }
  // Defaults are stated once, in words: no CLI11 ranges or "=0".
  for (const char* text : {"INT:INT", "in [", "=0", "TEXT"}) {
    EXPECT_EQ(help.out.find(text), std::string::npos) << text << " in\n" << help.out;
  }
  const Outcome devices_help = Tfrun("devices --help");
  EXPECT_NE(devices_help.out.find("--virtual-devices"), std::string::npos) << devices_help.out;
  Outcome typo = Tfrun("graphs/matmul.yaml --log-placment");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err,
            "tfrun: error: The following argument was not expected: --log-placment (did you mean "
            "'--log-placement'?) (see tfrun --help)\n");
  typo = Tfrun("devics");
  EXPECT_EQ(typo.err, "tfrun: error: devics: no such graph file (did you mean the subcommand 'devices'?)\n");
  EXPECT_EQ(Tfrun("devices graphs/matmul.yaml").exit_code, 2);
  const std::string devices_json = TmpDir() + "/devices.json";
  const Outcome json_file = Tfrun("devices -q --json " + devices_json);  // as a run's --json FILE
  EXPECT_EQ(json_file.exit_code, 0) << json_file.err;
  EXPECT_EQ(json_file.out.rfind("Physical devices:\n", 0), 0u) << json_file.out;
  EXPECT_EQ(Slurp(devices_json).rfind("{\"schema\":1,", 0), 0u);
  EXPECT_EQ(Tfrun("devices --json -").out.rfind("{\"schema\":1,", 0), 0u);
  EXPECT_EQ(Tfrun("devices --benchmark 3").exit_code, 2);
  const Outcome last = Tfrun("graphs/matmul.yaml --log-placement --compat tf0 --compat tf2");
  EXPECT_EQ(last.exit_code, 0) << last.err;
  EXPECT_NE(last.out.find("MatMul: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0"), std::string::npos);
  EXPECT_EQ(Tfrun("graphs/matmul.yaml --max-tensor-bytes 0").err,
            "tfrun: error: --max-tensor-bytes: Value 0 not in range 1 to 9223372036854775807 (see tfrun --help)\n");
}

// tfrun's own info and warning lines: --quiet and TF_CPP_MIN_LOG_LEVEL
// silence them, never the output or the errors; an unparsable
// TF_FORCE_GPU_ALLOW_GROWTH is a warning.
TEST(CliTest, LogLevelsSilenceInfoAndWarnings) {
  const std::string moved = "graphs/matmul_gpu2.yaml --soft-placement";
  EXPECT_NE(Tfrun(moved).err.find("tfrun: info: "), std::string::npos);
  Outcome quiet = Tfrun(moved + " --quiet");
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(quiet.out, "[[22. 28.]\n [49. 64.]]\n");
  EXPECT_EQ(RunCommand("TF_CPP_MIN_LOG_LEVEL=1 cli/tfrun " + moved).err, "");
  const Outcome growth = RunCommand("TF_FORCE_GPU_ALLOW_GROWTH=maybe cli/tfrun devices");
  EXPECT_EQ(growth.exit_code, 0);
  EXPECT_EQ(growth.err.rfind("tfrun: warning: The TF_FORCE_GPU_ALLOW_GROWTH environment variable is set but could "
                             "not be parsed: \"maybe\".",
                             0),
            0u)
      << growth.err;
  EXPECT_EQ(RunCommand("TF_CPP_MIN_LOG_LEVEL=2 TF_FORCE_GPU_ALLOW_GROWTH=maybe cli/tfrun devices").err, "");
  const Outcome error = Tfrun("graphs/matmul_gpu2.yaml --quiet");
  EXPECT_EQ(error.exit_code, 3);
  EXPECT_NE(error.err.find("tfrun: error: "), std::string::npos);
}

// Issue 30: the tower sample (graphs/tf/tower_sample_cpu_1.pb) trains in
// tfrun as in TensorFlow: --init runs the initializer once, each step runs
// the loss and the Adam update together, --batch 8 takes rows 0-7, 8-15,
// then 0-7 again of the 16 fed. TensorFlow 2.21's losses for the same
// feeds (its session, sess.run(['loss:0', 'train'])): 12.076698,
// 11.639405, 11.054258, 9.022739 (DERIVATIONS.md, "Training"); equal
// within rtol 1e-5, the first three steps' tolerance of
// tools/train_conformance.py (README, "Training").
TEST(Cli, TowerSampleTrainsAsInTensorFlow) {
  const Outcome o = Tfrun(
      "graphs/tf/tower_sample_cpu_1.pb --device-count CPU=1 --init init --targets train --fetch loss --steps 4 "
      "--batch 8 --feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy --quiet");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const double tensorflow[] = {12.076698, 11.639405, 11.054258, 9.022739};
  std::istringstream lines(o.out);
  std::string line;
  int step = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(step, 4) << o.out;
    ASSERT_EQ(line.rfind("[np.float32(", 0), 0u) << line;  // print(sess.run([loss])) under NumPy 2
    const double loss = std::stod(line.substr(12));
    EXPECT_NEAR(loss, tensorflow[step], 1e-5 * tensorflow[step]) << "step " << step + 1;
    ++step;
  }
  EXPECT_EQ(step, 4);
  // --print-every 2: steps 2 and 4 only, the same values.
  const Outcome every = Tfrun(
      "graphs/tf/tower_sample_cpu_1.pb --device-count CPU=1 --init init --targets train --fetch loss --steps 4 "
      "--batch 8 --print-every 2 --feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy");
  ASSERT_EQ(every.exit_code, 0) << every.err;
  std::istringstream all(o.out);
  std::vector<std::string> printed;
  while (std::getline(all, line)) printed.push_back(line);
  ASSERT_EQ(printed.size(), 4u);
  EXPECT_EQ(every.out, printed[1] + "\n" + printed[3] + "\n");
  // --trace: the last step, the update's kernels in it once.
  const std::string trace = TmpDir() + "/steps_trace.json";
  const Outcome traced = Tfrun(
      "graphs/tf/tower_sample_cpu_1.pb --device-count CPU=1 --init init --targets train --fetch loss --steps 2 "
      "--batch 8 --feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy --quiet --trace " +
      trace);
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  const Outcome checked = RunCommand("python3 tools/check_trace.py " + trace + " --runs 1 --nodes loss,train");
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
}

// Each step is one session run: the dropout mask is drawn once per step
// for the loss and the update alike, and the variables carry over. Two
// steps fetching the variable show it changed by the first step's update.
// Starts tfrun with `args` in `dir`, standard output to `out`, every
// signal's default action restored (a test runner may hand its children
// SIGINT ignored, which tfrun then leaves ignored, as nohup expects).
pid_t SpawnTfrun(const std::string& dir, const std::vector<std::string>& args, const std::string& out) {
  const std::string binary = std::filesystem::absolute("cli/tfrun").string();
  std::vector<std::string> words = {binary};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  const std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(dir);
  pid_t pid = -1;
  posix_spawn(&pid, binary.c_str(), &files, &attr, argv.data(), environ);
  std::filesystem::current_path(cwd);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  return pid;
}

// Each step's line is written as it is computed, as print() in the Python
// loop writes it: interrupted, a long loop leaves every line it finished
// (it printed nothing, and grew in memory with each step), and tfrun ends
// by the signal itself, as Python's KeyboardInterrupt does (130 in a shell).
TEST(Cli, StepsStreamAndASignalEndsTheRunByItself) {
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string out = TmpDir() + "/steps_" + std::to_string(sig) + ".out";
    const pid_t pid = SpawnTfrun("graphs/tf", {"nan_loss.pbtxt", "--init", "init", "--targets", "train", "--fetch", "loss",
                                               "--steps", "1000000000"},
                                 out);
    ASSERT_GT(pid, 0);
    for (int i = 0; i < 200 && std::filesystem::file_size(out) < 1000; ++i) usleep(50000);
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
    const std::string steps = Slurp(out);
    ASSERT_GE(steps.size(), 1000u) << sig;
    EXPECT_EQ(steps.back(), '\n');  // whole lines only
    EXPECT_EQ(steps.rfind("[np.float32(3.205942e+14)]\n[np.float32(inf)]\n", 0), 0u) << steps.substr(0, 200);
  }
}

TEST(Cli, StepsKeepVariablesAndPrintLists) {
  const Outcome o = Tfrun("graphs/tf/resource_run.pbtxt --init init --fetch y --steps 2");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // resource_run.pbtxt: y reads w; nothing updates it, so both steps agree
  // and print as print(sess.run([y])) prints an array under NumPy 2.
  std::istringstream lines(o.out);
  std::string first, second;
  std::getline(lines, first);
  EXPECT_EQ(first.rfind("[array(", 0), 0u) << o.out;
}

TEST(Cli, TrainingFlagsAreChecked) {
  Outcome o = Tfrun("graphs/tf/resource_run.pbtxt --init init --fetch y --print-every 2");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--print-every: only with --steps"), std::string::npos) << o.err;
  o = Tfrun("graphs/tf/resource_run.pbtxt --init init --fetch y --batch 2");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--batch: only with --steps"), std::string::npos) << o.err;
  o = Tfrun("graphs/matmul.yaml --steps 2 --compat eager");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--steps: --compat eager runs op by op"), std::string::npos) << o.err;
  o = Tfrun("graphs/tf/resource_run.pbtxt --init innit --fetch y --steps 1");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--init innit: graphs/tf/resource_run.pbtxt has no node named 'innit' (did you mean 'init'?)"),
            std::string::npos)
      << o.err;
  // More rows in a batch than the feed has.
  o = Tfrun("graphs/tf/tower_sample_cpu_1.pb --device-count CPU=1 --init init --targets train --fetch loss --steps 1 "
            "--batch 32 --feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--batch 32: --feed x has 16 rows, fewer than one batch"), std::string::npos) << o.err;
  // --batch with no .npy feed to take batches from was silently ignored.
  o = Tfrun("graphs/tf/resource_run.pbtxt --init init --fetch y --steps 2 --batch 2");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "tfrun: error: --batch: no --feed NAME=@FILE.npy to take the batches from (a literal feeds every "
                   "step whole)\n");
  EXPECT_EQ(o.out, "");
}

// A batch that the towers cannot share: TensorFlow's Split error, naming
// the node, at the step that feeds it (issue 30, item 8).
TEST(Cli, TowerSplitOfABadBatchFailsAsInTensorFlow) {
  const Outcome o = Tfrun(
      "graphs/tf/tower_sample_cpu_2.pb --device-count CPU=2 --init init --targets train --fetch loss --steps 1 "
      "--batch 7 --feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy");
  EXPECT_EQ(o.exit_code, 4) << o.err;  // a run-time error
  EXPECT_NE(o.err.find("Number of ways to split should evenly divide the split dimension, but got split_dim 0 (size = "
                       "7) and num_split 2"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("step 1:"), std::string::npos) << o.err;
}

// Memory (issue 30, item 7): a training graph larger than its simulated
// GPUs' memory fails with TensorFlow's OOM text naming the tensor, the
// device and its allocator (exit 4), never a crash. (At the sample's own
// batch of 20,000 on eight P40s it fits: bench/RESULTS.md.)
TEST(Cli, TrainingOutOfGpuMemoryIsTensorFlowsOom) {
  const Outcome o = Tfrun(
      "graphs/tf/tower_sample_2.pb --devices testdata/topologies/p40_x8.yaml --per-process-gpu-memory-fraction 0.0005 "
      "--init init --targets train --fetch loss --steps 1 --feed x=@testdata/train/tower_x16.npy "
      "--feed y=@testdata/train/tower_y16.npy --quiet");
  ASSERT_TRUE(o.exited) << o.err;
  EXPECT_EQ(o.exit_code, 4) << o.err;
  EXPECT_NE(o.err.find("ResourceExhaustedError: OOM when allocating tensor with shape[3136,1024] and type float on "
                       "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.out, "");
}

// A convolution fed a batch of the wrong depth fails with TensorFlow 2.21's
// kernel text, naming the node (issue 30, item 8; testdata/train/
// conv_pool.pbtxt, written by TensorFlow: a Conv2D of a [2, 2, 2, 3]
// filter over a placeholder of unknown shape).
TEST(Cli, ConvolutionOfAWrongDepthFailsWithTensorFlowsText) {
  const Outcome o = Tfrun("testdata/train/conv_pool.pbtxt --fetch conv --feed x=@testdata/train/depth3.npy");
  ASSERT_TRUE(o.exited) << o.err;
  EXPECT_EQ(o.exit_code, 4) << o.err;
  EXPECT_NE(o.err.find("node 'conv' on /job:localhost/replica:0/task:0/device:CPU:0: InvalidArgumentError: input "
                       "depth must be evenly divisible by filter depth: 3 vs 2\n\t [[{{node conv}}]]"),
            std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

// A TF2 call's mistakes (docs/graph-format.md "TF2 function calls"): one
// line each, exit 2, naming what the graph has.
TEST(CliTest, ATf2CallsMistakesAreNamed) {
  Outcome r = Tfrun("graphs/tf/call_plain.pbtxt --call nope");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tfrun: error: call: graphs/tf/call_plain.pbtxt has no function 'nope' (its library has 1, e.g. "
                   "'__inference_f_9')\n");
  r = Tfrun("graphs/tf/call_plain.pbtxt --call __inference_f_9 --arg-device z=/CPU:0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tfrun: error: --arg-device z=/CPU:0: '__inference_f_9' takes ARG=DEVICE for ARG one of x, y\n");
  r = Tfrun("graphs/tf/call_plain.pbtxt --call __inference_f_9 --call-device /GPU:3 --log-placement");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tfrun: error: --call-device: no device matches '/GPU:3'\n");
  r = Tfrun("graphs/tf/accumulate_n.pbtxt --call f");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("has no function 'f' (it has no function library)"), std::string::npos) << r.err;
  r = Tfrun("graphs/tf/call_plain.pbtxt --arg-device x=/CPU:0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tfrun: error: --call-device and --arg-device describe a call: name its function with --call\n");
}

// The call's device goes first among candidates: on a machine with GPUs, a
// call under tf.device('/CPU:0') keeps every op that can run there on it.
TEST(CliTest, ATf2CallPlacesOnItsDeviceFirst) {
  Outcome r = Tfrun("graphs/tf/call_plain.pbtxt --call __inference_f_9 --log-placement --devices "
                    "testdata/topologies/k20m_x4.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MatMul: (MatMul): /job:localhost/replica:0/task:0/device:GPU:0"), std::string::npos) << r.out;
  r = Tfrun("graphs/tf/call_plain.pbtxt --call __inference_f_9 --call-device /CPU:0 --log-placement --devices "
            "testdata/topologies/k20m_x4.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MatMul: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Device mapping"), std::string::npos) << r.out;

  // --explain lists the call's device first, as the candidates are ordered.
  r = Tfrun("graphs/tf/call_plain.pbtxt --call __inference_f_9 --call-device /CPU:1 --device-count CPU=3 -q "
            "--explain MatMul");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  Devices, in TensorFlow's order (the call's device first, then device type priority, then "
                       "name):\n    1. /job:localhost/replica:0/task:0/device:CPU:1 (CPU, priority 70)  <- chosen\n"
                       "    2. /job:localhost/replica:0/task:0/device:CPU:0 (CPU, priority 70)\n"),
            std::string::npos)
      << r.out;
  r = Tfrun("graphs/tf/call_plain.pbtxt --call __inference_f_9 --device-count CPU=3 -q --explain MatMul --json -");
  EXPECT_NE(r.out.find("\"call_device_first\":false"), std::string::npos) << r.out;
}

// A function with experimental_ints_on_device: called from another it is
// inlined and places (graphs/tf/call_ints_on_device.call, TensorFlow's
// lines); called itself, eager TensorFlow 2.21 refuses it in these words
// (its multi-device function runtime).
TEST(CliTest, ATf2CallOfAnIntsOnDeviceFunctionIsRefusedAsTensorFlowDoes) {
  const Outcome r = Tfrun("graphs/tf/call_ints_on_device.pbtxt --call __inference_g_20 --log-placement");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tfrun: error: call: Function '__inference_g_20' has `experimental_ints_on_device` attribute set. "
                   "This attribute is not currently supported by multi-device functions.\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

// --do-function-inlining is the config key's switch: a Session graph's
// call (a nested tf.function's PartitionedCall) inlined before placing.
TEST(CliTest, DoFunctionInliningFlagInlinesASessionsCalls) {
  const Outcome kept = Tfrun("graphs/tf/call_nested.pbtxt --place-only --log-placement --device-count CPU=3");
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_NE(kept.out.find("PartitionedCall: (PartitionedCall)"), std::string::npos) << kept.out;
  const Outcome inlined = Tfrun("graphs/tf/call_nested.pbtxt --place-only --log-placement --device-count CPU=3 "
                                "--do-function-inlining");
  EXPECT_EQ(inlined.exit_code, 0) << inlined.err;
  EXPECT_EQ(inlined.out.find("PartitionedCall: (PartitionedCall)"), std::string::npos) << inlined.out;
  EXPECT_NE(inlined.out.find("Func/PartitionedCall/input/_0: (Identity)"), std::string::npos) << inlined.out;
  const std::string dir = TmpDir() + "/inlining";
  ASSERT_EQ(RunCommand("mkdir -p " + dir + " && cp graphs/tf/call_nested.pbtxt " + dir +
                       " && printf 'graph_def: call_nested.pbtxt\\nconfig: {do_function_inlining: true}\\n' > " + dir +
                       "/w.yaml")
                .exit_code,
            0);
  const Outcome wrapped = Tfrun(dir + "/w.yaml --place-only --log-placement --device-count CPU=3");
  EXPECT_EQ(wrapped.out, inlined.out) << wrapped.err;
}

}  // namespace
}  // namespace tfrun
