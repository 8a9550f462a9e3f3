// Memory belongs to a device: each device owns an Allocator, and a Buffer
// remembers the allocator it came from so it is returned there.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "core/base/status.h"

namespace tfrun {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // TensorFlow's allocator name, as in its OOM text: "cpu", "GPU_0_bfc".
  virtual const std::string& name() const = 0;
  // Returns nullptr when the request does not fit.
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Deallocate(void* ptr, size_t bytes) = 0;

  // False for device memory the host cannot dereference (a real GPU's).
  virtual bool host_accessible() const { return true; }

  // Copies `bytes` between memory of this allocator and memory of `other`
  // (either may be the destination: `dst` is in `dst_allocator`'s memory,
  // one of the two being this). Overridden by allocators of memory the host
  // cannot dereference: the device that owns it knows how to copy it (a
  // real GPU's stream and staging). CopyBytes asks the destination first.
  virtual Status CopyDeviceBytes(Allocator* dst_allocator, void* dst, Allocator* src_allocator, const void* src,
                                 size_t bytes);

  // Appended to the OOM text when a configured budget, not the device,
  // refused the allocation ("" for device memory, as TensorFlow prints it).
  virtual std::string LimitHint() const { return ""; }
  // The most it hands out; -1 when unbounded or not yet known.
  virtual int64_t limit_bytes() const { return -1; }
  // Device memory it holds from the device (a real GPU's pool); -1 when it
  // keeps no pool.
  virtual int64_t reserved_bytes() const { return -1; }

  size_t bytes_in_use() const { return in_use_; }
  size_t peak_bytes_in_use() const { return peak_; }

 protected:
  void RecordAllocate(size_t bytes);
  void RecordDeallocate(size_t bytes) { in_use_ -= bytes; }

 private:
  std::atomic<size_t> in_use_{0};
  std::atomic<size_t> peak_{0};
};

// Host memory, 64-byte aligned (Eigen's packets and cache lines), optionally
// capped at `limit_bytes` (0 = no cap). `limit_flag` names the command-line
// flag that sets the cap, when one does.
class HostAllocator final : public Allocator {
 public:
  explicit HostAllocator(std::string name, size_t limit_bytes = 0, std::string limit_flag = "")
      : name_(std::move(name)), limit_(limit_bytes), limit_flag_(std::move(limit_flag)) {}
  const std::string& name() const override { return name_; }
  void* Allocate(size_t bytes) override;
  void Deallocate(void* ptr, size_t bytes) override;
  std::string LimitHint() const override;
  int64_t limit_bytes() const override { return limit_ == 0 ? -1 : static_cast<int64_t>(limit_); }
  void set_limit(size_t limit_bytes) { limit_ = limit_bytes; }

 private:
  std::string name_;
  size_t limit_;
  std::string limit_flag_;
};

// A block of memory from one allocator, freed when the last Tensor that
// shares it goes away.
class Buffer {
 public:
  static std::shared_ptr<Buffer> Create(Allocator* allocator, size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  Allocator* allocator() const { return allocator_; }

 private:
  Buffer(Allocator* allocator, void* data, size_t size)
      : allocator_(allocator), data_(data), size_(size) {}
  Allocator* allocator_;
  void* data_;
  size_t size_;
};

// Copies `bytes` from memory of `src_allocator` to memory of
// `dst_allocator`: memcpy between host memories, else the device
// allocator's CopyDeviceBytes (the destination's when it is device memory,
// else the source's).
Status CopyBytes(Allocator* dst_allocator, void* dst, Allocator* src_allocator, const void* src, size_t bytes);

// The process-wide host allocator used for CPU:0 and host-memory tensors,
// capped by the tensor-bytes budget (--max-tensor-bytes) so a huge tensor
// fails cleanly instead of being killed by the kernel's OOM killer.
Allocator* CpuAllocator();
void SetHostMemoryBudget(size_t bytes);

// The default budget: 16 GiB or three quarters of physical memory, if less.
size_t DefaultHostMemoryBudget();

}  // namespace tfrun
