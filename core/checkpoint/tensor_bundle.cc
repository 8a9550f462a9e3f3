#include "core/checkpoint/tensor_bundle.h"

#include <fmt/format.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <snappy.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

constexpr uint32_t kMaskDelta = 0xa282ead8u;

const std::array<uint32_t, 256>& Crc32cTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

// A whole file held in memory, as LevelDB reads a table.
class StringFile final : public leveldb::RandomAccessFile {
 public:
  explicit StringFile(const std::string& bytes) : bytes_(bytes) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result, char* scratch) const override {
    (void)scratch;
    if (offset > bytes_.size()) return leveldb::Status::InvalidArgument("read past the end of the index");
    *result = leveldb::Slice(bytes_.data() + offset, std::min<size_t>(n, bytes_.size() - offset));
    return leveldb::Status::OK();
  }

 private:
  const std::string& bytes_;
};

// LevelDB's "Corruption: block checksum mismatch" as TensorFlow words it.
std::string LevelDbMessage(const leveldb::Status& s) {
  std::string text = s.ToString();
  for (const char* prefix : {"Corruption: ", "Invalid argument: ", "IO error: ", "NotFound: "}) {
    if (text.rfind(prefix, 0) == 0) return text.substr(std::strlen(prefix));
  }
  return text;
}

std::string TfTypeName(tfproto::DataType type) {
  const std::string& name = tfproto::DataType_Name(type);
  return name.size() > 3 ? name.substr(3) : name;
}

// OrderedCode's WriteString: 0x00 -> 0x00 0xff, 0xff -> 0xff 0x00, then 0x00 0x01.
std::string OrderedCodeString(std::string_view s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\0') out += '\xff';
    if (c == '\xff') out += '\0';
  }
  out += '\0';
  out += '\x01';
  return out;
}

// A varint64 of `bytes` at `*at`, below `end`, moving `*at` past it; false
// when it runs past.
bool ReadVarint64(const std::string& bytes, size_t* at, size_t end, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift <= 63 && *at < end; shift += 7) {
    const uint8_t b = static_cast<uint8_t>(bytes[(*at)++]);
    *value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

Status DataLoss(std::string message) { return RuntimeError("DataLossError: " + std::move(message)); }

// LevelDB trusts a table's block handles: it allocates what a handle says
// (and what a compressed block says it expands to) before it reads. So
// every handle the footer and the index block hold is checked against the
// index's size first (a damaged handle once claimed 11 EB).
Status CheckTableBlocks(const std::string& index) {
  constexpr size_t kFooter = 48, kTrailer = 5;
  constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
  if (index.size() < kFooter) return Status::Ok();  // LevelDB says "too short"
  const size_t footer = index.size() - kFooter;
  uint64_t magic = 0;
  std::memcpy(&magic, index.data() + index.size() - 8, 8);
  if (magic != kMagic) return Status::Ok();  // LevelDB says "bad magic number"
  const Status bad = DataLoss("the index's table has a block outside the file");
  // A block [offset, offset + size) and its trailer, inside the file, and
  // if compressed, expanding to a size a table could hold.
  auto check_block = [&](uint64_t offset, uint64_t size) -> bool {
    if (offset > index.size() || size > index.size() || offset + size + kTrailer > index.size()) return false;
    if (index[static_cast<size_t>(offset + size)] == 1) {  // snappy
      size_t expanded = 0;
      if (!snappy::GetUncompressedLength(index.data() + offset, static_cast<size_t>(size), &expanded)) return false;
      if (expanded > 64 * size + 64) return false;
    }
    return true;
  };
  size_t at = footer;
  uint64_t meta_offset, meta_size, index_offset, index_size;
  if (!ReadVarint64(index, &at, index.size(), &meta_offset) || !ReadVarint64(index, &at, index.size(), &meta_size) ||
      !ReadVarint64(index, &at, index.size(), &index_offset) || !ReadVarint64(index, &at, index.size(), &index_size) ||
      !check_block(meta_offset, meta_size) || !check_block(index_offset, index_size)) {
    return bad;
  }
  // The index block's entries: shared, non-shared and value lengths, the
  // key's new bytes, then a data block's handle.
  std::string block = index.substr(static_cast<size_t>(index_offset), static_cast<size_t>(index_size));
  if (index[static_cast<size_t>(index_offset + index_size)] == 1) {
    std::string expanded;
    if (!snappy::Uncompress(block.data(), block.size(), &expanded)) return bad;
    block = std::move(expanded);
  }
  if (block.size() < 4) return bad;
  uint32_t restarts = 0;
  std::memcpy(&restarts, block.data() + block.size() - 4, 4);
  if (restarts > (block.size() - 4) / 4) return bad;
  const size_t end = block.size() - 4 - 4 * static_cast<size_t>(restarts);
  for (size_t p = 0; p < end;) {
    uint64_t shared, non_shared, value_size, offset, size;
    if (!ReadVarint64(block, &p, end, &shared) || !ReadVarint64(block, &p, end, &non_shared) ||
        !ReadVarint64(block, &p, end, &value_size) || non_shared > end - p || value_size > end - p - non_shared) {
      return bad;
    }
    p += static_cast<size_t>(non_shared);
    size_t value = p;
    p += static_cast<size_t>(value_size);
    if (!ReadVarint64(block, &value, p, &offset) || !ReadVarint64(block, &value, p, &size) || !check_block(offset, size)) {
      return bad;
    }
  }
  return Status::Ok();
}

}  // namespace

