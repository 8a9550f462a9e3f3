// The GPU training kernels' index arithmetic (training_index.h, what each
// CUDA thread computes for its element) and the layouts the kernels hand
// their launchers (training_layouts.h), run on the host against plain
// loops over coordinates: the part of the GPU path that needs no GPU to
// be right.
#include "kernels/cuda/training_layouts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cuda/training_index.h"

namespace tfrun {
namespace cuda {
namespace {

int64_t Count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The coordinates of row-major element i of `shape`.
std::vector<int64_t> Coords(const Shape& shape, int64_t i) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

int64_t Index(const Shape& shape, const std::vector<int64_t>& c) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + c[d];
  return i;
}

Shape RandomShape(std::mt19937& rng, int rank, int max_dim) {
  Shape s(rank);
  for (int64_t& d : s) d = std::uniform_int_distribution<int>(1, max_dim)(rng);
  return s;
}

// What StridedCopy writes: out[i] = in[MapOffset(map, i)].
std::vector<int64_t> Copy(const IndexMap& map, const std::vector<int64_t>& in, int64_t n) {
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t at = MapOffset(map, i);
    EXPECT_GE(at, 0);
    EXPECT_LT(at, static_cast<int64_t>(in.size()));
    if (at < 0 || at >= static_cast<int64_t>(in.size())) return out;
    out[i] = in[at];
  }
  return out;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 1000 + i;
  return v;
}

TEST(TrainingLayoutsTest, SliceTileAndBroadcastMapsReadTheRightElements) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = trial % 5;  // 0 (a scalar) to 4
    const Shape in_shape = RandomShape(rng, rank, 5);
    const std::vector<int64_t> in = Iota(Count(in_shape));
    // Slice: a random box.
    SlicePlan slice;
    for (int d = 0; d < rank; ++d) {
      const int64_t begin = std::uniform_int_distribution<int64_t>(0, in_shape[d] - 1)(rng);
      slice.begin.push_back(begin);
      slice.output.push_back(std::uniform_int_distribution<int64_t>(1, in_shape[d] - begin)(rng));
    }
    const std::vector<int64_t> sliced = Copy(SliceMap(slice, in_shape), in, Count(slice.output));
    for (int64_t i = 0; i < Count(slice.output); ++i) {
      std::vector<int64_t> c = Coords(slice.output, i);
      for (int d = 0; d < rank; ++d) c[d] += slice.begin[d];
      ASSERT_EQ(sliced[i], in[Index(in_shape, c)]) << "slice trial " << trial << " element " << i;
    }
    // Tile: random multiples.
    Shape tiled_shape = in_shape;
    for (int64_t& d : tiled_shape) d *= std::uniform_int_distribution<int>(1, 3)(rng);
    const std::vector<int64_t> tiled = Copy(TileMap(tiled_shape, in_shape), in, Count(tiled_shape));
    for (int64_t i = 0; i < Count(tiled_shape); ++i) {
      std::vector<int64_t> c = Coords(tiled_shape, i);
      for (int d = 0; d < rank; ++d) c[d] %= in_shape[d];
      ASSERT_EQ(tiled[i], in[Index(in_shape, c)]) << "tile trial " << trial << " element " << i;
    }
    // Broadcast (an operand with some dimensions 1) to the full shape.
    Shape small = tiled_shape;
    for (int64_t& d : small) d = std::uniform_int_distribution<int>(0, 1)(rng) ? d : 1;
    const std::optional<BroadcastPlan> plan = PlanBroadcast({&tiled_shape, &small});
    ASSERT_TRUE(plan.has_value());
    const std::vector<int64_t> small_values = Iota(Count(small));
    const std::vector<int64_t> whole = Copy(BroadcastMap(plan->output, plan->strides[1]), small_values,
                                            Count(plan->output));
    for (int64_t i = 0; i < Count(plan->output); ++i) {
      std::vector<int64_t> c = Coords(plan->output, i);
      for (int d = 0; d < rank; ++d) c[d] = small[d] == 1 ? 0 : c[d];
      ASSERT_EQ(whole[i], small_values[Index(small, c)]) << "broadcast trial " << trial;
    }
  }
}

TEST(TrainingLayoutsTest, FilterTransposesGoBothWays) {
  // HWIO [R, S, C, K] as [RSC, K] to KRSC [K, RSC] and back.
  const int64_t r = 5, s = 3, c = 2, k = 7, rsc = r * s * c;
  const std::vector<int64_t> hwio = Iota(rsc * k);
  const std::vector<int64_t> krsc = Copy(TransposeMap(rsc, k), hwio, rsc * k);
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < rsc; ++j) ASSERT_EQ(krsc[kk * rsc + j], hwio[j * k + kk]);
  }
  EXPECT_EQ(Copy(TransposeMap(k, rsc), krsc, rsc * k), hwio);
}

