// TensorFlow's tensor bundles (tensor_bundle.cc), the format of a V2
// checkpoint and of a SavedModel's variables/variables: `<prefix>.index`,
// an SSTable in LevelDB's table format (read by Debian's LevelDB) mapping
// each tensor's name to a BundleEntryProto (dtype, shape, shard, offset,
// size, masked CRC32C), its "" key a BundleHeaderProto; and data shards
// `<prefix>.data-NNNNN-of-MMMMM` holding the tensors' bytes (numbers raw
// and little-endian; strings as varint lengths, a masked CRC32C of them,
// then the bytes). A partitioned variable's entry lists its slices, each
// stored under its own key.
//
// Errors are TensorFlow's texts, prefixed by their class
// ("NotFoundError: Key v not found in checkpoint"), as RestoreV2 reports
// them; a corrupt, truncated or lying bundle is an error, never a read
// outside a buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/graph_def/tf_graph.pb.h"

namespace tfrun {

// crc32c::Value / Mask / Unmask (the Castagnoli CRC, as LevelDB and
// TensorFlow store it).
uint32_t Crc32c(const void* data, size_t size, uint32_t crc = 0);
uint32_t MaskCrc32c(uint32_t crc);
uint32_t UnmaskCrc32c(uint32_t masked);

// Where each element of a slice (`part` elements from `start`, row-major)
// sits in a tensor of shape `whole`: its flat indices, in the slice's order.
std::vector<int64_t> SliceOffsets(const Shape& whole, const std::vector<int64_t>& start, const Shape& part);

class TensorBundleReader {
 public:
  // Reads bytes [offset, offset + size) of data shard `shard` into `out`,
  // or fails with TensorFlow's text (a missing file, a short read).
  using ShardReader = std::function<Status(int shard, int64_t offset, int64_t size, std::string* out)>;

  // The bundle at `prefix`: its index read whole (at most `max_index_bytes`),
  // its shards read as tensors are.
  static StatusOr<TensorBundleReader> Open(const std::string& prefix, int64_t max_index_bytes = int64_t{1} << 30);
  // From an index's bytes and a reader of shard bytes (tests, fuzzing).
  static StatusOr<TensorBundleReader> FromIndex(std::string index, std::string prefix, ShardReader read_shard);

  // The entry of tensor `key`, or null.
  const tfproto::BundleEntryProto* Find(std::string_view key) const;
  // Every tensor's name, in the index's order (slices' keys left out).
  std::vector<std::string> Names() const;

  // Tensor `key` whole, in host memory, checked against `expected` (its
  // dtype) as RestoreV2 checks it; a partitioned one assembled from its
  // slices.
  StatusOr<Tensor> Read(const std::string& key, DType expected) const;

 private:
  TensorBundleReader() = default;
  StatusOr<Tensor> ReadEntry(const tfproto::BundleEntryProto& entry, DType dtype, const Shape& shape) const;
  StatusOr<Tensor> ReadSliced(const std::string& key, const tfproto::BundleEntryProto& entry, DType dtype,
                              const Shape& shape) const;

  std::string prefix_;
  int num_shards_ = 1;
  // Every key of the index, as stored (slices' keys are OrderedCode).
  std::map<std::string, tfproto::BundleEntryProto> entries_;
  ShardReader read_shard_;
};

}  // namespace tfrun
