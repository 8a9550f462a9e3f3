// What a new user's hostile inputs and a script's trust need: no crash on
// input-sized text (under a 1 MB stack), a JSON report whose exit code is
// the process's for every exit, `tfrun test` that fails when it ran
// nothing and leaves no scratch folder behind, and --out names checked
// before anything runs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "cli/run_command.h"

namespace tfrun {
namespace {

// Stack overflows show at 1 MB that need 8 MB to show otherwise.
CommandResult Tfrun(const std::string& args) { return RunCommand("ulimit -s 1024; cli/tfrun " + args); }

std::string Slurp(const std::string& path) {
  std::string text;
  ReadWholeFile(path, &text);
  return text;
}

// A field of a JSON file as Python reads it (the file must parse).
std::string JsonField(const std::string& path, const std::string& expression) {
  return RunCommand("python3 -c \"import json, sys; r = json.load(open(sys.argv[1])); print(" + expression +
                    ")\" " + path)
      .out;
}

// A version 2.0 .npy file whose header names `descr`, holding one float.
void WriteNpyWithDescr(const std::string& path, const std::string& descr) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }";
  header.append((64 - (12 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  const uint32_t n = static_cast<uint32_t>(header.size());
  std::ofstream out(path, std::ios::binary);
  out << "\x93NUMPY" << '\x02' << '\x00';
  for (int i = 0; i < 4; ++i) out << static_cast<char>((n >> (8 * i)) & 0xff);
  out << header << std::string(4, '\0');
}

std::string Repeat(char c, size_t n) { return std::string(n, c); }

TEST(RobustnessTest, HugeNpyHeadersAreRefusedAsNumPyRefusesThem) {
  const std::string dir = TestTmpDir();
  const std::string huge = dir + "/huge_header.npy", long_descr = dir + "/long_descr.npy";
  WriteNpyWithDescr(huge, "<" + Repeat('f', 30000));
  WriteNpyWithDescr(long_descr, "<" + Repeat('f', 9000));  // under NumPy's 10,000-byte limit
  std::ofstream(dir + "/npy_huge.yaml") << "nodes:\n  - {name: x, op: Const, npy: " << huge << "}\n";
  std::ofstream(dir + "/fed.yaml") << "nodes:\n  - {name: x, op: Placeholder, dtype: float32}\nfetch: [x]\n";

  CommandResult r = Tfrun(dir + "/npy_huge.yaml");
  ASSERT_TRUE(r.exited && r.exit_code < 128) << "crashed: " << r.exit_code;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(":2:31: node 'x': " + huge +
                       ": not a readable .npy file: Header info length (30068) is large and may not be safe to load "
                       "securely.\n"),
            std::string::npos)
      << r.err;
  r = Tfrun(dir + "/fed.yaml --feed x=@" + huge);
  ASSERT_TRUE(r.exited && r.exit_code < 128) << "crashed: " << r.exit_code;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Header info length (30068) is large"), std::string::npos) << r.err;

  r = Tfrun(dir + "/fed.yaml --feed x=@" + long_descr);
  ASSERT_TRUE(r.exited && r.exit_code < 128) << "crashed: " << r.exit_code;
  EXPECT_EQ(r.exit_code, 2);
  // One readable line: the descr is cut.
  EXPECT_NE(r.err.find("unsupported dtype '<ffff"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("... (9001 characters)'"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 300u + long_descr.size());

  // Control characters in the header are escaped: still one line.
  const std::string newline_descr = dir + "/newline_descr.npy";
  WriteNpyWithDescr(newline_descr, "<f\n4");
  r = Tfrun(dir + "/fed.yaml --feed x=@" + newline_descr);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unsupported dtype '<f\\n4'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(RobustnessTest, LongNamesInErrorsUnderJsonDoNotCrash) {
  const std::string dir = TestTmpDir();
  CommandResult r = Tfrun("graphs/matmul.yaml --fetch " + Repeat('Q', 30000) + " --json " + dir + "/fetch.json");
  ASSERT_TRUE(r.exited && r.exit_code < 128) << "crashed: " << r.exit_code;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_LT(r.err.size(), 400u) << "the name is cut in the message";
  EXPECT_EQ(JsonField(dir + "/fetch.json", "r['exit_code'], r['error']['kind']"), "2 bad_input\n");

  // A 25,000-character node name in a graph with an error.
  const std::string name = Repeat('n', 25000);
  std::ofstream(dir + "/long_name.yaml") << "nodes:\n  - {name: " << name
                                         << ", op: MatMul, inputs: [a, b]}\n  - {name: a, op: Const, value: [1.0]}\n";
  r = Tfrun(dir + "/long_name.yaml --json -");
  ASSERT_TRUE(r.exited && r.exit_code < 128) << "crashed: " << r.exit_code;
  EXPECT_EQ(r.exit_code, 2);
  std::ofstream(dir + "/long_name.json") << r.out;
  EXPECT_EQ(JsonField(dir + "/long_name.json", "r['exit_code'], r['error']['line'], len(r['error']['node'])"),
            "2 2 25000\n")
      << r.out.substr(0, 500);
}

// The report's "exit_code" and "error" are the process's, for every exit.
TEST(RobustnessTest, JsonReportSaysTheProcesssExitCode) {
  const std::string dir = TestTmpDir();
  std::ofstream(dir + "/wrong.txt") << "[[0.]]\n";
  std::ofstream(dir + "/bad.yaml") << "nodes:\n  - {name: a, op: Cnst}\n";
  struct Case {
    std::string args;
    int exit_code;
    std::string kind;  // "None": no error
  };
  const Case cases[] = {
      {"graphs/matmul.yaml", 0, "None"},
      {"graphs/matmul.yaml --expect " + dir + "/wrong.txt", 1, "mismatch"},
      {dir + "/bad.yaml", 2, "bad_input"},
      {"graphs/matmul_gpu2.yaml", 3, "placement"},
      {"graphs/matmul.yaml >/dev/full", 4, "runtime"},
      {"graphs/matmul.yaml --expect " + dir + "/wrong.txt >/dev/full", 4, "runtime"},
  };
  for (const Case& c : cases) {
    const std::string json = dir + "/report.json";
    std::remove(json.c_str());
    const CommandResult r = Tfrun("--json " + json + " " + c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.err;
    EXPECT_EQ(JsonField(json, "r['exit_code'], r['error'] and r['error']['kind'], r['error'] and r['error']['exit_code']"),
              std::to_string(c.exit_code) + " " + c.kind + " " + (c.exit_code ? std::to_string(c.exit_code) : "None") +
                  "\n")
        << c.args;
  }
}

// --out's file names are checked with the other outputs: exit 2, nothing
// printed or written, a message of readable length.
TEST(RobustnessTest, OutNamesTooLongAreRefusedBeforeTheRun) {
  const std::string dir = TestTmpDir();
  std::ofstream(dir + "/long_out.yaml") << "nodes:\n  - {name: " << Repeat('n', 300) << ", op: Const, value: [1.0]}\n";
  const CommandResult r = Tfrun(dir + "/long_out.yaml --out " + dir + "/long_out_dir");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("would have a 304-byte name; the file system allows 255"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 300u + dir.size());
  struct stat st;
  EXPECT_NE(stat((dir + "/long_out_dir").c_str(), &st), 0) << "--out made its folder";
}

class TestCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TestTmpDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    scratch_ = dir_ + "/tmp";
    ASSERT_EQ(RunCommand("rm -rf " + dir_ + " && mkdir -p " + dir_ + "/cases " + scratch_).exit_code, 0);
  }
  // `tfrun test` with its scratch folders in scratch_.
  CommandResult Test(const std::string& args) { return RunCommand("TMPDIR=" + scratch_ + " cli/tfrun test " + args); }
  bool ScratchIsEmpty() { return RunCommand("ls -A " + scratch_).out.empty(); }
  void Case(const std::string& name, const std::string& expected) {
    ASSERT_EQ(RunCommand("cp graphs/matmul.yaml " + dir_ + "/cases/" + name + ".yaml").exit_code, 0);
    std::ofstream(dir_ + "/cases/" + name + ".expected") << expected;
  }
  std::string dir_, scratch_;
};

TEST_F(TestCommandTest, NothingToTestFails) {
  CommandResult r = Test(dir_ + "/cases");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "tfrun: error: tfrun test: no cases found in " + dir_ +
                       "/cases (a case is NAME.yaml with NAME.expected beside it)\n");
  ASSERT_EQ(RunCommand("cp graphs/matmul.yaml " + dir_ + "/cases/lonely.yaml").exit_code, 0);
  r = Test(dir_ + "/cases");
  EXPECT_EQ(r.exit_code, 1) << "a graph without an expected file is no case";
  r = Test(dir_ + "/cases/lonely.yaml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(ScratchIsEmpty());
}

// An expected file whose graph was renamed fails, named.
TEST_F(TestCommandTest, AnOrphanExpectedFileFails) {
  std::ofstream(dir_ + "/cases/renamed.expected") << "[[22. 28.]\n [49. 64.]]\n";
  CommandResult r = Test(dir_ + "/cases");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "FAIL " + dir_ + "/cases/renamed\n" + dir_ + "/cases/renamed.expected: no graph for it: " + dir_ +
                       "/cases/renamed.yaml is missing\n0 passed, 1 failed\n");
  std::ofstream(dir_ + "/cases/renamed.log.expected") << "x\n";
  Case("ok", "[[22. 28.]\n [49. 64.]]\n");
  r = Test(dir_ + "/cases");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("renamed.log.expected: no graph for it: " + dir_ + "/cases/renamed.log.yaml is missing, and "
                       "so is " + dir_ + "/cases/renamed.yaml\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 19), "1 passed, 2 failed\n");
}

// --update says which cases it rewrote, exit code included, and passes.
TEST_F(TestCommandTest, UpdateSaysUpdated) {
  Case("ok", "[[22. 28.]\n [49. 64.]]\n");
  Case("stale", "# args: --log-placement\n# exit: 3\nold\n");
  CommandResult r = Test(dir_ + "/cases --update");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("PASS " + dir_ + "/cases/ok\nUPDATED " + dir_ + "/cases/stale\nexit code 0, expected 3\n", 0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 30), "1 passed, 0 failed, 1 updated\n");
  EXPECT_EQ(Slurp(dir_ + "/cases/stale.expected").substr(0, 58),
            "# args: --log-placement\nDevice mapping: no known devices.\n");
  r = Test(dir_ + "/cases");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "PASS " + dir_ + "/cases/ok\nPASS " + dir_ + "/cases/stale\n2 passed, 0 failed\n");
}

// The scratch folder goes on every way out: a closed standard output,
// standard output that cannot be written, SIGINT.
TEST_F(TestCommandTest, LeavesNoScratchFolderBehind) {
  Case("a", "[[22. 28.]\n [49. 64.]]\n");
  Case("b", "[[22. 28.]\n [49. 64.]]\n");
  CommandResult r = Test(dir_ + "/cases >/dev/full");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(ScratchIsEmpty());
  r = RunCommand("TMPDIR=" + scratch_ + " cli/tfrun test " + dir_ + "/cases | head -c 1");
  EXPECT_TRUE(ScratchIsEmpty());

  // A slow case, interrupted while it runs: the process ends by SIGINT.
  Case("slow", "# args: --benchmark 1 --benchmark-duration 60 --warmup 0 -q\n[[22. 28.]\n [49. 64.]]\n");
  r = RunCommand("TMPDIR=" + scratch_ + " cli/tfrun test -j 3 " + dir_ +
                 "/cases & pid=$!; for i in $(seq 100); do [ -n \"$(ls -A " + scratch_ +
                 ")\" ] && break; sleep 0.1; done; sleep 0.5; kill -INT $pid; wait $pid; echo \"status $?\"");
  EXPECT_NE(r.out.find("status 130"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(ScratchIsEmpty());
  EXPECT_EQ(RunCommand("pgrep -f 'benchmark-duratio[n] 60'").out, "") << "a case outlived tfrun test";
}

// A text GraphDef whose library holds `n` functions f0..f{n-1} of one
// `type` argument and result; the graph calls f0 and reads its result.
// Nested: each f{i} calls f{i+1} (the last is an Identity); else each is an
// Identity of its argument.
std::string FunctionLibraryGraph(int n, bool nested, const std::string& type) {
  const std::string types = "attr { key: 'Tin' value { list { type: " + type + " } } } attr { key: 'Tout' value { "
                            "list { type: " + type + " } } } ";
  std::string text = type == "DT_RESOURCE"
                         ? "node { name: 'x' op: 'VarHandleOp' attr { key: 'dtype' value { type: DT_FLOAT } } attr { "
                           "key: 'shape' value { shape { } } } }\n"
                         : "node { name: 'x' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: "
                           "'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }\n";
  text += "node { name: 'call' op: 'PartitionedCall' input: 'x' " + types + "attr { key: 'f' value { func { name: "
          "'f0' } } } }\n";
  text += type == "DT_RESOURCE"
              ? "node { name: 'out' op: 'ReadVariableOp' input: 'call' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
              : "node { name: 'out' op: 'Identity' input: 'call' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  text += "library {\n";
  for (int i = 0; i < n; ++i) {
    const std::string name = "f" + std::to_string(i);
    std::string body;
    if (nested && i + 1 < n) {
      body = "node_def { name: 'c' op: 'PartitionedCall' input: 'a' " + types + "attr { key: 'f' value { func { "
             "name: 'f" + std::to_string(i + 1) + "' } } } } ret { key: 'r' value: 'c:output:0' }";
    } else {
      body = "node_def { name: 'c' op: 'Identity' input: 'a' attr { key: 'T' value { type: " + type +
             " } } } ret { key: 'r' value: 'c:output:0' }";
    }
    text += "function { signature { name: '" + name + "' input_arg { name: 'a' type: " + type +
            " } output_arg { name: 'r' type: " + type + " } } " + body + " }\n";
  }
  return text + "}\n";
}

// Issue 43's hostile libraries: 10,000 functions side by side place at
// once; 10,000 nested, inlined, are refused before their names (each
// prefixed by its caller's, 600 MB in all) fill memory; 10,000 nested
// calls returning a resource, kept as nodes, are refused before the
// placer's nested inspection fills the stack.
TEST(RobustnessTest, LibrariesOfTenThousandFunctions) {
  const std::string dir = TestTmpDir();
  std::ofstream(dir + "/flat.pbtxt") << FunctionLibraryGraph(10000, false, "DT_FLOAT");
  CommandResult r = Tfrun(dir + "/flat.pbtxt --fetch out --do-function-inlining");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1.0\n");
  r = Tfrun(dir + "/flat.pbtxt --call f9999 --place-only --log-placement");
  EXPECT_EQ(r.exit_code, 0) << r.err;

  std::ofstream(dir + "/nested.pbtxt") << FunctionLibraryGraph(10000, true, "DT_FLOAT");
  for (const char* how : {"--fetch out --do-function-inlining", "--call f0 --place-only"}) {
    r = Tfrun(dir + "/nested.pbtxt " + how);
    ASSERT_TRUE(r.exited && r.exit_code < 128) << "crashed: " << r.exit_code;
    EXPECT_EQ(r.exit_code, 2) << how;
    EXPECT_NE(r.err.find("lowering and inlining functions made more than 64 MiB of node names"), std::string::npos)
        << r.err;
  }

  std::ofstream(dir + "/resources.pbtxt") << FunctionLibraryGraph(10000, true, "DT_RESOURCE");
  r = Tfrun(dir + "/resources.pbtxt --place-only --log-placement");
  ASSERT_TRUE(r.exited && r.exit_code < 128) << "crashed: " << r.exit_code;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("calls of functions that return resources are nested more than 64 deep"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tfrun
