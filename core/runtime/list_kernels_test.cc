// The tensor-list kernels against TensorFlow 2.21: the values and error
// texts are what its eager list_ops gave for the same inputs (measured;
// the end-to-end runs are graphs/tf/call_tensor_array.run and
// sm_keras_lstm.run).
#include "core/runtime/list_kernels.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/base/device_types.h"

namespace tfrun {
namespace {

Tensor Numbers(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t = *Tensor::AllocateHost(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kInt32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.data<float>()[i] = static_cast<float>(values[i]);
    }
  }
  return t;
}
Tensor Floats(Shape shape, const std::vector<double>& v) { return Numbers(DType::kFloat32, std::move(shape), v); }
Tensor Int(int value) { return Numbers(DType::kInt32, {}, {static_cast<double>(value)}); }
Tensor Ints(const std::vector<double>& v) { return Numbers(DType::kInt32, {static_cast<int64_t>(v.size())}, v); }

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}

struct OpRun {
  Status status;
  std::vector<Tensor> outputs;  // output 0 first
};

// Runs list op `op` (node dtype `dtype`, its first output's) on CPU:0 with
// element_dtype float and `attrs` besides.
OpRun RunOp(const std::string& op, DType dtype, std::vector<Tensor> inputs, NodeAttrs attrs = {}) {
  KernelRegistry registry;
  BindListKernels(&registry, kCpu);
  Node node;
  node.name = "k";
  node.op = op;
  node.dtype = dtype;
  attrs.emplace("element_dtype", AttrValue{"type", {"FLOAT"}});
  const std::string device = "/job:localhost/replica:0/task:0/device:CPU:0";
  VariableStore variables;
  DeviceConstants constants;
  KernelContext context{node, std::move(inputs), CpuAllocator(), device, &variables, &constants, nullptr};
  context.attrs = &attrs;
  const KernelFn kernel = registry.Find(op, kCpu, dtype);
  EXPECT_NE(kernel, nullptr) << op;
  OpRun run{kernel(context), {}};
  if (!context.outputs.empty()) {
    run.outputs = context.outputs;
  } else {
    run.outputs.push_back(context.output);
  }
  return run;
}

// tensor_list_reserve(element_shape=[2], num_elements=3, element_dtype=float32)
Tensor Reserved() { return RunOp("TensorListReserve", DType::kVariant, {Ints({2}), Int(3)}).outputs[0]; }

