#include "core/base/host_memory.h"

#include <sys/mman.h>

#include <cstdlib>

namespace tfrun {

void* AllocateHostBytes(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const bool huge = bytes >= 2 * kHugePage;
  const size_t align = huge ? kHugePage : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (p != nullptr && huge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure means small pages
  return p;
}

}  // namespace tfrun
