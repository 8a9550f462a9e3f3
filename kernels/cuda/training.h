// CUDA kernels for training graphs: elementwise math and its gradients,
// comparisons and Select, fills, reductions, the softmax family, strided
// copies (Slice, Tile, broadcasts, transposes), Gather, padding, max
// pooling and the optimizers' updates. Plain C++ interface, as
// elementwise.h: pointers are device pointers, `stream` a cudaStream_t,
// each returns its launch's cudaError_t (0 = success). Shapes, checks and
// TensorFlow's error texts are the callers' (core/runtime/kernel_shapes.h).
#pragma once

#include <cstdint>

#include "kernels/cuda/elementwise.h"
#include "kernels/elementwise_family.h"

namespace tfrun {
namespace cuda {

// The most dimensions an index map, broadcast or reduction layout takes.
constexpr int kMaxRank = 8;

// out[i] = op(in[i]) for an op of the unary family (elementwise_family.h);
// its float-only ops refuse integer types (cudaErrorInvalidValue).
// `alpha`: LeakyRelu's.
int Unary(ElementType type, UnaryOp op, const void* in, int64_t n, void* out, void* stream, float alpha);

// out[i] = value, for every element type including bool (ZerosLike,
// OnesLike, a reduction's identity over nothing).
int Fill(ElementType type, double value, int64_t n, void* out, void* stream);

using CompareOp = ::tfrun::CompareFn;  // the comparison family (elementwise_family.h)
// out[i] (bool) = x op y, broadcast as Binary's.
int Compare(ElementType type, CompareOp op, const void* x, bool x_scalar, const void* y, bool y_scalar,
            const Broadcast& broadcast, int64_t n, bool* out, void* stream);

// SelectV2(cond, t, e) for elements of `element_bytes` (1, 2, 4 or 8):
// each operand's step along each output dimension, 0 where it stretches.
struct Select3 {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};  // cond, then, else
};
int Select(int element_bytes, const bool* cond, const void* then_values, const void* else_values,
           const Select3& layout, int64_t n, void* out, void* stream);

// out[i] = in[base + sum_d (coord_d(i) % modulo[d]) * in_strides[d]], the
// coordinates of i over `dims` (the output's): Slice (base = the corner,
// modulo past the dims), Tile (modulo = the input's dims), BroadcastTo
// (stride 0 where it stretches), transposes (permuted strides).
struct IndexMap {
  int rank = 0;
  int64_t base = 0;
  int64_t dims[kMaxRank] = {};
  int64_t modulo[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
};
int StridedCopy(int element_bytes, const void* in, const IndexMap& map, int64_t n, void* out, void* stream);

// GatherV2 with batch_dims 0: params [outer, limit, inner], `count`
// indices (int32 or int64). An index outside [0, limit) gives zeros, as
// TensorFlow's GPU kernel does (its CPU kernel fails).
int Gather(int element_bytes, const void* params, const void* indices, bool indices_int64, int64_t outer,
           int64_t limit, int64_t inner, int64_t count, void* out, void* stream);

enum class ReduceOp { kSum, kMean, kProd, kMax, kMin, kAll, kAny, kHalfSumOfSquares };
// Each output element reduces the input elements at
// sum_d kept_coord_d * kept_strides[d] + sum_e reduced_coord_e * reduced_strides[e];
// the output's elements are the kept coordinates in row-major order.
// kHalfSumOfSquares is L2Loss. kAll/kAny take bool; the rest numbers.
// `reduced_count` > 0 (an empty reduction is a Fill).
struct ReduceLayout {
  int kept_rank = 0;
  int64_t kept_dims[kMaxRank] = {};
  int64_t kept_strides[kMaxRank] = {};
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxRank] = {};
  int64_t reduced_strides[kMaxRank] = {};
  int64_t reduced_count = 1;
};
int Reduce(ElementType type, ReduceOp op, const void* in, const ReduceLayout& layout, int64_t n_out, void* out,
           void* stream);

// Softmax or LogSoftmax over rows of `classes` (float32/float64).
int Softmax(ElementType type, bool log, const void* logits, int64_t rows, int64_t classes, void* out, void* stream);
// SoftmaxCrossEntropyWithLogits on whole [rows, classes] operands:
// loss[rows] and backprop[rows, classes], as xent_op.h computes them.
int SoftmaxXent(ElementType type, const void* logits, const void* labels, int64_t rows, int64_t classes, void* loss,
                void* backprop, void* stream);

// NHWC max pooling (maxpooling_op_gpu.cu.cc's NHWC kernels): each window's
// first maximum, padding left out; MaxPoolGrad adds each output's gradient
// to that position of a zeroed output.
struct PoolParams {
  int64_t batch = 0, in_rows = 0, in_cols = 0, depth = 0;
  int64_t window_rows = 0, window_cols = 0, stride_rows = 0, stride_cols = 0;
  int64_t out_rows = 0, out_cols = 0, pad_top = 0, pad_left = 0;
};
int MaxPool(ElementType type, const void* in, const PoolParams& p, void* out, void* stream);
int MaxPoolGrad(ElementType type, const void* in, const void* grad, const PoolParams& p, void* out, void* stream);
// NHWC average pooling as avgpooling_op.cc computes it on the CPU: each
// window's sum (padding left out) divided by its count. AvgPoolGrad gives
// each input the sum of the gradients of the outputs whose TensorFlow
// broadcast window holds it (PoolGeometry::BroadcastRows), each times
// 1 / (that window's rows * columns).
int AvgPool(ElementType type, const void* in, const PoolParams& p, void* out, void* stream);
int AvgPoolGrad(ElementType type, const void* grad, const PoolParams& p, void* out, void* stream);

// DepthwiseConv2dNative (NHWC, float32 and float64), the filter [rows,
// cols, in_depth, multiplier]: each output element the sum from 0 of its
// window's products in filter order, each product rounded before it is
// added (no fused multiply-add), as the CPU kernel sums: the same bits.
struct DepthwiseParams {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0, multiplier = 1;
  int64_t filter_rows = 0, filter_cols = 0, stride_rows = 1, stride_cols = 1;
  int64_t out_rows = 0, out_cols = 0, pad_top = 0, pad_left = 0;
};
int DepthwiseConv(ElementType type, const void* in, const void* filter, const DepthwiseParams& p, void* out,
                  void* stream);

// Local response normalization over the last dimension of `rows` rows of
// `depth` (float32): out = x * (bias + alpha * sum of squares within
// `radius`)^-beta; LRNGrad as lrn_op.cc's CPU loops define it.
struct LrnParams {
  int64_t rows = 0, depth = 0, radius = 0;
  float bias = 1, alpha = 1, beta = 0.5f;
};
int Lrn(const float* in, const LrnParams& p, float* out, void* stream);
int LrnGrad(const float* grads, const float* in, const float* activations, const LrnParams& p, float* out,
            void* stream);

// NHWC zero padding of rows and columns: out [batch, rows + top + bottom,
// cols + left + right, depth] (the explicit padding cuDNN's symmetric one
// cannot express: SAME with an odd total).
int PadImages(int element_bytes, const void* in, int64_t batch, int64_t rows, int64_t cols, int64_t depth,
              int64_t top, int64_t bottom, int64_t left, int64_t right, void* out, void* stream);

// Batch normalization over the channels of a 4-D float32 tensor (NHWC, or
// NCHW with `inner` = rows * columns): `count` values per channel.
// Training: y from the batch's mean and (biased) variance, written to
// saved_mean and saved_var; batch_mean and batch_var are the running
// statistics (exponential_avg_factor, Bessel's correction). Inference: y
// from old_mean and old_var, which the four statistics outputs copy.
struct BatchNormParams {
  int64_t count = 0, channels = 0, inner = 1;
  bool nchw = false, training = true;
  float epsilon = 0.0001f, exponential_avg_factor = 1.0f;
};
int BatchNorm(const BatchNormParams& p, const float* x, const float* scale, const float* offset, const float* old_mean,
              const float* old_var, float* y, float* batch_mean, float* batch_var, float* saved_mean, float* saved_var,
              void* stream);
// Its gradient through the statistics `mean`, `var` (the batch's when
// training, fixed ones for inference).
int BatchNormGrad(const BatchNormParams& p, const float* dy, const float* x, const float* scale, const float* mean,
                  const float* var, float* dx, float* dscale, float* doffset, void* stream);

// ArgMax/ArgMin of [outer, size, inner] along the middle: the first index
// of the largest (smallest) value, NaN never taken (0 where all are), as
// int32 or int64 (float32/float64 input).
int ArgReduce(ElementType type, bool max, const void* in, int64_t outer, int64_t size, int64_t inner, bool out_int64,
              void* out, void* stream);
// InTopKV2 of float32 predictions [batch, classes]: whether fewer than k
// classes score above the target's; false for a target out of range or a
// score that is not finite.
int InTopK(const float* predictions, const void* targets, bool targets_int64, int64_t batch, int64_t classes,
           int64_t k, bool* out, void* stream);
// SparseSoftmaxCrossEntropyWithLogits of [rows, classes] logits and int32
// or int64 labels: loss[rows] and backprop[rows, classes]; a label out of
// range gives NaN in its row, as TensorFlow's GPU kernel does.
int SparseXent(ElementType type, const void* logits, const void* labels, bool labels_int64, int64_t rows,
               int64_t classes, void* loss, void* backprop, void* stream);
// LeakyReluGrad: features > 0 ? gradients : gradients * alpha.
int LeakyReluGrad(ElementType type, const void* gradients, const void* features, int64_t n, float alpha, void* out,
                  void* stream);
// out[i] = start + i * delta, as TensorFlow's GPU RangeFunctor (its CPU
// kernel adds delta step by step).
int Range(ElementType type, double start, double delta, int64_t n, void* out, void* stream);
// The inverse of StridedCopy: out[MapOffset(map, i)] = in[i] for the n
// elements of `in` (StridedSliceGrad into a zeroed output).
int StridedScatter(int element_bytes, const void* in, const IndexMap& map, int64_t n, void* out, void* stream);

// ScatterAdd/Sub/Update of a variable [rows, row_size] in place: for each
// of `count` indices (int32 or int64) its row of `updates` (or the one
// value of a scalar update) added, subtracted (atomically: duplicate
// indices add up in any order) or written. An index out of range is
// skipped, as TensorFlow's GPU kernel skips it. float32, float64, int32,
// int64.
enum class ScatterOp { kAdd, kSub, kUpdate };
int Scatter(ElementType type, ScatterOp op, void* var, int64_t rows, int64_t row_size, const void* indices,
            bool indices_int64, int64_t count, const void* updates, bool scalar_update, void* stream);

// The optimizers' updates (training_ops_gpu.cu.cc), in place: `tensors`
// the variable then its slots, `scalars` device pointers to the op's
// scalar inputs in its order, `flag` use_nesterov (Momentum, Adam) or
// update_slots (Adagrad). float32/float64.
enum class UpdateOp { kGradientDescent, kMomentum, kAdam, kAdagrad, kRMSProp };
int ApplyUpdate(ElementType type, UpdateOp op, void* const* tensors, const void* const* scalars, const void* grad,
                bool flag, int64_t n, void* stream);

}  // namespace cuda
}  // namespace tfrun
