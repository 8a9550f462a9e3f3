// `tfrun test` against folders a user's disk may hold: symlink loops,
// unreadable entries, an expected file of 20 GB.
#include "cli/test_command.h"

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

}  // namespace
}  // namespace tfrun