TEST(TrainingLayoutsTest, PaddingThenCroppingGivesTheImageBack) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    const Shape image = RandomShape(rng, 4, 6);
    const int64_t top = trial % 3, bottom = (trial / 3) % 2, left = (trial / 6) % 2, right = trial % 2;
    const Shape padded{image[0], image[1] + top + bottom, image[2] + left + right, image[3]};
    const std::vector<int64_t> in = Iota(Count(image));
    std::vector<int64_t> out(Count(padded));
    for (int64_t i = 0; i < Count(padded); ++i) {
      const int64_t at = PadSource(image[1], image[2], image[3], padded[1], padded[2], top, left, i);
      const std::vector<int64_t> p = Coords(padded, i);
      const bool inside = p[1] >= top && p[1] < top + image[1] && p[2] >= left && p[2] < left + image[2];
      ASSERT_EQ(at >= 0, inside) << "trial " << trial << " element " << i;
      if (inside) ASSERT_EQ(at, Index(image, {p[0], p[1] - top, p[2] - left, p[3]}));
      out[i] = at >= 0 ? in[at] : 0;
    }
    EXPECT_EQ(Copy(CropMap(image, padded, top, left), out, Count(image)), in) << "trial " << trial;
  }
}

TEST(TrainingLayoutsTest, SelectLayoutsPickEachOperandsElement) {
  // SelectV2: condition [3, 1], then [1, 4], else [4] broadcast to [3, 4].
  const Shape cond{3, 1}, then_shape{1, 4}, else_shape{4};
  const std::optional<BroadcastPlan> plan = PlanBroadcast({&cond, &then_shape, &else_shape});
  ASSERT_TRUE(plan.has_value());
  const Select3 v2 = SelectV2Layout(*plan);
  for (int64_t i = 0; i < 12; ++i) {
    int64_t o[3];
    SelectOffsets(v2, i, o);
    EXPECT_EQ(o[0], i / 4);
    EXPECT_EQ(o[1], i % 4);
    EXPECT_EQ(o[2], i % 4);
  }
  // Select: a condition per row of [5, 6], or per element.
  const Select3 rows = SelectLayout(true, 5, 30);
  const Select3 same = SelectLayout(false, 30, 30);
  for (int64_t i = 0; i < 30; ++i) {
    int64_t o[3];
    SelectOffsets(rows, i, o);
    EXPECT_EQ(o[0], i / 6);
    EXPECT_EQ(o[1], i);
    EXPECT_EQ(o[2], i);
    SelectOffsets(same, i, o);
    EXPECT_EQ(o[0], i);
    EXPECT_EQ(o[1], i);
  }
}

// The merged dimensions PlanReduction makes (ReductionHelper): size-1
// dimensions dropped, adjacent ones of one kind multiplied.
std::vector<int64_t> Merge(const Shape& shape, const std::vector<bool>& reduced, bool* first_reduced) {
  std::vector<int64_t> dims;
  int last = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const int kind = reduced[d] ? 1 : 0;
    if (kind == last) {
      dims.back() *= shape[d];
    } else {
      if (dims.empty()) *first_reduced = kind == 1;
      dims.push_back(shape[d]);
      last = kind;
    }
  }
  return dims;
}

TEST(TrainingLayoutsTest, ReductionLayoutsSumWhatTheAxesSay) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = 1 + trial % 6;
    const Shape shape = RandomShape(rng, rank, 4);
    std::vector<bool> reduced(rank);
    bool any = false;
    for (int d = 0; d < rank; ++d) any = (reduced[d] = std::uniform_int_distribution<int>(0, 1)(rng) == 1) || any;
    if (!any) continue;
    bool first_reduced = false;
    const std::vector<int64_t> merged = Merge(shape, reduced, &first_reduced);
    if (merged.empty() || (merged.size() == 1 && !first_reduced)) continue;  // the kernel copies
    const std::optional<ReduceLayout> layout = ReductionLayoutOf(merged, first_reduced);
    ASSERT_TRUE(layout.has_value());
    Shape kept;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) kept.push_back(shape[d]);
    }
    const std::vector<int64_t> in = Iota(Count(shape));
    std::vector<int64_t> expect(Count(kept), 0);
    for (int64_t i = 0; i < Count(shape); ++i) {
      const std::vector<int64_t> c = Coords(shape, i);
      std::vector<int64_t> k;
      for (int d = 0; d < rank; ++d) {
        if (!reduced[d]) k.push_back(c[d]);
      }
      expect[Index(kept, k)] += in[i];
    }
    ASSERT_EQ(Count(kept) * layout->reduced_count, Count(shape)) << "trial " << trial;
    for (int64_t o = 0; o < Count(kept); ++o) {
      int64_t sum = 0;
      const int64_t base = KeptOffset(*layout, o);
      for (int64_t r = 0; r < layout->reduced_count; ++r) sum += in[base + ReducedOffset(*layout, r)];
      ASSERT_EQ(sum, expect[o]) << "trial " << trial << " output " << o;
    }
  }
  // Past kMaxRank alternations: refused, not overrun.
  std::vector<int64_t> many(2 * kMaxRank + 2, 2);
  EXPECT_FALSE(ReductionLayoutOf(many, true).has_value());
}

