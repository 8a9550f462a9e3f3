#include "core/base/allocator.h"

#include "core/base/host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tfrun {

void Allocator::RecordAllocate(size_t bytes) {
  size_t now = in_use_ += bytes;
  size_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

void* HostAllocator::Allocate(size_t bytes) {
  if (limit_ != 0 && bytes_in_use() + bytes > limit_) return nullptr;
  void* p = AllocateHostBytes(bytes);
  if (p != nullptr) RecordAllocate(bytes);
  return p;
}

void HostAllocator::Deallocate(void* ptr, size_t bytes) {
  FreeHostBytes(ptr, bytes);
  RecordDeallocate(bytes);
}

std::shared_ptr<Buffer> Buffer::Create(Allocator* allocator, size_t bytes) {
  void* data = allocator->Allocate(bytes);
  if (data == nullptr) return nullptr;
  return std::shared_ptr<Buffer>(new Buffer(allocator, data, bytes));
}

Buffer::~Buffer() { allocator_->Deallocate(data_, size_); }

std::string HostAllocator::LimitHint() const {
  if (limit_flag_.empty() || limit_ == 0) return "";
  return " (over tfrun's limit of " + std::to_string(limit_) + " bytes of tensors, " + limit_flag_ + ")";
}

Status Allocator::CopyDeviceBytes(Allocator* dst_allocator, void*, Allocator* src_allocator, const void*, size_t) {
  return RuntimeError("no copy is known from " + src_allocator->name() + " to " + dst_allocator->name());
}

Status CopyBytes(Allocator* dst_allocator, void* dst, Allocator* src_allocator, const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  if (dst_allocator->host_accessible() && src_allocator->host_accessible()) {
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  Allocator* device = dst_allocator->host_accessible() ? src_allocator : dst_allocator;
  return device->CopyDeviceBytes(dst_allocator, dst, src_allocator, src, bytes);
}

namespace {
HostAllocator* HostAllocatorInstance() {
  static HostAllocator* allocator = new HostAllocator("cpu", DefaultHostMemoryBudget(), "--max-tensor-bytes");
  return allocator;
}
}  // namespace

Allocator* CpuAllocator() { return HostAllocatorInstance(); }

void SetHostMemoryBudget(size_t bytes) { HostAllocatorInstance()->set_limit(bytes); }

size_t DefaultHostMemoryBudget() {
  const size_t kCap = size_t{16} << 30;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kCap;
  return std::min(kCap, static_cast<size_t>(pages) * static_cast<size_t>(page_size) / 4 * 3);
}

}  // namespace tfrun
