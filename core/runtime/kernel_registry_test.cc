// The kernels every device shares that compute something (Reshape, Shape,
// Fill), against TensorFlow 2.21: the error texts are those its Session
// raised for the same inputs (testdata/golden/DERIVATIONS.md, "Reshape,
// Shape and Fill").
#include "core/runtime/kernel_registry.h"

#include <gtest/gtest.h>

#include <vector>

namespace tfrun {
namespace {

Tensor HostTensor(DType dtype, Shape shape, const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::AllocateHost(dtype, std::move(shape));
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt32) {
      t->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else if (dtype == DType::kInt64) {
      t->data<int64_t>()[i] = static_cast<int64_t>(values[i]);
    } else {
      t->data<float>()[i] = static_cast<float>(values[i]);
    }
  }
  return *t;
}

struct KernelRun {
  Status status;
  Tensor output;
};

// Runs `kernel` as a node of `op` with output dtype `dtype` on CPU:0, with
// `variables` (a store of its own when null).
KernelRun RunKernel(KernelFn kernel, const std::string& op, DType dtype, std::vector<Tensor> inputs,
                    VariableStore* variables = nullptr) {
  Node node;
  node.name = "k";
  node.op = op;
  node.dtype = dtype;
  const std::string device = "/job:localhost/replica:0/task:0/device:CPU:0";
  VariableStore own;
  DeviceConstants constants;
  KernelContext context{node, std::move(inputs), CpuAllocator(), device, variables ? variables : &own, &constants,
                        nullptr};
  Status status = kernel(context);
  return {status, context.output};
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}

Tensor Floats(Shape shape, const std::vector<double>& values) { return HostTensor(DType::kFloat32, shape, values); }
Tensor Ints(const std::vector<double>& values) {
  return HostTensor(DType::kInt32, {static_cast<int64_t>(values.size())}, values);
}

KernelRun Reshape(const Tensor& input, const Tensor& sizes) {
  return RunKernel(ReshapeKernel, "Reshape", input.dtype(), {input, sizes});
}

TEST(ReshapeKernelTest, InfersTheMinusOneAndSharesTheBuffer) {
  const Tensor x = Floats({4}, {1, 2, 3, 4});
  KernelRun r = Reshape(x, Ints({2, -1}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.output.shape(), (Shape{2, 2}));
  EXPECT_EQ(r.output.raw(), x.raw());
  EXPECT_EQ(Values(r.output), (std::vector<double>{1, 2, 3, 4}));
}

TEST(ReshapeKernelTest, ToAScalarAndFromAnEmptyTensor) {
  KernelRun scalar = Reshape(Floats({1}, {5}), Ints({}));
  ASSERT_TRUE(scalar.status.ok());
  EXPECT_EQ(scalar.output.rank(), 0);
  // TensorFlow leaves the zero out of the product: [0, -1] of an empty
  // tensor is (0, 1).
  KernelRun empty = Reshape(Floats({0}, {}), Ints({0, -1}));
  ASSERT_TRUE(empty.status.ok()) << empty.status.message();
  EXPECT_EQ(empty.output.shape(), (Shape{0, 1}));
}

TEST(ReshapeKernelTest, TensorFlowsErrors) {
  const Tensor x = Floats({4}, {1, 2, 3, 4});
  const std::vector<std::pair<Tensor, std::string>> cases = {
      {Ints({3, 2}), "Input to reshape is a tensor with 4 values, but the requested shape has 6"},
      {Ints({-1, 3}), "Input to reshape is a tensor with 4 values, but the requested shape requires a multiple of 3"},
      {Ints({-1, -1}), "Only one input size may be -1, not both 0 and 1"},
      {Ints({2, -2}), "Size 1 must be non-negative, not -2"},
      {HostTensor(DType::kInt32, {1, 2}, {2, 2}), "sizes input must be 1-D, not [1,2]"},
      {Ints({}), "Input to reshape is a tensor with 4 values, but the requested shape has 1"},
  };
  for (const auto& [sizes, text] : cases) {
    KernelRun r = Reshape(x, sizes);
    EXPECT_EQ(r.status.message(), "InvalidArgumentError: " + text);
  }
}

TEST(ShapeKernelTest, DimensionsInTheOutType) {
  for (DType out : {DType::kInt32, DType::kInt64}) {
    KernelRun r = RunKernel(ShapeKernel, "Shape", out, {Floats({2, 3, 1}, {1, 2, 3, 4, 5, 6})});
    ASSERT_TRUE(r.status.ok());
    EXPECT_EQ(r.output.dtype(), out);
    EXPECT_EQ(Values(r.output), (std::vector<double>{2, 3, 1}));
  }
}

TEST(FillKernelTest, FillsAndFailsAsTensorFlow) {
  KernelRun f = RunKernel(FillKernel, "Fill", DType::kFloat32, {Ints({2, 3}), Floats({}, {7})});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(f.output.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values(f.output), std::vector<double>(6, 7.0));
  KernelRun empty = RunKernel(FillKernel, "Fill", DType::kFloat32, {Ints({0, 3}), Floats({}, {1})});
  ASSERT_TRUE(empty.status.ok());
  EXPECT_EQ(empty.output.shape(), (Shape{0, 3}));

  EXPECT_EQ(RunKernel(FillKernel, "Fill", DType::kFloat32, {Ints({2, -1}), Floats({}, {1})}).status.message(),
            "InvalidArgumentError: Dimension -1 must be >= 0");
  EXPECT_EQ(
      RunKernel(FillKernel, "Fill", DType::kFloat32, {HostTensor(DType::kInt32, {1, 1}, {2}), Floats({}, {1})})
          .status.message(),
      "InvalidArgumentError: dims must represent a vector, got shape [1,1]");
  EXPECT_EQ(RunKernel(FillKernel, "Fill", DType::kFloat32, {Ints({2}), Floats({2}, {1, 2})}).status.message(),
            "InvalidArgumentError: value must represent a scalar, got shape [2]");
}

// Resource variables: the dtype checks of resource_variable_ops.cc, in the
// texts TensorFlow 2.21's Session raised for the same graphs (two
// VarHandleOps of one shared_name and different dtypes; DERIVATIONS.md,
// "Resource variables of the wrong dtype"). A variable read as another
// dtype would hand its consumer too few bytes.
Tensor Handle(const std::string& shared_name) {
  StatusOr<Tensor> t = Tensor::FromStrings({}, {"localhost/" + shared_name});
  EXPECT_TRUE(t.ok());
  return *t;
}

Tensor Bools(const std::vector<double>& values) {
  StatusOr<Tensor> t = Tensor::AllocateHost(DType::kBool, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t->data<bool>()[i] = values[i] != 0;
  return *t;
}

TEST(ResourceVariableKernelTest, AReadOrAssignOfAnotherDtypeIsTensorFlowsError) {
  VariableStore variables;
  ASSERT_TRUE(RunKernel(AssignVariableKernel, "AssignVariableOp", DType::kBool, {Handle("w"), Bools({1, 0})},
                        &variables)
                  .status.ok());
  EXPECT_EQ(RunKernel(ReadVariableKernel, "ReadVariableOp", DType::kFloat64, {Handle("w")}, &variables).status.message(),
            "InvalidArgumentError: Trying to read variable with wrong dtype. Expected double got bool");
  EXPECT_EQ(RunKernel(AssignVariableKernel, "AssignVariableOp", DType::kFloat32, {Handle("w"), Floats({2}, {1, 2})},
                      &variables)
                .status.message(),
            "InvalidArgumentError: Trying to assign variable with wrong dtype. Expected bool got float");
  // The variable is as it was, and reads in its own dtype.
  KernelRun read = RunKernel(ReadVariableKernel, "ReadVariableOp", DType::kBool, {Handle("w")}, &variables);
  ASSERT_TRUE(read.status.ok()) << read.status.message();
  EXPECT_EQ(Values(read.output), (std::vector<double>{1, 0}));
  // Another value of its dtype and any shape replaces it (validate_shape=false).
  EXPECT_TRUE(RunKernel(AssignVariableKernel, "AssignVariableOp", DType::kBool, {Handle("w"), Bools({1, 1, 1})},
                        &variables)
                  .status.ok());
  // With validate_shape, TensorFlow's text for another shape.
  Node node;
  node.name = "k";
  node.op = "AssignVariableOp";
  NodeAttrs attrs{{"validate_shape", AttrValue{"bool", {"true"}}}};
  DeviceConstants constants;
  KernelContext c{node, {Handle("w"), Bools({1, 1})}, CpuAllocator(), "/job:localhost/replica:0/task:0/device:CPU:0",
                  &variables, &constants, nullptr};
  c.attrs = &attrs;
  EXPECT_EQ(AssignVariableKernel(c).message(),
            "InvalidArgumentError: Trying to assign to variable with tensor with wrong shape. Expected [3] got [2]");
}

TEST(ResourceVariableKernelTest, AnInputThatIsNoHandleIsAnErrorNotARead) {
  VariableStore variables;
  // A float tensor where the handle goes (a resource fed or made by a
  // hostile graph): its bytes are never taken for a handle's.
  for (KernelFn kernel : {ReadVariableKernel, VarIsInitializedKernel}) {
    KernelRun r = RunKernel(kernel, "ReadVariableOp", DType::kFloat32, {Floats({2, 2}, {1, 2, 3, 4})}, &variables);
    EXPECT_EQ(r.status.message(), "InvalidArgumentError: input 0 of ReadVariableOp must be a resource handle (a "
                                  "VarHandleOp's output); got a float tensor of shape [2,2]");
  }
  EXPECT_FALSE(RunKernel(AssignVariableKernel, "AssignVariableOp", DType::kFloat32,
                         {Tensor::FromStrings({2}, {"a", "b"}).value(), Floats({1}, {1})}, &variables)
                   .status.ok());
}

TEST(ResourceVariableKernelTest, ReferenceAndResourceVariablesNeverShareAName) {
  VariableStore variables;
  variables.ref["localhost/w"] = Bools({1});  // a VariableV2 named localhost/w
  EXPECT_EQ(RunKernel(VarIsInitializedKernel, "VarIsInitializedOp", DType::kBool, {Handle("w")}, &variables)
                .output.data<bool>()[0],
            false);
  KernelRun read = RunKernel(ReadVariableKernel, "ReadVariableOp", DType::kFloat64, {Handle("w")}, &variables);
  EXPECT_NE(read.status.message().find("Could not find variable w."), std::string::npos) << read.status.message();
}

// A reference variable's Assign checks the value's shape against the
// variable's (validate_shape, true by default), as AssignOp does; it
// replaced the variable silently.
TEST(AssignKernelTest, ValidateShapeAsTensorFlow) {
  Node node;
  node.name = "a";
  node.op = "Assign";
  node.variable = "v";
  VariableStore variables;
  DeviceConstants constants;
  const std::string device = "/job:localhost/replica:0/task:0/device:CPU:0";
  NodeAttrs attrs;
  auto assign = [&](const Tensor& old_value, const Tensor& value) {
    KernelContext c{node, {old_value, value}, CpuAllocator(), device, &variables, &constants, nullptr};
    c.attrs = &attrs;
    return AssignKernel(c);
  };
  EXPECT_TRUE(assign(Tensor(), Floats({2}, {1, 2})).ok());  // uninitialized: nothing to compare
  EXPECT_TRUE(assign(Floats({2}, {1, 2}), Floats({2}, {3, 4})).ok());
  EXPECT_EQ(assign(Floats({2}, {1, 2}), Floats({3}, {1, 2, 3})).message(),
            "InvalidArgumentError: Assign requires shapes of both tensors to match. lhs shape= [2] rhs shape= [3]");
  attrs.emplace("validate_shape", AttrValue{"bool", {"false"}});
  EXPECT_TRUE(assign(Floats({2}, {1, 2}), Floats({3}, {1, 2, 3})).ok());
  EXPECT_EQ(variables.ref["v"].shape(), Shape{3});
}

}  // namespace
}  // namespace tfrun
