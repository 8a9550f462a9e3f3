// The pooling, LRN and batch normalization plans: the geometry TensorFlow's
// kernels use and their refusals, where TensorFlow's own run cannot show
// them (a write past the output, which its kernel would make; a GPU's
// cuDNN limits). TensorFlow's texts for the rest are in the hostile-graph
// goldens (testdata/bad/tf).
#include "core/runtime/nn_shapes.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tfrun {
namespace {

Tensor HostTensor(DType dtype, Shape shape, const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::AllocateHost(dtype, std::move(shape));
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt32) {
      t->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t->data<float>()[i] = static_cast<float>(values[i]);
    }
  }
  return *t;
}

Tensor Zeros(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return HostTensor(DType::kFloat32, shape, std::vector<double>(n, 0.0));
}

// A node of `op` with `attrs` and `inputs`, for a plan to read.
struct Call {
  Node node;
  NodeAttrs attrs;
  std::string device = "/job:localhost/replica:0/task:0/device:CPU:0";
  VariableStore variables;
  DeviceConstants constants;
  KernelContext context;
  Call(const std::string& op, std::map<std::string, std::vector<std::string>> values, std::vector<Tensor> inputs)
      : context{node, std::move(inputs), CpuAllocator(), device, &variables, &constants, nullptr} {
    node.name = "k";
    node.op = op;
    node.dtype = DType::kFloat32;
    for (auto& [name, items] : values) attrs[name] = AttrValue{items.size() > 1 ? "list(int)" : "", items};
    context.attrs = &attrs;
  }
};

std::map<std::string, std::vector<std::string>> Pool(std::vector<std::string> ksize, std::vector<std::string> strides,
                                                    const std::string& padding) {
  return {{"ksize", ksize}, {"strides", strides}, {"padding", {padding}}};
}

TEST(NnShapesTest, AvgPoolGradWalksTheGradientsOwnShapeOnTheCpu) {
  // A 4x4 input pooled 2x2 by 2 has a 2x2 output; TensorFlow's CPU kernel
  // takes a 3x3 gradient all the same (its third row and column start at
  // the input's end and cover nothing).
  Call call("AvgPoolGrad", Pool({"1", "2", "2", "1"}, {"1", "2", "2", "1"}, "VALID"),
            {HostTensor(DType::kInt32, {4}, {1, 4, 4, 1}), Zeros({1, 3, 3, 1})});
  StatusOr<AvgPoolGradPlan> plan = PlanAvgPoolGrad(call.context, kCpu);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->output_shape, (Shape{1, 4, 4, 1}));
  EXPECT_EQ(plan->geometry.out_rows, 3);
  int64_t rows = -1;
  EXPECT_EQ(plan->geometry.BroadcastRows(2, &rows), 4);
  EXPECT_EQ(rows, 0);
  // On a GPU the gradient must be the forward's output.
  Call gpu("AvgPoolGrad", Pool({"1", "2", "2", "1"}, {"1", "2", "2", "1"}, "VALID"),
           {HostTensor(DType::kInt32, {4}, {1, 4, 4, 1}), Zeros({1, 3, 3, 1})});
  EXPECT_EQ(PlanAvgPoolGrad(gpu.context, kGpu).status().message(),
            "InvalidArgumentError: Expected grad shape to be [1,2,2,1], but got [1,3,3,1]");
}

TEST(NnShapesTest, AvgPoolGradNeverWritesPastItsOutput) {
  // A batch of 2 gradients for an input of 1 image: TensorFlow's kernel
  // would write a second image past its output.
  Call batch("AvgPoolGrad", Pool({"1", "2", "2", "1"}, {"1", "2", "2", "1"}, "VALID"),
             {HostTensor(DType::kInt32, {4}, {1, 4, 4, 1}), Zeros({2, 2, 2, 1})});
  EXPECT_EQ(PlanAvgPoolGrad(batch.context, kCpu).status().message(),
            "InvalidArgumentError: Output only has 16 elements but computation requested would use element with "
            "index=31");
  // A deeper gradient than the input.
  Call depth("AvgPoolGrad", Pool({"1", "2", "2", "1"}, {"1", "2", "2", "1"}, "VALID"),
             {HostTensor(DType::kInt32, {4}, {1, 4, 4, 1}), Zeros({1, 2, 2, 3})});
  EXPECT_FALSE(PlanAvgPoolGrad(depth.context, kCpu).ok());
  // Rows starting past the input: TensorFlow's own refusal.
  Call rows("AvgPoolGrad", Pool({"1", "2", "2", "1"}, {"1", "2", "2", "1"}, "VALID"),
            {HostTensor(DType::kInt32, {4}, {1, 4, 4, 1}), Zeros({1, 4, 2, 1})});
  EXPECT_EQ(PlanAvgPoolGrad(rows.context, kCpu).status().message(),
            "InvalidArgumentError: index * stride must be less than or equal to input size");
  Call sizes("AvgPoolGrad", Pool({"1", "2", "2", "1"}, {"1", "2", "2", "1"}, "VALID"),
             {HostTensor(DType::kInt32, {3}, {1, 4, 4}), Zeros({1, 2, 2, 1})});
  EXPECT_EQ(PlanAvgPoolGrad(sizes.context, kCpu).status().message(),
            "InvalidArgumentError: out_backprop must be 1-dimensional and 4 elements");
}

