#include "core/base/flat_string_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace tfrun {
namespace {

TEST(FlatStringMapTest, AgreesWithStdMapThroughGrowth) {
  FlatStringMap<int> flat;
  std::map<std::string, int> reference;
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; ++i) {
    const std::string key = "k" + std::to_string(rng() % 5000);
    flat[key] += 1;
    reference[key] += 1;
    const std::string probe = "k" + std::to_string(rng() % 6000);
    const int* found = flat.Find(probe);
    auto it = reference.find(probe);
    ASSERT_EQ(found != nullptr, it != reference.end()) << probe;
    if (found) ASSERT_EQ(*found, it->second);
  }
  EXPECT_EQ(flat.size(), reference.size());
}

TEST(FlatStringMapTest, EmptyAndReservedMapsAndEmptyKeys) {
  FlatStringMap<int> flat;
  EXPECT_EQ(flat.Find("x"), nullptr);
  flat.Reserve(1000);
  EXPECT_FALSE(flat.Contains(""));
  flat[""] = 7;
  EXPECT_EQ(*flat.Find(""), 7);
  EXPECT_EQ(flat.size(), 1u);
}

}  // namespace
}  // namespace tfrun
