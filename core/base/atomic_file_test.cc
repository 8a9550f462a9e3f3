// Output files and bounded reads: what a signal or a never-ending input
// must not leave behind or cost.
#include "core/base/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace tfrun {
namespace {

namespace fs = std::filesystem;

bool HasTemporary(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(".tfrun-", 0) == 0) return true;
  }
  return false;
}

// In a child: stages a file (a large --out, say), then gets `sig` before
// the batch is committed.
void StageThenGet(int sig, const std::string& target) {
  RemoveTemporariesOnSignals();
  FileBatch batch;
  if (!batch.Stage(target, [](FILE* f) { return std::fputs(std::string(1 << 20, 'x').c_str(), f) >= 0; }).ok()) {
    std::exit(3);
  }
  raise(sig);
  std::exit(0);  // not reached: the signal ends the process
}

// A signal during a run that is writing its outputs leaves no .tfrun-XXXXXX
// temporary (they were hundreds of MB) and ends the process by itself.
TEST(AtomicFileDeathTest, ASignalRemovesTheTemporariesAndEndsTheProcess) {
  const std::string dir = testing::TempDir() + "/signals";
  fs::create_directories(dir);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    EXPECT_EXIT(StageThenGet(sig, dir + "/out.npy"), testing::KilledBySignal(sig), "");
    EXPECT_FALSE(HasTemporary(dir)) << strsignal(sig);
    EXPECT_FALSE(fs::exists(dir + "/out.npy"));
  }
}

TEST(AtomicFileTest, ReadsAreBounded) {
  std::string text;
  const std::string small = testing::TempDir() + "/small.txt";
  std::ofstream(small) << "hello\n";
  ASSERT_TRUE(ReadFileAtMost(small, 6, &text).ok());
  EXPECT_EQ(text, "hello\n");
  EXPECT_EQ(ReadFileAtMost(small, 5, &text).message(), small + ": the file has more than 5 bytes, the most tfrun "
                                                               "reads of it");
  EXPECT_EQ(ReadFileAtMost("/dev/zero", 1 << 20, &text).message(),
            "/dev/zero: the file has more than 1048576 bytes, the most tfrun reads of it");
  EXPECT_TRUE(text.empty());
  EXPECT_EQ(ReadFileAtMost(testing::TempDir(), 100, &text).message(), testing::TempDir() + ": is a directory, not a file");
  EXPECT_EQ(ReadFileAtMost(small + ".missing", 100, &text).kind(), ErrorKind::kBadInput);
}

}  // namespace
}  // namespace tfrun
