// Host memory for tensors and kernel buffers, released with FreeHostBytes
// (or std::free, which never returns a block to the cache below):
// 64-byte aligned (Eigen's packets, cache lines); from 4 MiB on a 2 MiB
// boundary with transparent huge pages requested, as NumPy does, since a
// large MatMul walks its rows a page or more apart. A header of its own,
// with nothing inline, so the AVX2-built GEMM can include it without
// sharing template code with the generic build.
#pragma once

#include <cstddef>

namespace tfrun {

void* AllocateHostBytes(size_t bytes);
// Frees a block of `bytes` from AllocateHostBytes; one of 64 KiB and up may
// be kept, up to 1 GiB in all, for the next request of its size (in whole
// pages) or up to half as small again.
void FreeHostBytes(void* p, size_t bytes);

}  // namespace tfrun
