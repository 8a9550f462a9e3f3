// How the GPU training kernels (training_kernels.cc) describe their work
// to the CUDA launchers (training.h): index maps, Select and reduction
// layouts and pooling parameters, from the plans core/runtime makes. Pure
// host code, tested on the host with the launchers' own index arithmetic
// (training_index.h) in training_layouts_test.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/runtime/kernel_shapes.h"
#include "core/runtime/nn_shapes.h"
#include "kernels/cuda/training.h"

namespace tfrun {
namespace cuda {

// Row-major strides of `shape`, in elements.
std::vector<int64_t> StridesOf(const Shape& shape);

// Binary's broadcast (rank 0 when neither operand needs one).
Broadcast BroadcastOf(const BinaryPlan& plan);

// Every output element of `out_shape` reads the same coordinates of an
// input of `in_shape` (the ranks equal); the callers adjust it:
IndexMap MapOver(const Shape& out_shape, const Shape& in_shape);
// Slice: the box at `plan.begin`.
IndexMap SliceMap(const SlicePlan& plan, const Shape& in_shape);
// StridedSlice's elements of an input of `in_shape`, in output order.
IndexMap StridedSliceMap(const StridedSlicePlan& plan, const Shape& in_shape);
// Tile: coordinates wrap at the input's dimensions.
IndexMap TileMap(const Shape& out_shape, const Shape& in_shape);
// An operand of `strides` (BroadcastPlan's: 0 where it stretches) made
// whole at `out_shape`.
IndexMap BroadcastMap(const Shape& out_shape, const std::vector<int64_t>& strides);
// The [rows, cols] matrix `in` transposed: out [cols, rows]. HWIO to KRSC
// is [RSC, K] to [K, RSC]; back the other way.
IndexMap TransposeMap(int64_t rows, int64_t cols);
// An NHWC image of `out_shape` cut from one padded by `top` rows and `left`
// columns before it (`padded_shape`).
IndexMap CropMap(const Shape& out_shape, const Shape& padded_shape, int64_t top, int64_t left);

// SelectV2's three operands broadcast by `plan`.
Select3 SelectV2Layout(const BroadcastPlan& plan);
// Select's: condition of the output's `n` elements, or (`rows`) one per
// row of `cond_elements` rows.
Select3 SelectLayout(bool rows, int64_t cond_elements, int64_t n);

// A reduction over ReductionLayout's merged dimensions (alternating kept
// and reduced, the first reduced when `first_reduced`); nullopt past
// kMaxRank of either kind.
std::optional<ReduceLayout> ReductionLayoutOf(const std::vector<int64_t>& merged, bool first_reduced);
// BiasAddGrad: [outer, channels, inner] summed over outer and inner.
ReduceLayout BiasGradLayout(const BiasGradPlan& plan);
// All `n` elements into one (L2Loss).
ReduceLayout WholeLayout(int64_t n);

PoolParams PoolParamsOf(const PoolGeometry& g);
// DepthwiseConv2dNative's geometry (PlanDepthwiseConv) and channel multiplier.
DepthwiseParams DepthwiseParamsOf(const ConvGeometry& g, int64_t multiplier);

}  // namespace cuda
}  // namespace tfrun