TEST(NnShapesTest, BroadcastWindowsAreTensorFlows) {
  // SAME, window 5 over 4 values: the forward averages rows 0-2 for output
  // 0; TensorFlow's gradient spreads it over all 4 (its GetBroadcastSize).
  int64_t size = 0;
  EXPECT_EQ(PoolGeometry::BroadcastSize(0, 4, 5, 1, 2, &size), 0);
  EXPECT_EQ(size, 4);
  // Stride 2, window 3, padding 1: output 1 covers rows 1-3.
  EXPECT_EQ(PoolGeometry::BroadcastSize(1, 7, 3, 2, 1, &size), 1);
  EXPECT_EQ(size, 3);
  // The last window cut by the end.
  EXPECT_EQ(PoolGeometry::BroadcastSize(3, 7, 3, 2, 1, &size), 5);
  EXPECT_EQ(size, 2);
}

TEST(NnShapesTest, LrnOnAGpuHasCudnnsLimits) {
  auto lrn = [](const std::string& radius, const std::string& bias, const std::string& beta) {
    return std::map<std::string, std::vector<std::string>>{
        {"depth_radius", {radius}}, {"bias", {bias}}, {"alpha", {"1"}}, {"beta", {beta}}};
  };
  Call cpu("LRN", lrn("9", "0", "0.001"), {Zeros({1, 2, 2, 12})});
  StatusOr<LrnPlan> plan = PlanLrn(cpu.context, {&cpu.context.inputs[0]}, kCpu);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->rows, 4);
  EXPECT_EQ(plan->depth, 12);
  Call radius("LRN", lrn("9", "1", "0.5"), {Zeros({1, 2, 2, 12})});
  EXPECT_EQ(PlanLrn(radius.context, {&radius.context.inputs[0]}, kGpu).status().message(),
            "InvalidArgumentError: cuDNN requires depth_radius in [1, 7], got: 9");
  Call beta("LRN", lrn("2", "1", "0.001"), {Zeros({1, 2, 2, 12})});
  EXPECT_EQ(PlanLrn(beta.context, {&beta.context.inputs[0]}, kGpu).status().message(),
            "InvalidArgumentError: cuDNN requires beta >= 0.01, got: 0.001");
}

TEST(NnShapesTest, BatchNormChecksTheStatisticsItReads) {
  // Training with the default factor reads no running statistics: empty
  // ones (tf.compat.v1.nn.fused_batch_norm's) are fine.
  Call train("FusedBatchNormV3", {{"is_training", {"true"}}},
             {Zeros({2, 2, 2, 3}), Zeros({3}), Zeros({3}), Zeros({0}), Zeros({0})});
  StatusOr<BatchNormPlan> plan = PlanBatchNorm(train.context);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->channels, 3);
  // An average with them reads them.
  Call average("FusedBatchNormV3", {{"is_training", {"true"}}, {"exponential_avg_factor", {"0.5"}}},
               {Zeros({2, 2, 2, 3}), Zeros({3}), Zeros({3}), Zeros({0}), Zeros({3})});
  EXPECT_EQ(PlanBatchNorm(average.context).status().message(),
            "InvalidArgumentError: mean must have the same number of elements as the channels of x, got 0 and 3");
  Call nchw("FusedBatchNormV3", {{"is_training", {"false"}}, {"data_format", {"NCHW"}}},
            {Zeros({2, 3, 4, 5}), Zeros({3}), Zeros({3}), Zeros({3}), Zeros({3})});
  plan = PlanBatchNorm(nchw.context);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->nchw);
  EXPECT_EQ(plan->channels, 3);
  Call grad("FusedBatchNormGradV3", {},
            {Zeros({2, 2, 2, 3}), Zeros({2, 2, 3, 3}), Zeros({3}), Zeros({3}), Zeros({3}), Zeros({0})});
  EXPECT_EQ(PlanBatchNormGrad(grad.context).status().message(),
            "InvalidArgumentError: x and y_backprop must have same shape, but x has shape [2,2,3,3] and y_backprop "
            "has shape [2,2,2,3]");
}

}  // namespace
}  // namespace tfrun
