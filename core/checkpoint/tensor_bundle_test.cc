// The tensor bundle reader on a checkpoint TensorFlow 2.21 wrote
// (testdata/checkpoints/make_checkpoints.py), its values as TensorFlow's
// RestoreV2 returned them, and its errors in TensorFlow's words (each
// measured with RestoreV2 on the same damage).
#include "core/checkpoint/tensor_bundle.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tfrun {
namespace {

const char kPrefix[] = "testdata/checkpoints/dtypes/model";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void Spit(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

TEST(TensorBundleTest, Crc32cIsCastagnolisMaskedAsTensorFlowStoresIt) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);  // the CRC-32C check value
  EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(0xdeadbeefu)), 0xdeadbeefu);
}

TEST(TensorBundleTest, ReadsEveryDtypeAsTensorFlowRestoresIt) {
  StatusOr<TensorBundleReader> reader = TensorBundleReader::Open(kPrefix);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  StatusOr<Tensor> f32 = reader->Read("f32", DType::kFloat32);
  ASSERT_TRUE(f32.ok()) << f32.status().message();
  EXPECT_EQ(f32->shape(), (Shape{2, 2}));
  EXPECT_EQ(std::vector<float>(f32->data<float>(), f32->data<float>() + 4), (std::vector<float>{1.5f, -2.25f, 3, 4.125f}));
  StatusOr<Tensor> f64 = reader->Read("f64", DType::kFloat64);
  ASSERT_TRUE(f64.ok());
  EXPECT_EQ(f64->data<double>()[0], 1e-300);
  StatusOr<Tensor> i64 = reader->Read("i64", DType::kInt64);
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(i64->data<int64_t>()[0], int64_t{1} << 40);
  EXPECT_EQ(i64->data<int64_t>()[1], -5);
  StatusOr<Tensor> b = reader->Read("b", DType::kBool);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(std::vector<bool>(b->data<bool>(), b->data<bool>() + 3), (std::vector<bool>{true, false, true}));
  StatusOr<Tensor> u8 = reader->Read("u8", DType::kUInt8);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(u8->data<uint8_t>()[1], 255);
  StatusOr<Tensor> h = reader->Read("h", DType::kFloat16);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->GetAsDouble(0), 0.5);
  EXPECT_EQ(h->GetAsDouble(1), -1.0);
  StatusOr<Tensor> scalar = reader->Read("scalar", DType::kFloat32);
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->shape(), Shape{});
  EXPECT_EQ(scalar->data<float>()[0], 7.0f);
  StatusOr<Tensor> s = reader->Read("s", DType::kString);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->StringAt(0), "hello");
  EXPECT_EQ(s->StringAt(1), "");
  EXPECT_EQ(s->StringAt(2), std::string_view("w\0rld", 5));
  // Three slices of [6, 2], each [2, 2], assembled.
  StatusOr<Tensor> part = reader->Read("part", DType::kFloat32);
  ASSERT_TRUE(part.ok()) << part.status().message();
  EXPECT_EQ(part->shape(), (Shape{6, 2}));
  const std::vector<float> rows = {0.38692939281463623f, 0.3600262403488159f, 0.9768795967102051f,
                                   0.0865163803100586f};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(part->data<float>()[i], rows[i % 4]) << i;
  const std::vector<std::string> names = reader->Names();
  EXPECT_EQ(names, (std::vector<std::string>{"b", "f32", "f64", "h", "i32", "i64", "part", "s", "scalar", "u8"}));
}

