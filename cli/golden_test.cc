// The project's goldens, run as a user's CI would run them: every
// NAME[.VARIANT].expected beside a graph in graphs/ and testdata/ through
// `tfrun test` (one GoogleTest case each), and the `tfrun devices` cases of
// testdata/golden/cases.txt directly. Goldens are claims about TensorFlow
// and NumPy: each was derived from tf-semantics.md's transcripts and rules,
// from NumPy, or is TensorFlow's own output (testdata/golden/DERIVATIONS.md),
// never pasted from tfrun.
#include <gtest/gtest.h>

#include "cli/run_command.h"
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <dirent.h>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct GoldenCase {
  std::string name;
  int exit_code = 0;
  std::string args;
};

std::vector<GoldenCase> LoadCases() {
  std::vector<GoldenCase> cases;
  for (const std::vector<std::string>& f : tfrun::ReadCaseTable("testdata/golden/cases.txt", 3)) {
    cases.push_back({f[0], std::stoi(f[1]), f[2]});
  }
  return cases;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesGolden) {
  const GoldenCase& c = GetParam();
  // The args may start with environment assignments (CUDA_VISIBLE_DEVICES=..),
  // which go before the binary; the test's own environment never leaks in.
  std::string cmd;
  {
    std::istringstream words(c.args);
    std::string word, env, rest;
    bool in_env = true;
    while (words >> word) {
      if (in_env && word.find('=') != std::string::npos && word[0] != '-') {
        env += word + " ";
      } else {
        in_env = false;
        rest += word + " ";
      }
    }
    cmd = "env -u CUDA_VISIBLE_DEVICES -u TF_FORCE_GPU_ALLOW_GROWTH " + env + "cli/tfrun " + rest;
  }
  const tfrun::CommandResult r = tfrun::RunCommand(cmd);
  const std::string& out = r.out;
  const std::string& err = r.err;
  ASSERT_TRUE(r.exited) << "tfrun did not exit normally (crash?)\n" << err;
  EXPECT_EQ(r.exit_code, c.exit_code) << cmd << "\nstderr:\n" << err;

  std::string expected;
  ASSERT_TRUE(tfrun::ReadWholeFile("testdata/golden/" + c.name + ".out", &expected))
      << "missing testdata/golden/" << c.name << ".out";
  EXPECT_EQ(out, expected) << cmd << "\nstderr:\n" << err;
  // Every case states its standard error (empty when nothing may be printed).
  std::string expected_err;
  ASSERT_TRUE(tfrun::ReadWholeFile("testdata/golden/" + c.name + ".err", &expected_err))
      << "missing testdata/golden/" << c.name << ".err";
  EXPECT_EQ(err, expected_err) << cmd;
}

INSTANTIATE_TEST_SUITE_P(Goldens, GoldenTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string s;
                           for (char ch : info.param.name) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return s;
                         });

// Every *.expected file under the folders, sorted.
std::vector<std::string> ExpectedFiles(const std::vector<std::string>& roots) {
  std::vector<std::string> files;
  for (const std::string& root : roots) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      const std::string p = e.path().string();
      if (e.is_regular_file() && p.size() > 9 && p.compare(p.size() - 9, 9, ".expected") == 0) files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

class ExpectedFileTest : public ::testing::TestWithParam<std::string> {};

// One case through `tfrun test`, the command a user's CI runs. Every case
// states its standard error (`tfrun test` leaves it unchecked without an
// .expected-stderr file; an empty one means nothing may be printed), so a
// wrong soft-placement note or a new warning fails it.
TEST_P(ExpectedFileTest, PassesUnderTfrunTest) {
  const std::string& expected = GetParam();
  EXPECT_TRUE(std::filesystem::exists(expected + "-stderr")) << expected << " has no " << expected << "-stderr";
  const std::string cmd =
      "env -u CUDA_VISIBLE_DEVICES -u TF_FORCE_GPU_ALLOW_GROWTH cli/tfrun test -j 1 " + GetParam();
  const tfrun::CommandResult r = tfrun::RunCommand(cmd);
  ASSERT_TRUE(r.exited) << cmd << "\n" << r.err;
  EXPECT_EQ(r.exit_code, 0) << cmd << "\n" << r.out << r.err;
  // Another processor maker's values (`# processor:`): skipped, with why.
  if (r.out.find("\n0 passed, 0 failed, 1 skipped\n") != std::string::npos) GTEST_SKIP() << r.out;
  EXPECT_NE(r.out.find("\n1 passed, 0 failed\n"), std::string::npos) << cmd << "\n" << r.out << r.err;
}

INSTANTIATE_TEST_SUITE_P(Cases, ExpectedFileTest, ::testing::ValuesIn(ExpectedFiles({"graphs", "testdata"})),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s;
                           for (char ch : info.param) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return s;
                         });

// Every example graph, and every graph TensorFlow wrote in graphs/tf, has
// at least one expected file beside it.
TEST(GoldenCoverageTest, EveryExampleGraphHasACase) {
  const std::vector<std::string> expected = ExpectedFiles({"graphs"});
  int graphs = 0;
  for (const char* folder : {"graphs", "graphs/tf"}) {
    DIR* dir = opendir(folder);
    ASSERT_NE(dir, nullptr) << folder;
    while (dirent* e = readdir(dir)) {
      const std::string f = e->d_name;
      const size_t dot = f.rfind('.');
      const std::string ext = dot == std::string::npos ? "" : f.substr(dot);
      if (ext != ".yaml" && ext != ".pbtxt" && ext != ".pb" && ext != ".meta") continue;
      const std::string stem = std::string(folder) + "/" + f.substr(0, dot);
      const bool covered = std::any_of(expected.begin(), expected.end(), [&](const std::string& x) {
        return x == stem + ".expected" || x.rfind(stem + ".", 0) == 0;
      });
      EXPECT_TRUE(covered) << folder << "/" << f << " has no expected file";
      ++graphs;
    }
    closedir(dir);
  }
  EXPECT_GT(graphs, 50);
}

// Every golden in testdata/golden is some case's: a golden that no test
// reads claims something nothing checks.
TEST(GoldenCoverageTest, EveryGoldenFileIsRead) {
  std::set<std::string> read;
  for (const std::vector<std::string>& f : tfrun::ReadCaseTable("testdata/golden/cases.txt", 3)) read.insert(f[0]);
  for (const std::vector<std::string>& f : tfrun::ReadCaseTable("testdata/golden/cluster_cases.txt", 5)) {
    read.insert(f[4]);
  }
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator("testdata/golden")) {
    const std::string file = e.path().filename().string();
    for (const std::string ext : {".out", ".err"}) {
      if (file.size() > ext.size() && file.compare(file.size() - ext.size(), ext.size(), ext) == 0) {
        EXPECT_TRUE(read.count(file.substr(0, file.size() - ext.size())))
            << "testdata/golden/" << file << " is read by no case of cases.txt or cluster_cases.txt";
      }
    }
  }
}

}  // namespace
