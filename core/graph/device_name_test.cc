#include "core/graph/device_name.h"

#include <gtest/gtest.h>

namespace tfrun {
namespace {

std::string Canonical(const std::string& s) {
  StatusOr<DeviceSpec> spec = DeviceSpec::Parse(s);
  EXPECT_TRUE(spec.ok()) << s << ": " << spec.status().message();
  return spec.ok() ? spec->ToString() : "";
}

TEST(DeviceNameTest, EverySpellingTheSpecLists) {
  EXPECT_EQ(Canonical("/cpu:0"), "/device:CPU:0");
  EXPECT_EQ(Canonical("/CPU:0"), "/device:CPU:0");
  EXPECT_EQ(Canonical("/gpu:1"), "/device:GPU:1");
  EXPECT_EQ(Canonical("/GPU:0"), "/device:GPU:0");
  EXPECT_EQ(Canonical("/device:GPU:1"), "/device:GPU:1");
  EXPECT_EQ(Canonical("/device:gpu:1"), "/device:GPU:1");  // Python upper-cases
  EXPECT_EQ(Canonical("GPU:0"), "/device:GPU:0");
  EXPECT_EQ(Canonical("/job:localhost/replica:0/task:0/device:GPU:1"),
            "/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_EQ(Canonical("/device:GPU:*"), "/device:GPU:*");
  EXPECT_EQ(Canonical("/job:localhost"), "/job:localhost");
  EXPECT_EQ(Canonical("/task:0/job:localhost"), "/job:localhost/task:0");  // any order
  EXPECT_EQ(Canonical("/"), "");
  EXPECT_EQ(Canonical("/job:*/gpu:*"), "/device:GPU:*");
}

TEST(DeviceNameTest, RejectionsQuoteTheString) {
  for (const char* bad : {"/gpu:x", "/job:1abc", "/foo:bar", "/gpu:0/cpu:0", "/device:GPU:0:1", "/replica:-1",
                          "gpu0"}) {
    StatusOr<DeviceSpec> spec = DeviceSpec::Parse(bad);
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_NE(spec.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << spec.status().message();
  }
}

TEST(DeviceNameTest, MergeIsFieldByFieldInnerWins) {
  DeviceSpec outer = DeviceSpec::Parse("/job:localhost/device:GPU:1").value();
  EXPECT_EQ(DeviceSpec::Parse("/cpu:0")->MergedOver(outer).ToString(), "/job:localhost/device:CPU:0");
  EXPECT_EQ(DeviceSpec::Parse("/replica:2")->MergedOver(outer).ToString(), "/job:localhost/replica:2/device:GPU:1");
  // A type without an index keeps the outer index, as DeviceSpec does.
  EXPECT_EQ(DeviceSpec::Parse("/device:CPU")->MergedOver(outer).ToString(), "/job:localhost/device:CPU:1");
}

TEST(DeviceNameTest, MatchingAndPrinting) {
  DeviceSpec gpu1 = DeviceSpec::Local("GPU", 1);
  EXPECT_EQ(gpu1.ToString(), "/job:localhost/replica:0/task:0/device:GPU:1");
  EXPECT_EQ(gpu1.ToLegacyString(), "/job:localhost/replica:0/task:0/gpu:1");
  EXPECT_TRUE(DeviceSpec::Parse("/gpu:1")->Matches(gpu1));
  EXPECT_TRUE(DeviceSpec::Parse("/device:GPU:*")->Matches(gpu1));
  EXPECT_TRUE(DeviceSpec::Parse("/job:localhost")->Matches(gpu1));
  EXPECT_TRUE(DeviceSpec().Matches(gpu1));
  EXPECT_FALSE(DeviceSpec::Parse("/gpu:0")->Matches(gpu1));
  EXPECT_FALSE(DeviceSpec::Parse("/cpu:1")->Matches(gpu1));
  EXPECT_FALSE(DeviceSpec::Parse("/job:worker")->Matches(gpu1));
}

}  // namespace
}  // namespace tfrun
