// `tfrun test` against folders a user's disk may hold: symlink loops,
// unreadable entries, an expected file of 20 GB.
#include "cli/test_command.h"
#include "core/base/parallel.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tfrun {
namespace {

namespace fs = std::filesystem;

// A fresh folder holding graphs/matmul.yaml.
std::string FolderWithMatmul(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file("graphs/matmul.yaml", dir / "matmul.yaml");
  return dir.string();
}

StatusOr<int> RunIn(const std::string& dir, std::string* out) {
  TestOptions options;
  options.paths = {dir};
  options.jobs = 1;
  options.tfrun_path = fs::absolute("cli/tfrun").string();
  testing::internal::CaptureStdout();
  StatusOr<int> failed = RunTestCommand(options);
  *out = testing::internal::GetCapturedStdout();
  return failed;
}

// Symlinks that loop, to themselves or through a folder, are walked past
// (each call with an error code), not thrown out of as filesystem_error.
TEST(TestCommandTest, SymlinkLoopsAreWalkedPast) {
  const std::string dir = FolderWithMatmul("loops");
  std::ofstream(dir + "/matmul.expected") << "# args:\n[[22. 28.]\n [49. 64.]]\n";
  ASSERT_EQ(symlink("self", (dir + "/self").c_str()), 0);
  ASSERT_EQ(symlink("b", (dir + "/a").c_str()), 0);
  ASSERT_EQ(symlink("a", (dir + "/b").c_str()), 0);
  fs::create_directories(dir + "/sub");
  ASSERT_EQ(symlink("..", (dir + "/sub/up").c_str()), 0);
  std::string out;
  StatusOr<int> failed = RunIn(dir, &out);
  ASSERT_TRUE(failed.ok()) << failed.status().message();
  EXPECT_EQ(*failed, 0) << out;
  EXPECT_NE(out.find("1 passed, 0 failed"), std::string::npos) << out;
}

// An expected file larger than tfrun test reads (64 MiB) is a failing case
// that says so; it was read whole (20 GB of memory).
TEST(TestCommandTest, AHugeExpectedFileIsAFailingCaseNotItsBytes) {
  const std::string dir = FolderWithMatmul("huge");
  const std::string expected = dir + "/matmul.expected";
  std::ofstream(expected) << "# args:\n";
  ASSERT_EQ(truncate(expected.c_str(), int64_t{20} << 30), 0);
  std::string out;
  StatusOr<int> failed = RunIn(dir, &out);
  ASSERT_TRUE(failed.ok()) << failed.status().message();
  EXPECT_EQ(*failed, 1);
  EXPECT_NE(out.find("matmul.expected: the file has more than 67108864 bytes, the most tfrun reads of it"),
            std::string::npos)
      << out;
}

// `# processor: MAKER`: checked on that maker's processors, skipped with
// its reason on others (TensorFlow's estimates differ between makers); a
// maker left out is a malformed file.
TEST(TestCommandTest, AnotherProcessorMakersCaseIsSkipped) {
  const std::string dir = FolderWithMatmul("processor");
  const std::string here = ProcessorVendor();
  ASSERT_FALSE(here.empty());
  std::ofstream(dir + "/matmul.here.expected") << "# args:\n# processor: " << here << "\n[[22. 28.]\n [49. 64.]]\n";
  std::ofstream(dir + "/matmul.other.expected") << "# args:\n# processor: OtherMaker\n[[0. 0.]\n [0. 0.]]\n";
  std::string out;
  StatusOr<int> failed = RunIn(dir, &out);
  ASSERT_TRUE(failed.ok()) << failed.status().message();
  EXPECT_EQ(*failed, 0) << out;
  EXPECT_NE(out.find("SKIP " + dir + "/matmul.other (expected output for processor maker OtherMaker; this one is " +
                     here + ")"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 passed, 0 failed, 1 skipped"), std::string::npos) << out;

  std::ofstream(dir + "/matmul.other.expected") << "# args:\n# processor:\n[[0. 0.]\n [0. 0.]]\n";
  failed = RunIn(dir, &out);
  ASSERT_TRUE(failed.ok()) << failed.status().message();
  EXPECT_EQ(*failed, 1) << out;
  EXPECT_NE(out.find("'# processor:' needs a processor maker"), std::string::npos) << out;
}

}  // namespace
}  // namespace tfrun
