// Sub-allocation of device memory in the manner of TensorFlow's BFC
// allocator, apart from where the memory comes from, so that its rules run
// in CI without a GPU: regions are obtained from a callback (cudaMalloc on a
// real GPU), handed out first-fit in 256-byte units, and coalesced with
// free neighbours when returned. Without allow_growth the first request
// reserves the whole limit as one region (as TensorFlow does); with it,
// regions are added as needed, each at least double the last, up to the
// limit, and never returned until the pool goes away. Not thread-safe: the
// owner locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace tfrun {

class BlockPool {
 public:
  // Returns `bytes` of fresh memory, or nullptr; `release` gives it back.
  using Obtain = std::function<void*(size_t bytes)>;
  using Release = std::function<void(void* region)>;

  BlockPool(size_t limit, bool allow_growth, Obtain obtain, Release release);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  static constexpr size_t kUnit = 256;
  static constexpr size_t kFirstGrowthRegion = size_t{2} << 20;

  // nullptr when the request does not fit in the limit (or a region could
  // not be obtained).
  void* Allocate(size_t bytes);
  void Deallocate(void* ptr);

  size_t reserved_bytes() const { return reserved_; }
  size_t region_count() const { return regions_.size(); }

 private:
  struct Region {
    char* base;
    size_t size;
    std::map<size_t, size_t> free;  // offset -> size, no two adjacent
  };
  void* Carve(Region& region, size_t bytes);

  size_t limit_;
  bool allow_growth_;
  Obtain obtain_;
  Release release_;
  size_t reserved_ = 0;
  std::vector<Region> regions_;
  std::map<char*, std::pair<size_t, size_t>> live_;  // ptr -> (region index, size)
};

}  // namespace tfrun