TEST(TensorBundleTest, ErrorsAreTensorFlowsTexts) {
  StatusOr<TensorBundleReader> reader = TensorBundleReader::Open(kPrefix);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->Read("nothere", DType::kFloat32).status().message(),
            "NotFoundError: Key nothere not found in checkpoint");
  EXPECT_EQ(reader->Read("f32", DType::kFloat64).status().message(),
            "InvalidArgumentError: tensor_name = f32; expected dtype double does not equal original dtype float");

  const std::string dir = std::filesystem::temp_directory_path() / "tfrun_bundle_test";
  std::filesystem::create_directories(dir);
  const std::string index = Slurp(std::string(kPrefix) + ".index");
  const std::string data = Slurp(std::string(kPrefix) + ".data-00000-of-00001");
  // A flipped byte of a tensor's data.
  std::string damaged = data;
  damaged[3] ^= 0x55;
  Spit(dir + "/c.index", index);
  Spit(dir + "/c.data-00000-of-00001", damaged);
  StatusOr<TensorBundleReader> c = TensorBundleReader::Open(dir + "/c");
  ASSERT_TRUE(c.ok());
  const std::string checksum = c->Read("f32", DType::kFloat32).status().message();
  EXPECT_EQ(checksum.rfind("DataLossError: TensorBundle at " + dir + "/c shard 0 (16 bytes): Checksum does not match: "
                           "stored ",
                           0),
            0u)
      << checksum;
  // No data shard; a short one.
  Spit(dir + "/m.index", index);
  EXPECT_EQ(TensorBundleReader::Open(dir + "/m")->Read("f32", DType::kFloat32).status().message(),
            "NotFoundError: " + dir + "/m.data-00000-of-00001; No such file or directory");
  Spit(dir + "/t.index", index);
  Spit(dir + "/t.data-00000-of-00001", data.substr(0, 10));
  EXPECT_EQ(TensorBundleReader::Open(dir + "/t")->Read("f64", DType::kFloat64).status().message(),
            "OutOfRangeError: Read less bytes than requested");
  // A damaged index block; an index too short to be a table; none.
  std::string bad_index = index;
  bad_index[40] ^= 0x55;
  Spit(dir + "/i.index", bad_index);
  EXPECT_EQ(TensorBundleReader::Open(dir + "/i").status().message(),
            "DataLossError: Unable to read file (" + dir + "/i.index). Perhaps the file is corrupt or was produced by "
            "a newer version of TensorFlow with format changes (failed to seek to header entry): block checksum "
            "mismatch");
  Spit(dir + "/ti.index", index.substr(0, 30));
  EXPECT_EQ(TensorBundleReader::Open(dir + "/ti").status().message(),
            "DataLossError: file is too short to be an sstable");
  EXPECT_EQ(TensorBundleReader::Open(dir + "/none").status().message(),
            "NotFoundError: Unsuccessful TensorSliceReader constructor: Failed to find any matching files for " + dir +
                "/none");
  std::filesystem::remove_all(dir);
}

// A footer whose index block handle claims 2^62 bytes: refused before
// LevelDB allocates what it claims (the input fuzzer found such a handle).
TEST(TensorBundleTest, ABlockHandleOutsideTheIndexIsRefused) {
  std::string index = Slurp(std::string(kPrefix) + ".index");
  std::string footer;
  auto varint = [&](uint64_t v) {
    while (v >= 0x80) {
      footer += static_cast<char>(v | 0x80);
      v >>= 7;
    }
    footer += static_cast<char>(v);
  };
  varint(0);
  varint(0);
  varint(0);
  varint(uint64_t{1} << 62);
  footer.resize(40, '\0');
  footer += index.substr(index.size() - 8);  // the magic number
  index.replace(index.size() - 48, 48, footer);
  const StatusOr<TensorBundleReader> r = TensorBundleReader::FromIndex(
      index, "mem", [](int, int64_t, int64_t, std::string*) { return Status::Ok(); });
  EXPECT_EQ(r.status().message(), "DataLossError: the index's table has a block outside the file");
}

// Every prefix of the index and every one-byte change of it and of the
// data: an error or a value, never a crash or a read outside a buffer.
TEST(TensorBundleTest, DamagedBundlesAreErrors) {
  const std::string index = Slurp(std::string(kPrefix) + ".index");
  const std::string data = Slurp(std::string(kPrefix) + ".data-00000-of-00001");
  auto try_all = [](const std::string& index_bytes, const std::string& data_bytes) {
    StatusOr<TensorBundleReader> r = TensorBundleReader::FromIndex(
        index_bytes, "mem", [&](int, int64_t offset, int64_t size, std::string* out) -> Status {
          if (offset < 0 || size < 0 || offset > static_cast<int64_t>(data_bytes.size()) ||
              size > static_cast<int64_t>(data_bytes.size()) - offset) {
            return RuntimeError("OutOfRangeError: Read less bytes than requested");
          }
          *out = data_bytes.substr(static_cast<size_t>(offset), static_cast<size_t>(size));
          return Status::Ok();
        });
    if (!r.ok()) return;
    for (const auto& [name, dtype] : std::vector<std::pair<std::string, DType>>{
             {"f32", DType::kFloat32}, {"s", DType::kString}, {"part", DType::kFloat32}, {"b", DType::kBool}}) {
      (void)r->Read(name, dtype);
    }
  };
  for (size_t n = 0; n < index.size(); n += 7) try_all(index.substr(0, n), data);
  for (size_t i = 0; i < index.size(); ++i) {
    std::string changed = index;
    changed[i] ^= 0x41;
    try_all(changed, data);
  }
  for (size_t i = 0; i < data.size(); ++i) {
    std::string changed = data;
    changed[i] ^= 0x41;
    try_all(index, changed);
  }
}

}  // namespace
}  // namespace tfrun
