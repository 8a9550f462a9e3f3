// The ring all-reduce's order of sums and chunks, as TensorFlow's
// RingAlg and CollectiveAdapter lay them out (read from their source; the
// end-to-end check against TensorFlow's own numbers is
// graphs/tf/call_mirrored_{2,3}.train, MirroredStrategy steps).
#include "core/runtime/collectives.h"

#include <gtest/gtest.h>

#include <vector>

namespace tfrun {
namespace {

Tensor Filled(DType dtype, int64_t n, double value) {
  Tensor t = *Tensor::AllocateHost(dtype, {n});
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DType::kFloat32) t.data<float>()[i] = static_cast<float>(value);
    if (dtype == DType::kInt64) t.data<int64_t>()[i] = static_cast<int64_t>(value);
  }
  return t;
}

// Three ranks whose sum depends on where it starts: chunk c starts at
// rank c and ends at rank c - 1, so an element of chunk 0 is
// x2 + (x1 + x0) = 1 + 0, one of chunk 1 x0 + (x2 + x1) = 1e8 - 1e8 (the 1
// is lost in 1 - 1e8).
std::vector<Tensor> Cancelling(int64_t n) {
  return {Filled(DType::kFloat32, n, 1e8), Filled(DType::kFloat32, n, -1e8), Filled(DType::kFloat32, n, 1)};
}

TEST(RingAllReduce, SumsEachChunkFromTheRankItStartsAt) {
  // 48 floats in 3 chunks: 16 elements are 64 bytes, already aligned, and
  // TensorFlow's rounding still adds a whole alignment: chunks of 32, 16
  // and 0 elements.
  StatusOr<Tensor> sum = RingAllReduce(Cancelling(48), "Add", "Id", "r");
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  for (int64_t i = 0; i < 48; ++i) EXPECT_EQ(sum->data<float>()[i], i < 32 ? 1.0f : 0.0f) << i;
}

TEST(RingAllReduce, SmallTensorsAreOneChunk) {
  // Two floats (a Dense(1) model's packed gradients) round up to one
  // 16-element chunk: every element is summed from rank 0.
  StatusOr<Tensor> sum = RingAllReduce(Cancelling(2), "Add", "Id", "r");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->data<float>()[0], 1.0f);
  EXPECT_EQ(sum->data<float>()[1], 1.0f);
}

TEST(RingAllReduce, TwoRanksAreOneAddition) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, 5, 0.1), Filled(DType::kFloat32, 5, 0.2)};
  StatusOr<Tensor> sum = RingAllReduce(inputs, "Add", "Div", "r");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->data<float>()[4], (0.1f + 0.2f) / 2.0f);
}

TEST(RingAllReduce, MergesAndFinalOps) {
  std::vector<Tensor> inputs = {Filled(DType::kInt64, 3, 6), Filled(DType::kInt64, 3, -2), Filled(DType::kInt64, 3, 5)};
  EXPECT_EQ(RingAllReduce(inputs, "Mul", "Id", "r")->data<int64_t>()[0], -60);
  EXPECT_EQ(RingAllReduce(inputs, "Min", "Id", "r")->data<int64_t>()[1], -2);
  EXPECT_EQ(RingAllReduce(inputs, "Max", "Id", "r")->data<int64_t>()[2], 6);
  EXPECT_EQ(RingAllReduce(inputs, "Add", "Div", "r")->data<int64_t>()[0], 3);
}

TEST(RingAllReduce, RefusesWhatTensorFlowRefuses) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, 3, 1), Filled(DType::kFloat32, 4, 1)};
  StatusOr<Tensor> mismatched = RingAllReduce(inputs, "Add", "Id", "r");
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("Shape mismatch"), std::string::npos);
  EXPECT_FALSE(RingAllReduce({Filled(DType::kFloat32, 3, 1)}, "Sub", "Id", "r").ok());
  EXPECT_FALSE(RingAllReduce({Filled(DType::kFloat32, 3, 1)}, "Add", "Mean", "r").ok());
  Tensor flags = *Tensor::AllocateHost(DType::kBool, {2});
  EXPECT_FALSE(RingAllReduce({flags}, "Add", "Id", "r").ok());
}

TEST(RingAllReduce, ASecondSubdivisionRingsTheOtherWay) {
  // Over 12 MiB among three ranks: chunks of at most 4 MiB need a second
  // subdivision, whose ring (offset -1, reversed) is ranks 1, 0, 2; field
  // f is chunk f / 2 of subdivision f % 2. Field 1 starts at device 1:
  // x2 + (x0 + x1) = 1; field 2 (chunk 1 of the first ring) starts at
  // device 1 too: x0 + (x2 + x1) = 0.
  const int64_t n = 3 * 1024 * 1024 + 48;
  StatusOr<Tensor> sum = RingAllReduce(Cancelling(n), "Add", "Id", "r");
  ASSERT_TRUE(sum.ok());
  const int64_t base = (n + 5) / 6;  // six fields, rounded up to 64 bytes as TensorFlow rounds
  const int64_t chunk = base + (base * 4 % 64 == 0 ? 64 : 64 - base * 4 % 64) / 4;
  EXPECT_EQ(sum->data<float>()[0], 1.0f);          // field 0: from device 0
  EXPECT_EQ(sum->data<float>()[chunk], 1.0f);      // field 1
  EXPECT_EQ(sum->data<float>()[2 * chunk], 0.0f);  // field 2
}

TEST(GatherAll, ConcatenatesInRankOrder) {
  std::vector<Tensor> inputs = {Filled(DType::kFloat32, 2, 1), Filled(DType::kFloat32, 3, 2)};
  StatusOr<Tensor> all = GatherAll(inputs, "g");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->shape(), (Shape{5}));
  EXPECT_EQ(all->data<float>()[1], 1.0f);
  EXPECT_EQ(all->data<float>()[2], 2.0f);
  Tensor scalar = *Tensor::AllocateHost(DType::kFloat32, {});
  EXPECT_FALSE(GatherAll({scalar}, "g").ok());
}

}  // namespace
}  // namespace tfrun
