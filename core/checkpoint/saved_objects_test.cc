// TF2's object-based restore of a SavedModel's captures, on the bundle
// TensorFlow 2.21 wrote for graphs/tf/sm_module (make_tf2_calls.py): its
// object graph's root has children w, steps, scale (variables), serve and
// signatures; the values are the module's initial ones.
#include "core/checkpoint/saved_objects.h"

#include <gtest/gtest.h>

namespace tfrun {
namespace {

using Kind = Graph::SavedObject::Kind;

// The module's captured constant, [10, 20].
const Tensor* Offset(const std::string& name) {
  static const Tensor offset = [] {
    Tensor t = *Tensor::AllocateHost(DType::kFloat32, {2});
    t.data<float>()[0] = 10;
    t.data<float>()[1] = 20;
    return t;
  }();
  return name == "Const" ? &offset : nullptr;
}

Graph::SavedObject Variable(const std::string& name, DType dtype, Shape shape) {
  Graph::SavedObject object;
  object.kind = Kind::kVariable;
  object.name = name;
  object.dtype = dtype;
  object.shape = std::move(shape);
  return object;
}

// The module's objects, numbered unlike the checkpoint's (the restore
// matches them by child name, not by id): 0 the root, 1 the constant,
// 2 scale, 3 w, 4 steps.
Graph::SavedObjects ModuleObjects() {
  Graph::SavedObjects objects;
  objects.variables = "graphs/tf/sm_module/variables/variables";
  Graph::SavedObject root;
  root.children = {{"scale", 2}, {"w", 3}, {"steps", 4}};
  Graph::SavedObject constant;
  constant.kind = Kind::kConstant;
  constant.name = "Const";
  objects.objects = {root, constant, Variable("scale", DType::kFloat64, {2}), Variable("w", DType::kFloat32, {2, 2}),
                     Variable("steps", DType::kInt64, {})};
  objects.bound_inputs = {{"f", {3, 1, 4, 2}}};
  return objects;
}

TEST(SavedObjectsTest, RestoresVariablesByChildNameAndConstantsByNode) {
  const Graph::SavedObjects objects = ModuleObjects();
  auto constant = Offset;
  StatusOr<std::vector<CapturedValue>> captures = RestoreCaptures(objects, "f", constant);
  ASSERT_TRUE(captures.ok()) << captures.status().message();
  ASSERT_EQ(captures->size(), 4u);
  const CapturedValue& w = (*captures)[0];
  EXPECT_TRUE(w.variable);
  EXPECT_EQ(w.checkpoint_key, "w/.ATTRIBUTES/VARIABLE_VALUE");
  EXPECT_EQ(w.value.shape(), (Shape{2, 2}));
  EXPECT_EQ(std::vector<float>(w.value.data<float>(), w.value.data<float>() + 4),
            (std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f}));
  EXPECT_FALSE((*captures)[1].variable);
  EXPECT_EQ((*captures)[1].value.data<float>()[1], 20.0f);
  EXPECT_EQ((*captures)[2].checkpoint_key, "steps/.ATTRIBUTES/VARIABLE_VALUE");
  EXPECT_EQ((*captures)[2].value.data<int64_t>()[0], 7);
  EXPECT_EQ((*captures)[3].value.data<double>()[1], 2.0);
  EXPECT_TRUE(RestoreCaptures(objects, "g", constant)->empty());  // captures nothing
}

TEST(SavedObjectsTest, RefusesWhatItCannotRestoreInOneLine) {
  auto no_constant = [](const std::string&) -> const Tensor* { return nullptr; };
  Graph::SavedObjects objects = ModuleObjects();
  // A variable the checkpoint's graph does not reach (its child renamed).
  objects.objects[0].children[1].first = "weights";
  EXPECT_EQ(VariableCheckpointKeys(*TensorBundleReader::Open(objects.variables), objects, {3}).status().message(),
            "graphs/tf/sm_module/variables/variables: variable 'w' (object 3) has no value in the checkpoint (its "
            "object graph does not reach it)");
  objects = ModuleObjects();
  objects.bound_inputs = {{"f", {1}}};
  EXPECT_EQ(RestoreCaptures(objects, "f", no_constant).status().message(),
            "function 'f' captures constant 'Const' (object 1), which is no Const node of the graph");
  // The saved variable's dtype and shape against the checkpoint's.
  objects = ModuleObjects();
  objects.objects[4].dtype = DType::kInt32;
  objects.bound_inputs = {{"f", {4}}};
  EXPECT_EQ(RestoreCaptures(objects, "f", no_constant).status().message(),
            "graphs/tf/sm_module/variables/variables: restoring variable 'steps' (object 4): InvalidArgumentError: "
            "tensor_name = steps/.ATTRIBUTES/VARIABLE_VALUE; expected dtype int32 does not equal original dtype int64");
  objects = ModuleObjects();
  objects.objects[3].shape = {2, 3};
  objects.bound_inputs = {{"f", {3}}};
  const Status shape = RestoreCaptures(objects, "f", no_constant).status();
  EXPECT_EQ(shape.kind(), ErrorKind::kBadInput);
  EXPECT_EQ(shape.message(), "graphs/tf/sm_module/variables/variables: variable 'w' (object 3): ValueError: Shapes "
                             "(2, 3) and (2, 2) are incompatible");
  objects = ModuleObjects();
  objects.objects[3].shape = {-1, 2};  // a size the variable leaves open
  EXPECT_TRUE(RestoreCaptures(objects, "f", Offset).ok());
  objects = ModuleObjects();
  objects.objects[1].kind = Kind::kResource;
  EXPECT_EQ(RestoreCaptures(objects, "f", no_constant).status().message(),
            "function 'f' captures object 1, a resource (a lookup table, a dataset): tfrun gives a call its "
            "variables and constants only");
  objects = ModuleObjects();
  objects.variables.clear();
  EXPECT_EQ(RestoreCaptures(objects, "f", no_constant).status().message(),
            "function 'f' captures constant 'Const' (object 1), which is no Const node of the graph");
  objects.bound_inputs = {{"f", {3}}};
  EXPECT_EQ(RestoreCaptures(objects, "f", no_constant).status().message(),
            "function 'f' reads variables, and the SavedModel's folder has no variables/variables.index to restore "
            "them from");
}

}  // namespace
}  // namespace tfrun
