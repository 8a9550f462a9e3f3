#include "core/base/block_pool.h"

#include <algorithm>
#include <utility>

namespace tfrun {

BlockPool::BlockPool(size_t limit, bool allow_growth, Obtain obtain, Release release)
    : limit_(limit), allow_growth_(allow_growth), obtain_(std::move(obtain)), release_(std::move(release)) {}

BlockPool::~BlockPool() {
  for (Region& r : regions_) release_(r.base);
}

void* BlockPool::Carve(Region& region, size_t bytes) {
  for (auto it = region.free.begin(); it != region.free.end(); ++it) {
    if (it->second < bytes) continue;
    const size_t offset = it->first, size = it->second;
    region.free.erase(it);
    if (size > bytes) region.free[offset + bytes] = size - bytes;
    return region.base + offset;
  }
  return nullptr;
}

void* BlockPool::Allocate(size_t bytes) {
  const size_t rounded = std::max(kUnit, (bytes + kUnit - 1) / kUnit * kUnit);
  if (rounded > limit_) return nullptr;
  for (size_t i = 0; i < regions_.size(); ++i) {
    if (char* p = static_cast<char*>(Carve(regions_[i], rounded))) {
      live_[p] = {i, rounded};
      return p;
    }
  }
  // No free block fits: a new region, if the limit has room for it.
  size_t size = limit_;
  if (allow_growth_) {
    const size_t doubled = regions_.empty() ? kFirstGrowthRegion : 2 * regions_.back().size;
    size = std::min(std::max(rounded, doubled), limit_ - reserved_);
  } else if (!regions_.empty()) {
    return nullptr;  // the one region is the whole limit
  }
  if (size < rounded || reserved_ + size > limit_) return nullptr;
  char* base = static_cast<char*>(obtain_(size));
  if (base == nullptr) return nullptr;
  reserved_ += size;
  regions_.push_back({base, size, {{0, size}}});
  char* p = static_cast<char*>(Carve(regions_.back(), rounded));
  live_[p] = {regions_.size() - 1, rounded};
  return p;
}

void BlockPool::Deallocate(void* ptr) {
  auto live = live_.find(static_cast<char*>(ptr));
  if (live == live_.end()) return;
  auto [index, size] = live->second;
  live_.erase(live);
  Region& region = regions_[index];
  const size_t offset = static_cast<size_t>(static_cast<char*>(ptr) - region.base);
  size_t merged = size;
  auto next = region.free.find(offset + size);  // coalesce with the free block after
  if (next != region.free.end()) {
    merged += next->second;
    region.free.erase(next);
  }
  auto prev = region.free.lower_bound(offset);  // and the one before
  if (prev != region.free.begin() && std::prev(prev)->first + std::prev(prev)->second == offset) {
    std::prev(prev)->second += merged;
  } else {
    region.free[offset] = merged;
  }
}

}  // namespace tfrun
