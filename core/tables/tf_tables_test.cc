#include "core/tables/tf_tables.h"

#include <gtest/gtest.h>

namespace tfrun {
namespace {

NodeAttrs TypeAttr(const std::string& name, const std::string& table_type) {
  NodeAttrs attrs;
  attrs[name] = AttrValue{"type", {table_type}};
  return attrs;
}

// Facts checked against TensorFlow 2.21's CUDA build
// (../shared/notes/tf-placer-and-graphdef.md section 1, and
// kernels.get_registered_kernels_for_op / _pywrap_kernel_registry.TryFindKernelClass).
TEST(TfTablesTest, TheTablesAreTensorFlow221s) {
  EXPECT_EQ(TfTablesVersion(), "2.21.0");
  EXPECT_EQ(AllTfOpNames().size(), 1910u);
}

TEST(TfTablesTest, OpDefsHaveTheirArgumentsAndAttrs) {
  const TfOpDef* matmul = FindTfOp("MatMul");
  ASSERT_NE(matmul, nullptr);
  ASSERT_EQ(matmul->inputs.size(), 2u);
  EXPECT_EQ(matmul->inputs[0].name, "a");
  EXPECT_EQ(matmul->inputs[0].type_attr, "T");
  EXPECT_EQ(matmul->outputs[0].name, "product");
  const TfAttrDef* transpose_a = matmul->FindAttr("transpose_a");
  ASSERT_NE(transpose_a, nullptr);
  EXPECT_EQ(transpose_a->type, "bool");
  ASSERT_TRUE(transpose_a->default_value.has_value());
  EXPECT_EQ(transpose_a->default_value->items, std::vector<std::string>{"false"});

  const TfOpDef* variable = FindTfOp("VariableV2");
  ASSERT_NE(variable, nullptr);
  EXPECT_TRUE(variable->is_stateful);
  EXPECT_TRUE(variable->outputs[0].is_ref);

  const TfOpDef* addn = FindTfOp("AddN");
  EXPECT_EQ(addn->inputs[0].number_attr, "N");
  const TfOpDef* shape = FindTfOp("Shape");
  EXPECT_EQ(shape->FindAttr("out_type")->default_value->items, std::vector<std::string>{"INT32"});
  EXPECT_EQ(shape->FindAttr("out_type")->allowed, (std::vector<std::string>{"INT32", "INT64"}));
  const TfOpDef* conv = FindTfOp("Conv2D");
  EXPECT_EQ(conv->FindAttr("data_format")->default_value->items, std::vector<std::string>{"NHWC"});
  EXPECT_EQ(conv->FindAttr("padding")->allowed, (std::vector<std::string>{"SAME", "VALID", "EXPLICIT"}));

  EXPECT_EQ(FindTfOp("NoSuchOp"), nullptr);
  EXPECT_EQ(FindTfOp(""), nullptr);
  EXPECT_NE(FindTfOp("_Arg"), nullptr);  // the first and last names of the sorted table
  EXPECT_NE(FindTfOp("A"), nullptr);
  EXPECT_NE(FindTfOp("ZerosLike"), nullptr);
}

TEST(TfTablesTest, KernelLookupFollowsTensorFlow) {
  const TfOpDef& matmul = *FindTfOp("MatMul");
  auto gpu_float = FindKernelDef(matmul, "GPU", TypeAttr("T", "FLOAT"), false);
  ASSERT_TRUE(gpu_float.ok());
  EXPECT_NE(*gpu_float, nullptr);
  // No int32 MatMul on GPUs (TryFindKernelClass gives '').
  EXPECT_EQ(*FindKernelDef(matmul, "GPU", TypeAttr("T", "INT32"), false), nullptr);
  EXPECT_NE(*FindKernelDef(matmul, "CPU", TypeAttr("T", "INT32"), false), nullptr);
  // XLA_CPU's MatMul exists only once the XLA devices do.
  EXPECT_EQ(*FindKernelDef(matmul, "XLA_CPU", TypeAttr("T", "FLOAT"), false), nullptr);
  EXPECT_NE(*FindKernelDef(matmul, "XLA_CPU", TypeAttr("T", "FLOAT"), true), nullptr);

  // int32 AddN on a GPU: the DEFAULT kernel, in host memory.
  const TfKernelDef* addn = *FindKernelDef(*FindTfOp("AddN"), "GPU", TypeAttr("T", "INT32"), false);
  ASSERT_NE(addn, nullptr);
  EXPECT_EQ(addn->device_type, "DEFAULT");
  EXPECT_EQ(addn->host_memory_args, (std::vector<std::string_view>{"inputs", "sum"}));
  // NoOp has no CPU kernel of its own: DEFAULT serves CPU too.
  const TfKernelDef* noop = *FindKernelDef(*FindTfOp("NoOp"), "CPU", {}, false);
  ASSERT_NE(noop, nullptr);
  EXPECT_EQ(noop->device_type, "DEFAULT");
  // No int32 VariableV2 on GPUs.
  EXPECT_EQ(*FindKernelDef(*FindTfOp("VariableV2"), "GPU", TypeAttr("dtype", "INT32"), false), nullptr);

  // A constraint on an attr the node lacks is an error.
  EXPECT_FALSE(FindKernelDef(matmul, "GPU", {}, false).ok());
}

TEST(TfTablesTest, PriorityOrdersTheSupportedTypes) {
  // IteratorGetNext: CPU priority 2, GPU 1: CPU first though GPU ranks higher.
  NodeAttrs attrs;
  attrs["output_types"] = AttrValue{"list(type)", {"FLOAT"}};
  attrs["output_shapes"] = AttrValue{"list(shape)", {"?"}};
  auto types = SupportedDeviceTypes(*FindTfOp("IteratorGetNext"), {"GPU", "CPU"}, attrs, false);
  ASSERT_TRUE(types.ok());
  ASSERT_EQ(types->size(), 2u);
  EXPECT_EQ((*types)[0].first, "CPU");
  EXPECT_EQ((*types)[0].second, 2);
  EXPECT_EQ((*types)[1].first, "GPU");
}

TEST(TfTablesTest, KernelListingAsTensorFlowPrintsIt) {
  // NcclAllReduce, as TensorFlow 2.21 lists it on a machine without GPUs
  // (../shared/notes/tf-placer-and-graphdef.md 2.7).
  EXPECT_EQ(KernelsRegisteredForOp(*FindTfOp("NcclAllReduce"), false), "  device='GPU'\n");
  EXPECT_EQ(KernelsRegisteredForOp(*FindTfOp("A"), false), "  <no registered kernels>\n");
  const std::string matmul = KernelsRegisteredForOp(*FindTfOp("MatMul"), false);
  EXPECT_NE(matmul.find("  device='GPU'; T in [DT_FLOAT]\n"), std::string::npos) << matmul;
  EXPECT_EQ(matmul.find("XLA_CPU"), std::string::npos) << matmul;
}

TEST(TfTablesTest, AttrValuesSummarizeAsTensorFlowDoes) {
  EXPECT_EQ(SummarizeAttrValue(AttrValue{"type", {"FLOAT"}}), "DT_FLOAT");
  EXPECT_EQ(SummarizeAttrValue(AttrValue{"string", {"sum"}}), "\"sum\"");
  EXPECT_EQ(SummarizeAttrValue(AttrValue{"shape", {"(-1x3)"}}), "[?,3]");
  EXPECT_EQ(SummarizeAttrValue(AttrValue{"shape", {"?"}}), "<unknown>");
  EXPECT_EQ(SummarizeAttrValue(AttrValue{"list(type)", {"FLOAT", "HALF"}}), "[DT_FLOAT, DT_HALF]");
  EXPECT_EQ(SummarizeAttrValue(AttrValue{"string", {"a\"b\n"}}), "\"a\\\"b\\n\"");
  NodeAttrs attrs = TypeAttr("T", "FLOAT");
  AddDefaultAttrs(*FindTfOp("MatMul"), &attrs);
  EXPECT_EQ(SummarizeAttrs(attrs), "T=DT_FLOAT, grad_a=false, grad_b=false, transpose_a=false, transpose_b=false");
}

TEST(TfTablesTest, DTypeNames) {
  EXPECT_EQ(TableTypeName(DType::kFloat32), "FLOAT");
  EXPECT_EQ(TableTypeName(DType::kFloat16), "HALF");
  EXPECT_EQ(DTypeOfTableType("INT64"), DType::kInt64);
  EXPECT_EQ(DTypeOfTableType("RESOURCE"), std::nullopt);
  EXPECT_EQ(PythonDTypeName("FLOAT"), "float32");
  EXPECT_EQ(PythonDTypeName("QINT8"), "qint8");
}

}  // namespace
}  // namespace tfrun