TEST(TrainingLayoutsTest, BiasGradAndWholeLayoutsSumTheirElements) {
  for (const BiasGradPlan plan : {BiasGradPlan{6, 4, 1}, BiasGradPlan{2, 3, 5}, BiasGradPlan{1, 7, 1}}) {
    const Shape shape{plan.outer, plan.channels, plan.inner};
    const std::vector<int64_t> in = Iota(Count(shape));
    const ReduceLayout layout = BiasGradLayout(plan);
    for (int64_t ch = 0; ch < plan.channels; ++ch) {
      int64_t expect = 0, sum = 0;
      for (int64_t o = 0; o < plan.outer; ++o) {
        for (int64_t k = 0; k < plan.inner; ++k) expect += in[Index(shape, {o, ch, k})];
      }
      for (int64_t r = 0; r < layout.reduced_count; ++r) sum += in[KeptOffset(layout, ch) + ReducedOffset(layout, r)];
      EXPECT_EQ(sum, expect) << "channel " << ch;
    }
  }
  const ReduceLayout whole = WholeLayout(10);
  int64_t sum = 0;
  for (int64_t r = 0; r < whole.reduced_count; ++r) sum += ReducedOffset(whole, r);
  EXPECT_EQ(sum, 45);
}

TEST(TrainingLayoutsTest, GatherReadsTheIndexedRowsAndZerosOutOfRange) {
  const int64_t outer = 2, limit = 5, inner = 3;
  const std::vector<int32_t> indices{4, 0, 7, -1, 2};
  const int64_t count = static_cast<int64_t>(indices.size());
  for (int64_t i = 0; i < outer * count * inner; ++i) {
    const int64_t k = i % inner, j = (i / inner) % count, o = i / (inner * count);
    const int64_t at = GatherSource(indices.data(), limit, inner, count, i);
    if (indices[j] < 0 || indices[j] >= limit) {
      EXPECT_EQ(at, -1) << i;
    } else {
      EXPECT_EQ(at, (o * limit + indices[j]) * inner + k) << i;
    }
  }
}

// A window scan as TensorFlow's CPU MaxPool does it: the first maximum.
int64_t FirstMax(const std::vector<float>& in, const PoolParams& p, int64_t b, int64_t r, int64_t q, int64_t k) {
  int64_t best = -1;
  for (int64_t y = r * p.stride_rows - p.pad_top; y < r * p.stride_rows - p.pad_top + p.window_rows; ++y) {
    for (int64_t x = q * p.stride_cols - p.pad_left; x < q * p.stride_cols - p.pad_left + p.window_cols; ++x) {
      if (y < 0 || y >= p.in_rows || x < 0 || x >= p.in_cols) continue;
      const int64_t at = ((b * p.in_rows + y) * p.in_cols + x) * p.depth + k;
      if (best < 0 || in[at] > in[best]) best = at;
    }
  }
  return best;
}

