#include "core/base/host_memory.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace tfrun {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Freed blocks from kCachedMin up, kept for the next allocation of the same
// rounded size: a training step allocates the same activations every step,
// and handing them back to the kernel (glibc unmaps blocks from 128 KiB and
// trims its heaps) made it zero fresh pages each time: an eighth of the tower
// sample's step at batch 256, and CIFAR-10's trainer at batch 16 took 33
// instead of 24 ms a step (perf: page faults and clear_page). At most
// kCacheBytes are kept; TensorFlow's BFC allocator keeps all of them.
constexpr size_t kCacheBytes = size_t{1} << 30;
constexpr size_t kCachedMin = size_t{64} << 10;
constexpr size_t kPage = size_t{4} << 10;

struct BlockCache {
  std::mutex mu;
  std::multimap<size_t, void*> blocks;  // by rounded size
  size_t bytes = 0;
  // Blocks handed out for a smaller request than their size, by address:
  // their own size, which FreeHostBytes (told the request's) keeps them as.
  std::map<void*, size_t> larger;
};

// A request takes a cached block up to this much larger than it (the
// first step of a program allocates each size for the first time; a
// larger free block beats fresh pages the kernel must zero).
constexpr size_t LargestFit(size_t rounded) { return rounded + rounded / 2; }

BlockCache& Cache() {
  static auto* cache = new BlockCache();  // never destroyed: freed blocks may arrive during exit
  return *cache;
}

size_t Rounded(size_t bytes, size_t align) { return (bytes + align - 1) / align * align; }

// A cached block's size class: whole pages, or whole huge pages from
// 2 * kHugePage, where blocks are huge-page aligned.
bool Huge(size_t bytes) { return bytes >= 2 * kHugePage; }
size_t CachedSize(size_t bytes) { return Rounded(bytes, Huge(bytes) ? kHugePage : kPage); }

// Freed blocks of one 64-byte line kept for the next small tensor: a while
// loop makes and drops scalars at every node, and aligned_alloc's memalign
// path was a tenth of a scalar loop's iteration (perf). At most
// kSmallBlocks are kept, reachable from here until exit.
constexpr size_t kSmallBytes = 64;
constexpr size_t kSmallBlocks = 4096;

// Held for a push or a pop: a spin lock, as a mutex's lock and unlock cost
// a twentieth of the loop's iteration.
struct SmallBlockCache {
  std::atomic<bool> busy{false};
  std::vector<void*> blocks;

  void Lock() {
    while (busy.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  }
  void Unlock() { busy.store(false, std::memory_order_release); }
};

SmallBlockCache& SmallCache() {
  static auto* cache = [] {  // never destroyed, like Cache()
    auto* c = new SmallBlockCache();
    c->blocks.reserve(kSmallBlocks);  // no allocation under the lock
    return c;
  }();
  return *cache;
}

}  // namespace

void* AllocateHostBytes(size_t bytes) {
  if (bytes <= kSmallBytes) {
    SmallBlockCache& cache = SmallCache();
    cache.Lock();
    void* p = nullptr;
    if (!cache.blocks.empty()) {
      p = cache.blocks.back();
      cache.blocks.pop_back();
    }
    cache.Unlock();
    return p != nullptr ? p : std::aligned_alloc(kSmallBytes, kSmallBytes);
  }
  const bool huge = Huge(bytes);
  const size_t align = huge ? kHugePage : 64;
  const bool cached = bytes >= kCachedMin;
  const size_t rounded = cached ? CachedSize(bytes) : Rounded(bytes, align);
  if (cached) {
    BlockCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.blocks.lower_bound(rounded);
    if (it != cache.blocks.end() && it->first <= LargestFit(rounded)) {
      void* p = it->second;
      const size_t size = it->first;
      cache.blocks.erase(it);
      cache.bytes -= size;
      if (size != rounded) cache.larger[p] = size;
      return p;
    }
  }
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (p != nullptr && huge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure means small pages
  return p;
}

void FreeHostBytes(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes <= kSmallBytes) {
    SmallBlockCache& cache = SmallCache();
    cache.Lock();
    const bool kept = cache.blocks.size() < kSmallBlocks;
    if (kept) cache.blocks.push_back(p);
    cache.Unlock();
    if (kept) return;
  }
  if (bytes >= kCachedMin) {
    size_t rounded = CachedSize(bytes);
    BlockCache& cache = Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    if (auto larger = cache.larger.find(p); larger != cache.larger.end()) {
      rounded = larger->second;
      cache.larger.erase(larger);
    }
    if (cache.bytes + rounded <= kCacheBytes) {
      cache.blocks.emplace(rounded, p);
      cache.bytes += rounded;
      return;
    }
  }
  std::free(p);
}

}  // namespace tfrun