uint32_t Crc32c(const void* data, size_t size, uint32_t crc) {
  const auto& table = Crc32cTable();
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

std::vector<int64_t> SliceOffsets(const Shape& whole, const std::vector<int64_t>& start, const Shape& part) {
  const int rank = static_cast<int>(whole.size());
  std::vector<int64_t> flat(static_cast<size_t>(NumElements(part).value_or(0)));
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t& f : flat) {
    f = 0;
    for (int d = 0; d < rank; ++d) f = f * whole[d] + start[d] + index[d];
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < part[d]) break;
      index[d] = 0;
    }
  }
  return flat;
}

StatusOr<TensorBundleReader> TensorBundleReader::Open(const std::string& prefix, int64_t max_index_bytes) {
  const std::string index_path = prefix + ".index";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(index_path, ec)) {
    return RuntimeError(fmt::format(
        "NotFoundError: Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {}", prefix));
  }
  const uintmax_t size = std::filesystem::file_size(index_path, ec);
  if (ec || size > static_cast<uintmax_t>(max_index_bytes)) {
    return RuntimeError(fmt::format("ResourceExhaustedError: {} has {} bytes; tfrun reads an index of at most {}",
                                    index_path, size, max_index_bytes));
  }
  std::ifstream in(index_path, std::ios::binary);
  std::string index(static_cast<size_t>(size), '\0');
  if (!in.read(index.data(), static_cast<std::streamsize>(size))) {
    return RuntimeError(fmt::format("NotFoundError: {}; cannot read the file", index_path));
  }
  TFRUN_ASSIGN_OR_RETURN(TensorBundleReader reader, FromIndex(std::move(index), prefix, nullptr));
  // The shards' names carry their count, the header's.
  const int shards = reader.num_shards_;
  reader.read_shard_ = [prefix, shards](int shard, int64_t offset, int64_t bytes, std::string* out) -> Status {
    const std::string path = fmt::format("{}.data-{:05d}-of-{:05d}", prefix, shard, shards);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      return RuntimeError(fmt::format("NotFoundError: {}; No such file or directory", path));
    }
    const uintmax_t file_bytes = std::filesystem::file_size(path, ec);
    if (ec || offset < 0 || bytes < 0 || static_cast<uintmax_t>(offset) + static_cast<uintmax_t>(bytes) > file_bytes) {
      return RuntimeError("OutOfRangeError: Read less bytes than requested");
    }
    std::ifstream in(path, std::ios::binary);
    out->assign(static_cast<size_t>(bytes), '\0');
    in.seekg(offset);
    if (!in.read(out->data(), bytes)) return RuntimeError("OutOfRangeError: Read less bytes than requested");
    return Status::Ok();
  };
  return reader;
}