TEST(TrainingLayoutsTest, PoolingFindsEachWindowsFirstMaximum) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-3, 3);  // ties are common
  struct Case {
    int64_t rows, cols, window, stride;
    bool same;
  };
  for (const Case& k : {Case{6, 6, 2, 2, false}, Case{7, 5, 3, 2, true}, Case{5, 5, 2, 1, true},
                        Case{4, 9, 3, 3, false}, Case{1, 1, 2, 2, true}}) {
    PoolParams p;
    p.batch = 2;
    p.in_rows = k.rows;
    p.in_cols = k.cols;
    p.depth = 3;
    p.window_rows = p.window_cols = k.window;
    p.stride_rows = p.stride_cols = k.stride;
    if (k.same) {  // TensorFlow's SAME: the odd padding after
      p.out_rows = (k.rows + k.stride - 1) / k.stride;
      p.out_cols = (k.cols + k.stride - 1) / k.stride;
      p.pad_top = std::max<int64_t>(0, (p.out_rows - 1) * k.stride + k.window - k.rows) / 2;
      p.pad_left = std::max<int64_t>(0, (p.out_cols - 1) * k.stride + k.window - k.cols) / 2;
    } else {
      p.out_rows = (k.rows - k.window) / k.stride + 1;
      p.out_cols = (k.cols - k.window) / k.stride + 1;
    }
    std::vector<float> in(p.batch * p.in_rows * p.in_cols * p.depth);
    for (float& v : in) v = static_cast<float>(small(rng));
    for (int64_t i = 0; i < p.batch * p.out_rows * p.out_cols * p.depth; ++i) {
      const int64_t d = i % p.depth, q = (i / p.depth) % p.out_cols, r = (i / (p.depth * p.out_cols)) % p.out_rows,
                    b = i / (p.depth * p.out_cols * p.out_rows);
      ASSERT_EQ(PoolArgMax(in.data(), p, i), FirstMax(in, p, b, r, q, d))
          << k.rows << "x" << k.cols << " window " << k.window << " output " << i;
    }
  }
  // A NaN wins its window (TensorFlow's GPU kernel).
  PoolParams p;
  p.batch = p.depth = 1;
  p.in_rows = p.in_cols = 2;
  p.window_rows = p.window_cols = p.stride_rows = p.stride_cols = 2;
  p.out_rows = p.out_cols = 1;
  const std::vector<float> nan_inside{1, std::nanf(""), 5, 2};
  EXPECT_EQ(PoolArgMax(nan_inside.data(), p, 0), 1);
}

TEST(TrainingLayoutsTest, UpdatesFollowTheCpuFormulas) {
  // Adam, one element, against the CPU kernel's formula (ApplyAdamNonCuda,
  // optimizer_kernels.cc) in double.
  double var = 0.5, m = 0.1, v = 0.2;
  const double s[6] = {0.9, 0.999, 0.01, 0.9, 0.999, 1e-7};
  const double g = 0.3;
  const double alpha = s[2] * std::sqrt(1 - s[1]) / (1 - s[0]);
  const double m1 = m + (g - m) * (1 - s[3]), v1 = v + (g * g - v) * (1 - s[4]);
  const double expect = var - (m1 * alpha) / (std::sqrt(v1) + s[5]);
  UpdateElement<UpdateOp::kAdam>(&var, &m, &v, s, g, false, 0);
  EXPECT_DOUBLE_EQ(m, m1);
  EXPECT_DOUBLE_EQ(v, v1);
  EXPECT_DOUBLE_EQ(var, expect);
  // Momentum with Nesterov, RMSProp and Adagrad, one step each.
  double w = 1, accum = 0.5;
  const double lr_momentum[2] = {0.1, 0.9};
  UpdateElement<UpdateOp::kMomentum, double>(&w, &accum, nullptr, lr_momentum, 0.2, true, 0);
  EXPECT_DOUBLE_EQ(accum, 0.5 * 0.9 + 0.2);
  EXPECT_DOUBLE_EQ(w, 1 - (0.2 * 0.1 + (0.5 * 0.9 + 0.2) * 0.9 * 0.1));
  double x = 1, ms = 0.4, mom = 0.1;
  const double rms[4] = {0.01, 0.9, 0.5, 1e-6};
  UpdateElement<UpdateOp::kRMSProp, double>(&x, &ms, &mom, rms, 0.3, false, 0);
  const double ms1 = 0.4 + (0.09 - 0.4) * 0.1;
  EXPECT_DOUBLE_EQ(ms, ms1);
  EXPECT_DOUBLE_EQ(mom, 0.1 * 0.5 + 0.3 * 0.01 / std::sqrt(ms1 + 1e-6));
  EXPECT_DOUBLE_EQ(x, 1 - mom);
  double y = 1, acc = 0.25;
  const double lr[1] = {0.1};
  UpdateElement<UpdateOp::kAdagrad, double>(&y, &acc, nullptr, lr, 0.5, true, 0);
  EXPECT_DOUBLE_EQ(acc, 0.5);
  EXPECT_DOUBLE_EQ(y, 1 - 0.5 * 0.1 * (1 / std::sqrt(0.5)));
  EXPECT_EQ(UpdateScalars(UpdateOp::kAdam), 6);
  EXPECT_EQ(UpdateSlots(UpdateOp::kRMSProp), 2);
}

}  // namespace
}  // namespace cuda
}  // namespace tfrun
