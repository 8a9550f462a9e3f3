// The last line of defence: exceptions nothing turned into a Status.
#include "cli/last_resort.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/base/atomic_file.h"

namespace tfrun {
namespace {

// Whether `dir` holds a FileBatch temporary (.tfrun-XXXXXX).
bool HasTemporary(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(".tfrun-", 0) == 0) return true;
  }
  return false;
}

TEST(LastResortTest, AnExceptionIsOneLineAndExitFour) {
  EXPECT_EQ(RunCatchingEverything([] { return 3; }), 3);
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCatchingEverything([]() -> int { throw std::bad_alloc(); }), 4);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "tfrun: error: out of memory: std::bad_alloc (an error tfrun did not anticipate; please report it)\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCatchingEverything([]() -> int { throw std::length_error("vector::_M_default_append\n\x1b[31m"); }), 4);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "tfrun: error: uncaught exception: vector::_M_default_append\\n\\x1b[31m (an error tfrun did not "
            "anticipate; please report it)\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCatchingEverything([]() -> int { throw 42; }), 4);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("not a std::exception"), std::string::npos);
}

// Unwinding to main removes what a FileBatch had staged.
TEST(LastResortTest, UnwindingRemovesTemporaries) {
  const std::string dir = testing::TempDir();
  const std::string target = dir + "/last_resort_out.txt";
  testing::internal::CaptureStderr();
  RunCatchingEverything([&]() -> int {
    FileBatch batch;
    EXPECT_TRUE(batch.Stage(target, [](FILE* f) { return std::fputs("x", f) >= 0; }).ok());
    throw std::runtime_error("boom");
  });
  testing::internal::GetCapturedStderr();
  EXPECT_NE(access(target.c_str(), F_OK), 0);
  EXPECT_FALSE(HasTemporary(dir));
}

// An exception leaving a thread ends the process through std::terminate:
// the same line, exit 4, and the temporaries removed.
TEST(LastResortDeathTest, AnExceptionLeavingAThreadIsOneLineAndExitFour) {
  const std::string target = testing::TempDir() + "/last_resort_thread.txt";
  EXPECT_EXIT(
      {
        std::set_terminate(TerminateWithOneLine);
        FileBatch batch;
        (void)batch.Stage(target, [](FILE* f) { return std::fputs("x", f) >= 0; });
        std::thread([] { throw std::runtime_error("from a worker"); }).join();
      },
      testing::ExitedWithCode(4),
      "^tfrun: error: uncaught exception: from a worker \\(an error tfrun did not anticipate; please report it\\)\n$");
  EXPECT_FALSE(HasTemporary(testing::TempDir()));
}

}  // namespace
}  // namespace tfrun