StatusOr<TensorBundleReader> TensorBundleReader::FromIndex(std::string index, std::string prefix,
                                                           ShardReader read_shard) {
  TensorBundleReader reader;
  reader.prefix_ = std::move(prefix);
  reader.read_shard_ = std::move(read_shard);
  TFRUN_RETURN_IF_ERROR(CheckTableBlocks(index));
  StringFile file(index);
  leveldb::Options options;
  options.paranoid_checks = true;
  leveldb::Table* opened = nullptr;
  leveldb::Status s = leveldb::Table::Open(options, &file, index.size(), &opened);
  if (!s.ok()) return DataLoss(LevelDbMessage(s));
  std::unique_ptr<leveldb::Table> table(opened);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  bool header = false;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key = it->key().ToString();
    if (key.empty()) {
      tfproto::BundleHeaderProto h;
      if (!h.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
        return DataLoss(fmt::format("{}.index: the header entry does not parse", reader.prefix_));
      }
      if (h.endianness() != tfproto::BundleHeaderProto::LITTLE) {
        return RuntimeError("UnimplementedError: a big-endian tensor bundle: tfrun reads little-endian ones");
      }
      if (h.num_shards() < 1) return DataLoss(fmt::format("{}.index: {} shards", reader.prefix_, h.num_shards()));
      reader.num_shards_ = h.num_shards();
      header = true;
      continue;
    }
    tfproto::BundleEntryProto entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return DataLoss(fmt::format("{}.index: the entry of '{}' does not parse", reader.prefix_, key));
    }
    reader.entries_.emplace(key, std::move(entry));
  }
  if (!it->status().ok()) {
    return DataLoss(fmt::format("Unable to read file ({}.index). Perhaps the file is corrupt or was produced by a "
                                "newer version of TensorFlow with format changes (failed to seek to header entry): {}",
                                reader.prefix_, LevelDbMessage(it->status())));
  }
  if (!header) return DataLoss(fmt::format("{}.index: no header entry", reader.prefix_));
  return reader;
}

