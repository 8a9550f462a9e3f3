#include "kernels/cuda/training_layouts.h"

#include <algorithm>

namespace tfrun {
namespace cuda {

std::vector<int64_t> StridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

Broadcast BroadcastOf(const BinaryPlan& plan) {
  Broadcast b;
  if (!plan.broadcasts()) return b;
  b.rank = static_cast<int>(std::min<size_t>(plan.output.size(), kMaxBroadcastRank));
  for (int d = 0; d < b.rank; ++d) {
    b.dims[d] = plan.output[d];
    b.x_strides[d] = plan.x_strides[d];
    b.y_strides[d] = plan.y_strides[d];
  }
  return b;
}

IndexMap MapOver(const Shape& out_shape, const Shape& in_shape) {
  IndexMap map;
  map.rank = static_cast<int>(std::min<size_t>(out_shape.size(), kMaxRank));
  const std::vector<int64_t> strides = StridesOf(in_shape);
  for (int d = 0; d < map.rank; ++d) {
    map.dims[d] = out_shape[d];
    map.modulo[d] = std::max<int64_t>(out_shape[d], 1);
    map.in_strides[d] = strides[d];
  }
  return map;
}

IndexMap SliceMap(const SlicePlan& plan, const Shape& in_shape) {
  IndexMap map = MapOver(plan.output, in_shape);
  for (int d = 0; d < map.rank; ++d) map.base += plan.begin[d] * map.in_strides[d];
  return map;
}

IndexMap StridedSliceMap(const StridedSlicePlan& plan, const Shape& in_shape) {
  IndexMap map = MapOver(plan.processing, in_shape);
  for (int d = 0; d < map.rank; ++d) {
    map.base += plan.begin[d] * map.in_strides[d];
    map.in_strides[d] *= plan.strides[d];
  }
  return map;
}

IndexMap TileMap(const Shape& out_shape, const Shape& in_shape) {
  IndexMap map = MapOver(out_shape, in_shape);
  for (int d = 0; d < map.rank; ++d) map.modulo[d] = std::max<int64_t>(in_shape[d], 1);
  return map;
}

IndexMap BroadcastMap(const Shape& out_shape, const std::vector<int64_t>& strides) {
  IndexMap map = MapOver(out_shape, out_shape);
  for (int d = 0; d < map.rank; ++d) map.in_strides[d] = strides[d];
  return map;
}

IndexMap TransposeMap(int64_t rows, int64_t cols) {
  IndexMap map;  // out (c, r) reads in[r * cols + c]
  map.rank = 2;
  map.dims[0] = cols;
  map.dims[1] = rows;
  map.modulo[0] = std::max<int64_t>(cols, 1);
  map.modulo[1] = std::max<int64_t>(rows, 1);
  map.in_strides[0] = 1;
  map.in_strides[1] = cols;
  return map;
}

IndexMap CropMap(const Shape& out_shape, const Shape& padded_shape, int64_t top, int64_t left) {
  IndexMap map = MapOver(out_shape, padded_shape);
  map.base = top * map.in_strides[1] + left * map.in_strides[2];
  return map;
}

Select3 SelectV2Layout(const BroadcastPlan& plan) {
  Select3 layout;
  layout.rank = static_cast<int>(std::min<size_t>(plan.output.size(), kMaxRank));
  for (int d = 0; d < layout.rank; ++d) {
    layout.dims[d] = plan.output[d];
    for (int k = 0; k < 3; ++k) layout.strides[k][d] = plan.strides[k][d];
  }
  return layout;
}

Select3 SelectLayout(bool rows, int64_t cond_elements, int64_t n) {
  Select3 layout;  // [rows, per_row]: the condition steps by row or by element
  layout.rank = 2;
  layout.dims[0] = rows ? cond_elements : 1;
  layout.dims[1] = layout.dims[0] > 0 ? n / layout.dims[0] : 0;
  layout.strides[0][0] = rows ? 1 : 0;
  layout.strides[0][1] = rows ? 0 : 1;
  for (int k = 1; k < 3; ++k) {
    layout.strides[k][0] = layout.dims[1];
    layout.strides[k][1] = 1;
  }
  return layout;
}

std::optional<ReduceLayout> ReductionLayoutOf(const std::vector<int64_t>& merged, bool first_reduced) {
  ReduceLayout layout;
  std::vector<int64_t> strides(merged.size());
  int64_t stride = 1;
  for (size_t d = merged.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= merged[d];
  }
  layout.reduced_count = 1;
  for (size_t d = 0; d < merged.size(); ++d) {
    const bool reduced = (d % 2 == 0) == first_reduced;  // merged dimensions alternate
    int& rank = reduced ? layout.reduced_rank : layout.kept_rank;
    if (rank == kMaxRank) return std::nullopt;
    (reduced ? layout.reduced_dims : layout.kept_dims)[rank] = merged[d];
    (reduced ? layout.reduced_strides : layout.kept_strides)[rank] = strides[d];
    ++rank;
    if (reduced) layout.reduced_count *= merged[d];
  }
  return layout;
}

ReduceLayout BiasGradLayout(const BiasGradPlan& plan) {
  ReduceLayout layout;
  layout.kept_rank = 1;
  layout.kept_dims[0] = plan.channels;
  layout.kept_strides[0] = plan.inner;
  layout.reduced_rank = 2;
  layout.reduced_dims[0] = plan.outer;
  layout.reduced_strides[0] = plan.channels * plan.inner;
  layout.reduced_dims[1] = plan.inner;
  layout.reduced_strides[1] = 1;
  layout.reduced_count = plan.outer * plan.inner;
  return layout;
}

ReduceLayout WholeLayout(int64_t n) {
  ReduceLayout layout;
  layout.reduced_rank = 1;
  layout.reduced_dims[0] = n;
  layout.reduced_strides[0] = 1;
  layout.reduced_count = n;
  return layout;
}

PoolParams PoolParamsOf(const PoolGeometry& g) {
  PoolParams p;
  p.batch = g.batch;
  p.in_rows = g.in_rows;
  p.in_cols = g.in_cols;
  p.depth = g.depth;
  p.window_rows = g.window_rows;
  p.window_cols = g.window_cols;
  p.stride_rows = g.stride_rows;
  p.stride_cols = g.stride_cols;
  p.out_rows = g.out_rows;
  p.out_cols = g.out_cols;
  p.pad_top = g.pad_top;
  p.pad_left = g.pad_left;
  return p;
}

DepthwiseParams DepthwiseParamsOf(const ConvGeometry& g, int64_t multiplier) {
  DepthwiseParams p;
  p.batch = g.batch;
  p.in_rows = g.in_rows;
  p.in_cols = g.in_cols;
  p.in_depth = g.in_depth;
  p.multiplier = multiplier;
  p.filter_rows = g.filter_rows;
  p.filter_cols = g.filter_cols;
  p.stride_rows = g.stride_rows;
  p.stride_cols = g.stride_cols;
  p.out_rows = g.out_rows;
  p.out_cols = g.out_cols;
  p.pad_top = g.pad_top;
  p.pad_left = g.pad_left;
  return p;
}

}  // namespace cuda
}  // namespace tfrun