TEST(ListKernelsTest, UnsetElementsReadAsZerosAndSetOnesAsSet) {
  const Tensor list = Reserved();
  OpRun zeros = RunOp("TensorListGetItem", DType::kFloat32, {list, Int(1), Int(-1)});
  ASSERT_TRUE(zeros.status.ok()) << zeros.status.message();
  EXPECT_EQ(zeros.outputs[0].shape(), (Shape{2}));
  EXPECT_EQ(Values(zeros.outputs[0]), (std::vector<double>{0, 0}));
  OpRun set = RunOp("TensorListSetItem", DType::kVariant, {list, Int(1), Floats({2}, {1, 2})});
  ASSERT_TRUE(set.status.ok()) << set.status.message();
  OpRun stacked = RunOp("TensorListStack", DType::kFloat32, {set.outputs[0], Int(-1)});
  ASSERT_TRUE(stacked.status.ok()) << stacked.status.message();
  EXPECT_EQ(stacked.outputs[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(Values(stacked.outputs[0]), (std::vector<double>{0, 0, 1, 2, 0, 0}));
  // The list set from stays as it was.
  EXPECT_EQ(Values(RunOp("TensorListGetItem", DType::kFloat32, {list, Int(1), Int(-1)}).outputs[0]),
            (std::vector<double>{0, 0}));
  EXPECT_EQ(Values(RunOp("TensorListLength", DType::kInt32, {set.outputs[0]}).outputs[0]), (std::vector<double>{3}));
}

TEST(ListKernelsTest, FromTensorSplitsAndPopBackTakesTheLast) {
  OpRun list = RunOp("TensorListFromTensor", DType::kVariant, {Floats({3, 2}, {1, 2, 3, 4, 5, 6}), Ints({2})});
  ASSERT_TRUE(list.status.ok()) << list.status.message();
  OpRun popped = RunOp("TensorListPopBack", DType::kVariant, {list.outputs[0], Int(-1)});
  ASSERT_TRUE(popped.status.ok()) << popped.status.message();
  ASSERT_EQ(popped.outputs.size(), 2u);
  EXPECT_EQ(Values(popped.outputs[1]), (std::vector<double>{5, 6}));
  OpRun pushed = RunOp("TensorListPushBack", DType::kVariant, {popped.outputs[0], Floats({2}, {7, 8})});
  ASSERT_TRUE(pushed.status.ok());
  EXPECT_EQ(Values(RunOp("TensorListStack", DType::kFloat32, {pushed.outputs[0], Int(-1)}).outputs[0]),
            (std::vector<double>{1, 2, 3, 4, 7, 8}));
  OpRun shape = RunOp("TensorListElementShape", DType::kInt32, {list.outputs[0]});
  EXPECT_EQ(Values(shape.outputs[0]), (std::vector<double>{2}));
  // An unknown element shape is the scalar -1.
  OpRun unknown = RunOp("TensorListReserve", DType::kVariant, {Int(-1), Int(3)});
  OpRun unknown_shape = RunOp("TensorListElementShape", DType::kInt32, {unknown.outputs[0]});
  EXPECT_EQ(unknown_shape.outputs[0].rank(), 0);
  EXPECT_EQ(Values(unknown_shape.outputs[0]), (std::vector<double>{-1}));
  // An empty list of a known element shape stacks to (0, 2).
  OpRun empty = RunOp("EmptyTensorList", DType::kVariant, {Ints({2}), Int(-1)});
  OpRun empty_stack = RunOp("TensorListStack", DType::kFloat32, {empty.outputs[0], Int(-1)});
  ASSERT_TRUE(empty_stack.status.ok()) << empty_stack.status.message();
  EXPECT_EQ(empty_stack.outputs[0].shape(), (Shape{0, 2}));
}

TEST(ListKernelsTest, ErrorsAreTensorFlowsTexts) {
  const Tensor list = Reserved();
  auto message = [](const OpRun& r) { return std::string(r.status.message()); };
  EXPECT_EQ(message(RunOp("TensorListGetItem", DType::kFloat32, {list, Int(5), Int(-1)})),
            "InvalidArgumentError: Trying to access element 5 in a list with 3 elements.");
  NodeAttrs ints;
  ints["element_dtype"] = AttrValue{"type", {"INT32"}};
  EXPECT_EQ(message(RunOp("TensorListGetItem", DType::kInt32, {list, Int(1), Int(-1)}, ints)),
            "InvalidArgumentError: Invalid data types; op elements int32 but list elements float");
  EXPECT_EQ(message(RunOp("TensorListSetItem", DType::kVariant, {list, Int(4), Floats({2}, {1, 2})})),
            "InvalidArgumentError: Trying to modify element 4 in a list with 3 elements.");
  EXPECT_EQ(message(RunOp("TensorListSetItem", DType::kVariant, {list, Int(1), Floats({3}, {1, 2, 3})})),
            "InvalidArgumentError: Tried to set a tensor with incompatible shape at a list index. Item element "
            "shape: [3] list shape: [2]");
  const Tensor unknown = RunOp("TensorListReserve", DType::kVariant, {Int(-1), Int(3)}).outputs[0];
  EXPECT_EQ(message(RunOp("TensorListGetItem", DType::kFloat32, {unknown, Int(1), Int(-1)})),
            "InvalidArgumentError: Trying to read an uninitialized tensor but element_shape is not fully defined: "
            "<unknown> and no list element is set.");
  EXPECT_EQ(message(RunOp("TensorListStack", DType::kFloat32, {unknown, Int(-1)})),
            "InvalidArgumentError: Tried to stack list which only contains uninitialized tensors and has a "
            "non-fully-defined element_shape: <unknown>");
  NodeAttrs two;
  two["num_elements"] = AttrValue{"int", {"2"}};
  EXPECT_EQ(message(RunOp("TensorListStack", DType::kFloat32, {list, Int(-1)}, two)),
            "InvalidArgumentError: Operation expected a list with 2 elements but got a list with 3 elements.");
  const Tensor empty = RunOp("EmptyTensorList", DType::kVariant, {Ints({2}), Int(-1)}).outputs[0];
  EXPECT_EQ(message(RunOp("TensorListPopBack", DType::kVariant, {empty, Int(-1)})),
            "InvalidArgumentError: Trying to pop from an empty list.");
  const Tensor empty_unknown = RunOp("EmptyTensorList", DType::kVariant, {Int(-1), Int(-1)}).outputs[0];
  EXPECT_EQ(message(RunOp("TensorListStack", DType::kFloat32, {empty_unknown, Int(-1)})),
            "InvalidArgumentError: Tried to stack elements of an empty list with non-fully-defined element_shape: "
            "<unknown>");
  EXPECT_EQ(message(RunOp("TensorListFromTensor", DType::kVariant, {Floats({}, {1}), Ints({})})),
            "InvalidArgumentError: Tensor must be at least a vector, but saw shape: []");
  EXPECT_EQ(message(RunOp("TensorListFromTensor", DType::kVariant, {Floats({1, 2}, {1, 2}), Ints({3})})),
            "InvalidArgumentError: Specified a list with shape [3] from a tensor with shape [2]");
  EXPECT_EQ(message(RunOp("TensorListReserve", DType::kVariant, {Ints({2}), Int(-1)})),
            "InvalidArgumentError: The num_elements to reserve must be a non negative number, but got -1");
  // A list too long to hold: an error, never an allocation of terabytes.
  EXPECT_EQ(message(RunOp("TensorListReserve", DType::kVariant, {Ints({2}), Int(2000000000)})),
            "ResourceExhaustedError: a tensor list of 2000000000 elements (tfrun holds at most 67108864)");
  NodeAttrs resize;
  resize["resize_if_index_out_of_bounds"] = AttrValue{"bool", {"true"}};
  EXPECT_EQ(message(RunOp("TensorListSetItem", DType::kVariant, {list, Int(2000000000), Floats({2}, {1, 2})}, resize)),
            "ResourceExhaustedError: a tensor list of 2000000001 elements (tfrun holds at most 67108864)");
  // Not a list: an error, never a read of a float's bytes as one.
  EXPECT_EQ(message(RunOp("TensorListLength", DType::kInt32, {Floats({2}, {1, 2})})),
            "InvalidArgumentError: Input handle is not a list. Saw: 'a float tensor'");
}

}  // namespace
}  // namespace tfrun
