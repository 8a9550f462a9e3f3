// Host staging buffers for copies to and between GPUs, reused across
// copies: a buffer is lent for one copy and is lent again only when the
// copy's completion marker (a CUDA event recorded after it) says the device
// is done with it. The host source of a copy can then go away at once, and
// GPU-to-GPU copies without peer access cost no allocation and no host
// wait. Generic over the memory and the marker, so the bookkeeping is
// tested without a GPU (staging_pool_test.cc).
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "core/base/status.h"

namespace tfrun {

struct StagingHooks {
  std::function<void*(size_t bytes)> allocate;  // pinned host memory; null on failure
  std::function<void(void* data)> free;
  std::function<void*()> make_marker;           // an event; null on failure
  std::function<bool(void* marker)> marker_done;
  std::function<void(void* marker)> destroy_marker;
};

class StagingPool {
 public:
  explicit StagingPool(StagingHooks hooks) : hooks_(std::move(hooks)) {}
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  struct Lease {
    void* data = nullptr;
    void* marker = nullptr;  // record it after the copies that use `data`, then Return
    int slot = -1;
  };
  // A buffer of at least `bytes` that no queued copy still uses.
  StatusOr<Lease> Borrow(size_t bytes);
  // The lease's copies are queued and its marker recorded after them.
  void Return(const Lease& lease);

  size_t buffers() const;       // for tests
  size_t pinned_bytes() const;  // for tests

 private:
  struct Slot {
    void* data = nullptr;
    size_t bytes = 0;
    void* marker = nullptr;
    bool lent = false;
    bool pending = false;  // returned; free once its marker is done
  };
  StagingHooks hooks_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
};

}  // namespace tfrun
