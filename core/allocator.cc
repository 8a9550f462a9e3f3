#include "core/allocator.h"

#include <cstdlib>

namespace tfrun {

void Allocator::RecordAllocate(size_t bytes) {
  size_t now = in_use_ += bytes;
  size_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

void* HostAllocator::Allocate(size_t bytes) {
  if (limit_ != 0 && bytes_in_use() + bytes > limit_) return nullptr;
  constexpr size_t kAlign = 64;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (p != nullptr) RecordAllocate(bytes);
  return p;
}

void HostAllocator::Deallocate(void* ptr, size_t bytes) {
  std::free(ptr);
  RecordDeallocate(bytes);
}

std::shared_ptr<Buffer> Buffer::Create(Allocator* allocator, size_t bytes) {
  void* data = allocator->Allocate(bytes);
  if (data == nullptr) return nullptr;
  return std::shared_ptr<Buffer>(new Buffer(allocator, data, bytes));
}

Buffer::~Buffer() { allocator_->Deallocate(data_, size_); }

Allocator* CpuAllocator() {
  static HostAllocator* allocator = new HostAllocator("cpu");
  return allocator;
}

}  // namespace tfrun