const tfproto::BundleEntryProto* TensorBundleReader::Find(std::string_view key) const {
  auto it = entries_.find(std::string(key));
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> TensorBundleReader::Names() const {
  std::vector<std::string> names;
  for (const auto& [key, entry] : entries_) {
    if (!key.empty() && key[0] != '\0') names.push_back(key);
  }
  return names;
}

StatusOr<Tensor> TensorBundleReader::Read(const std::string& key, DType expected) const {
  const tfproto::BundleEntryProto* entry = Find(key);
  if (entry == nullptr || key.empty() || key[0] == '\0') {
    return RuntimeError(fmt::format("NotFoundError: Key {} not found in checkpoint", key));
  }
  const std::optional<DType> dtype = DTypeOfTableType(TfTypeName(entry->dtype()));
  if (!dtype) {
    return RuntimeError(fmt::format("UnimplementedError: tensor_name = {}: tfrun does not read {} tensors from a "
                                    "checkpoint",
                                    key, TfTypeName(entry->dtype())));
  }
  if (*dtype != expected) {
    return RuntimeError(fmt::format("InvalidArgumentError: tensor_name = {}; expected dtype {} does not equal "
                                    "original dtype {}",
                                    key, Info(expected).tf_name, Info(*dtype).tf_name));
  }
  Shape shape;
  for (const auto& d : entry->shape().dim()) {
    if (d.size() < 0) return DataLoss(fmt::format("tensor_name = {}: a dimension of {}", key, d.size()));
    shape.push_back(d.size());
  }
  if (shape.size() > static_cast<size_t>(kMaxRank) || !NumElements(shape)) {
    return DataLoss(fmt::format("tensor_name = {}: shape {} is not a tensor's", key, ShapeDebugString(shape)));
  }
  if (entry->slices_size() > 0) return ReadSliced(key, *entry, *dtype, shape);
  return ReadEntry(*entry, *dtype, shape);
}

StatusOr<Tensor> TensorBundleReader::ReadEntry(const tfproto::BundleEntryProto& entry, DType dtype,
                                               const Shape& shape) const {
  const int64_t n = *NumElements(shape);
  if (entry.shard_id() < 0 || entry.shard_id() >= num_shards_) {
    return DataLoss(fmt::format("{}: shard {} of {}", prefix_, entry.shard_id(), num_shards_));
  }
  const size_t element = Info(dtype).size;
  if (dtype != DType::kString && (n > INT64_MAX / static_cast<int64_t>(element) ||
                                  entry.size() != n * static_cast<int64_t>(element))) {
    return DataLoss(fmt::format("{}: a tensor of {} elements of {} bytes stored in {} bytes", prefix_, n, element,
                                entry.size()));
  }
  std::string bytes;
  TFRUN_RETURN_IF_ERROR(read_shard_(entry.shard_id(), entry.offset(), entry.size(), &bytes));
  if (static_cast<int64_t>(bytes.size()) != entry.size()) return RuntimeError("OutOfRangeError: Read less bytes than requested");
  const uint32_t stored = UnmaskCrc32c(entry.crc32c());
  auto checksum_error = [&](uint32_t computed) {
    return DataLoss(fmt::format("TensorBundle at {} shard {} ({} bytes): Checksum does not match: stored {} vs. "
                                "calculated on the restored bytes {}",
                                prefix_, entry.shard_id(), entry.size(), stored, computed));
  };
  if (dtype != DType::kString) {
    const uint32_t computed = Crc32c(bytes.data(), bytes.size());
    if (stored != computed) return checksum_error(computed);
    TFRUN_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateHost(dtype, shape));
    if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());
    return t;
  }
  // [varint64 length] x n, the masked CRC32C of the lengths (each summed
  // as 4 little-endian bytes, 8 past 2^32), then the bytes; the entry's
  // CRC32C goes on over that checksum and the bytes (WriteStringTensor).
  std::vector<uint64_t> lengths(static_cast<size_t>(std::min<int64_t>(n, static_cast<int64_t>(bytes.size()))));
  size_t at = 0;
  uint32_t crc = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t length = 0;
    if (static_cast<size_t>(i) >= lengths.size() || !ReadVarint64(bytes, &at, bytes.size(), &length)) {
      return DataLoss(fmt::format("{}: a string tensor's lengths end early", prefix_));
    }
    lengths[static_cast<size_t>(i)] = length;
    if (length <= UINT32_MAX) {
      const uint32_t length32 = static_cast<uint32_t>(length);
      crc = Crc32c(&length32, sizeof(length32), crc);
    } else {
      crc = Crc32c(&length, sizeof(length), crc);
    }
  }
  if (at + 4 > bytes.size()) return DataLoss(fmt::format("{}: a string tensor's lengths end early", prefix_));
  uint32_t masked = 0;
  std::memcpy(&masked, bytes.data() + at, 4);
  if (UnmaskCrc32c(masked) != crc) {
    return DataLoss(fmt::format("{}: the checksum of a string tensor's lengths does not match", prefix_));
  }
  crc = Crc32c(bytes.data() + at, 4, crc);
  at += 4;
  std::vector<std::string> elements;
  elements.reserve(lengths.size());
  for (uint64_t length : lengths) {
    if (length > bytes.size() - at) return DataLoss(fmt::format("{}: a string tensor's bytes end early", prefix_));
    elements.emplace_back(bytes.data() + at, static_cast<size_t>(length));
    crc = Crc32c(bytes.data() + at, static_cast<size_t>(length), crc);
    at += static_cast<size_t>(length);
  }
  if (crc != stored) return checksum_error(crc);
  return Tensor::FromStrings(shape, elements);
}

