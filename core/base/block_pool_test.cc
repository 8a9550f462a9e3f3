#include "core/base/block_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace tfrun {
namespace {

// Host memory stands in for cudaMalloc; the test sees every region.
struct FakeDevice {
  std::vector<size_t> obtained;
  int released = 0;
  BlockPool Pool(size_t limit, bool allow_growth) {
    return BlockPool(
        limit, allow_growth,
        [this](size_t bytes) {
          obtained.push_back(bytes);
          return std::malloc(bytes);
        },
        [this](void* p) {
          ++released;
          std::free(p);
        });
  }
};

constexpr size_t kMiB = size_t{1} << 20;

TEST(BlockPoolTest, WithoutGrowthTheFirstRequestReservesTheWholeLimit) {
  FakeDevice device;
  {
    BlockPool pool = device.Pool(64 * kMiB, false);
    EXPECT_EQ(pool.reserved_bytes(), 0u);  // nothing until first use, as the BFC allocator
    void* a = pool.Allocate(1);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(device.obtained, std::vector<size_t>{64 * kMiB});
    void* b = pool.Allocate(63 * kMiB);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 256);  // 256-byte units
    EXPECT_EQ(pool.Allocate(1 * kMiB), nullptr);                    // 256 bytes short
    pool.Deallocate(a);
    EXPECT_NE(pool.Allocate(200), nullptr);
    EXPECT_EQ(device.obtained.size(), 1u);
  }
  EXPECT_EQ(device.released, 1);
}

TEST(BlockPoolTest, FreedNeighboursCoalesceSoALargeRequestFitsAgain) {
  FakeDevice device;
  BlockPool pool = device.Pool(4 * kMiB, false);
  void* a = pool.Allocate(kMiB);
  void* b = pool.Allocate(kMiB);
  void* c = pool.Allocate(kMiB);
  void* d = pool.Allocate(kMiB);
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(pool.Allocate(2 * kMiB), nullptr);
  pool.Deallocate(b);
  pool.Deallocate(a);  // merges forward with b
  pool.Deallocate(c);  // merges backward with a+b
  void* big = pool.Allocate(3 * kMiB);
  EXPECT_EQ(big, a);
  pool.Deallocate(d);
  pool.Deallocate(big);
  EXPECT_EQ(pool.Allocate(4 * kMiB), a);  // all one block again
}

TEST(BlockPoolTest, GrowthAddsDoublingRegionsUpToTheLimitAndKeepsThem) {
  FakeDevice device;
  BlockPool pool = device.Pool(20 * kMiB, true);
  void* a = pool.Allocate(kMiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(device.obtained, std::vector<size_t>{2 * kMiB});
  ASSERT_NE(pool.Allocate(2 * kMiB), nullptr);  // does not fit the 1 MiB left: a 4 MiB region
  ASSERT_NE(pool.Allocate(5 * kMiB), nullptr);  // 8 MiB
  EXPECT_EQ(device.obtained, (std::vector<size_t>{2 * kMiB, 4 * kMiB, 8 * kMiB}));
  // 14 MiB reserved: the next region is what the limit has left, 6 MiB.
  ASSERT_NE(pool.Allocate(6 * kMiB), nullptr);
  EXPECT_EQ(pool.reserved_bytes(), 20 * kMiB);
  EXPECT_EQ(pool.Allocate(4 * kMiB), nullptr);  // the free pieces are 1, 2 and 3 MiB
  pool.Deallocate(a);
  EXPECT_EQ(pool.Allocate(kMiB), a);  // freed blocks are reused, regions kept
  EXPECT_EQ(device.obtained.size(), 4u);
}

TEST(BlockPoolTest, ARequestOverTheLimitOrAFailedRegionIsRefused) {
  FakeDevice device;
  BlockPool pool = device.Pool(kMiB, true);
  EXPECT_EQ(pool.Allocate(kMiB + 1), nullptr);
  EXPECT_TRUE(device.obtained.empty());
  BlockPool broken(kMiB, false, [](size_t) { return nullptr; }, [](void*) {});
  EXPECT_EQ(broken.Allocate(16), nullptr);
  EXPECT_EQ(broken.reserved_bytes(), 0u);
}

}  // namespace
}  // namespace tfrun
