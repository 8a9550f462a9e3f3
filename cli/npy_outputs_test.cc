// --out's file names.
#include "cli/npy_outputs.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

namespace tfrun {
namespace {

// Two tensors never share a file: "a/b" and "a__b" did, and a NUL ended
// the name early ("n.npy\0evil" wrote n.npy).
TEST(NpyOutputsTest, FileNamesAreInjective) {
  EXPECT_EQ(NpyFileName("scope/w:1"), "scope%2Fw:1.npy");
  EXPECT_EQ(NpyFileName("a__b"), "a__b.npy");
  EXPECT_NE(NpyFileName("a/b"), NpyFileName("a__b"));
  EXPECT_EQ(NpyFileName(std::string("n.npy\0evil", 10)), "n.npy%00evil.npy");
  EXPECT_EQ(NpyFileName("100%"), "100%25.npy");
  EXPECT_EQ(NpyFileName("x>y"), "x%3Ey.npy");
  // Random names over every byte: distinct names, distinct files, never
  // a '/' in one.
  std::mt19937 gen(40);
  std::set<std::string> names, files;
  for (int i = 0; i < 20000; ++i) {
    std::string name(1 + gen() % 6, '\0');
    for (char& c : name) c = static_cast<char>(gen() % 8 == 0 ? gen() % 256 : "ab/_%2:."[gen() % 8]);
    if (!names.insert(name).second) continue;
    const std::string file = NpyFileName(name);
    EXPECT_EQ(file.find('/'), std::string::npos);
    EXPECT_EQ(file.find('\0'), std::string::npos);
    EXPECT_TRUE(files.insert(file).second) << "two names share " << file;
  }
}

}  // namespace
}  // namespace tfrun