StatusOr<Tensor> TensorBundleReader::ReadSliced(const std::string& key, const tfproto::BundleEntryProto& entry,
                                                DType dtype, const Shape& shape) const {
  // The slices' keys (EncodeTensorNameSlice: 0, the name, the rank, then
  // each dimension's start and length) sort as their extents do: paired
  // in that order with the entry's slices sorted the same way.
  const std::string prefix = std::string(1, '\0') + OrderedCodeString(key);
  std::vector<const tfproto::BundleEntryProto*> stored;
  for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    stored.push_back(&it->second);
  }
  const int rank = static_cast<int>(shape.size());
  std::vector<std::vector<int64_t>> extents;  // per slice: start, length (-1: the whole dimension) per dim
  for (const tfproto::TensorSliceProto& slice : entry.slices()) {
    if (slice.extent_size() != rank) return DataLoss(fmt::format("tensor_name = {}: a slice of another rank", key));
    std::vector<int64_t> e;
    for (const auto& extent : slice.extent()) {
      e.push_back(extent.start());
      e.push_back(extent.has_length_case() == tfproto::TensorSliceProto::Extent::kLength ? extent.length() : -1);
    }
    extents.push_back(std::move(e));
  }
  if (stored.size() != extents.size()) {
    return DataLoss(fmt::format("tensor_name = {}: {} slices listed, {} stored", key, extents.size(), stored.size()));
  }
  std::vector<size_t> order(extents.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return extents[a] < extents[b]; });
  const int64_t n = *NumElements(shape);
  const size_t element = Info(dtype).size;
  Tensor whole;  // numbers: filled slice by slice; strings gathered, then packed
  std::vector<std::string> strings;
  if (dtype == DType::kString) {
    strings.resize(static_cast<size_t>(n));
  } else {
    TFRUN_ASSIGN_OR_RETURN(whole, Tensor::AllocateHost(dtype, shape));
    std::memset(whole.raw(), 0, whole.num_bytes());
  }
  for (size_t k = 0; k < order.size(); ++k) {
    const std::vector<int64_t>& e = extents[order[k]];
    Shape part(static_cast<size_t>(rank));
    std::vector<int64_t> start(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) {
      start[d] = e[2 * d];
      part[d] = e[2 * d + 1] < 0 ? shape[d] : e[2 * d + 1];
      if (start[d] < 0 || part[d] < 0 || start[d] > shape[d] || part[d] > shape[d] - start[d]) {
        return DataLoss(fmt::format("tensor_name = {}: a slice outside its shape {}", key, ShapeDebugString(shape)));
      }
    }
    const tfproto::BundleEntryProto& slice_entry = *stored[k];
    Shape stored_shape;
    for (const auto& d : slice_entry.shape().dim()) stored_shape.push_back(d.size());
    if (stored_shape != part || slice_entry.dtype() != entry.dtype()) {
      return DataLoss(fmt::format("tensor_name = {}: a slice stored as {}, listed as {}", key,
                                  ShapeDebugString(stored_shape), ShapeDebugString(part)));
    }
    TFRUN_ASSIGN_OR_RETURN(const Tensor piece, ReadEntry(slice_entry, dtype, part));
    const std::vector<int64_t> flat = SliceOffsets(shape, start, part);
    for (size_t i = 0; i < flat.size(); ++i) {
      if (dtype == DType::kString) {
        strings[static_cast<size_t>(flat[i])] = std::string(piece.StringAt(static_cast<int64_t>(i)));
      } else {
        std::memcpy(static_cast<char*>(whole.raw()) + flat[i] * element, static_cast<const char*>(piece.raw()) + i * element,
                    element);
      }
    }
  }
  if (dtype == DType::kString) return Tensor::FromStrings(shape, strings);
  return whole;
}

}  // namespace tfrun
