#include "core/op_registry.h"

#include <fmt/format.h>

namespace tfrun {
namespace {

std::string InputShapes(const std::vector<const Node*>& inputs) {
  std::vector<std::string> shapes;
  for (const Node* in : inputs) shapes.push_back(ShapeDebugString(in->shape, in->unknown_rank));
  return fmt::format("{}", fmt::join(shapes, ", "));
}

// TF 1.x's shape-function error suffix.
std::string ForNode(const Node& node, const std::vector<const Node*>& inputs) {
  return fmt::format("for '{}' (op: '{}') with input shapes: {}.", node.name, node.op, InputShapes(inputs));
}

// The same for shape functions that read a constant input's value (an
// axis): TensorFlow adds "and with computed input tensors".
std::string ForNodeWithAxis(const Node& node, const std::vector<const Node*>& inputs, size_t axis_input,
                            int64_t axis) {
  return fmt::format("for '{}' (op: '{}') with input shapes: {} and with computed input tensors: input[{}] = <{}>.",
                     node.name, node.op, InputShapes(inputs), axis_input, axis);
}

// Merges two dimensions as InferenceContext::Merge: an unknown one takes
// the other's size; two known ones must be equal.
bool MergeDim(int64_t a, int64_t b, int64_t* merged) {
  if (a != kUnknownDim && b != kUnknownDim && a != b) return false;
  *merged = a == kUnknownDim ? b : a;
  return true;
}

Status SameDTypes(Node& node, const std::vector<const Node*>& inputs, DTypeSet allowed) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->has_output()) {
      return BadInput(fmt::format("input '{}' of '{}' is a {} and has no output",
                                  inputs[i]->name, node.name, inputs[i]->op));
    }
    if (inputs[i]->dtype != inputs[0]->dtype) {
      return BadInput(fmt::format(
          "Input {} of '{}' Op has type {} that does not match type {} of "
          "input 0 ('{}').",
          i, node.op, Name(inputs[i]->dtype), Name(inputs[0]->dtype),
          inputs[0]->name));
    }
  }
  if (!inputs.empty() && !allowed.Contains(inputs[0]->dtype)) {
    return BadInput(fmt::format(
        "Value passed to '{}' has DataType {} not in list of allowed values: {}",
        node.op, Name(inputs[0]->dtype), DTypeList(allowed)));
  }
  if (!inputs.empty()) node.dtype = inputs[0]->dtype;
  return Status::Ok();
}

Status InferConst(Node&, const std::vector<const Node*>&) {
  return Status::Ok();  // dtype and shape come from the node's own data (or attributes)
}

Status InferMatMul(Node& node, const std::vector<const Node*>& in) {
  TFRUN_RETURN_IF_ERROR(SameDTypes(node, in, FindOp("MatMul")->allowed_dtypes));
  for (const Node* x : in) {
    if (!x->unknown_rank && x->shape.size() != 2) {
      return BadInput(fmt::format("Shape must be rank 2 but is rank {} {}",
                                  x->shape.size(), ForNode(node, in)));
    }
  }
  if (in[0]->unknown_rank || in[1]->unknown_rank) {  // TensorFlow 2.21 gives up on the shape too
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  int64_t m = node.transpose_a ? in[0]->shape[1] : in[0]->shape[0];
  int64_t k_a = node.transpose_a ? in[0]->shape[0] : in[0]->shape[1];
  int64_t k_b = node.transpose_b ? in[1]->shape[1] : in[1]->shape[0];
  int64_t n = node.transpose_b ? in[1]->shape[0] : in[1]->shape[1];
  int64_t k;
  if (!MergeDim(k_a, k_b, &k)) {
    return BadInput(fmt::format("Dimensions must be equal, but are {} and {} {}",
                                k_a, k_b, ForNode(node, in)));
  }
  node.shape = {m, n};
  return Status::Ok();
}

// AddN, Identity, Relu: every input's shape, merged.
Status InferSameShape(Node& node, const std::vector<const Node*>& in) {
  TFRUN_RETURN_IF_ERROR(SameDTypes(node, in, FindOp(node.op)->allowed_dtypes));
  const Node* first = nullptr;  // the first input of known rank
  Shape merged;
  for (const Node* x : in) {
    if (x->unknown_rank) continue;
    if (first == nullptr) {
      first = x;
      merged = x->shape;
      continue;
    }
    bool ok = x->shape.size() == merged.size();
    for (size_t d = 0; ok && d < merged.size(); ++d) ok = MergeDim(merged[d], x->shape[d], &merged[d]);
    if (!ok) {
      return BadInput(fmt::format(
          "Shapes must be equal, but are {} and {} {}",
          ShapeDebugString(first->shape), ShapeDebugString(x->shape),
          ForNode(node, in)));
    }
  }
  node.unknown_rank = first == nullptr;
  node.shape = merged;
  return Status::Ok();
}

// Add, Sub, Mul: the same shape, or one operand a scalar (graph-format.md).
Status InferBinary(Node& node, const std::vector<const Node*>& in) {
  TFRUN_RETURN_IF_ERROR(SameDTypes(node, in, FindOp(node.op)->allowed_dtypes));
  if (in[0]->unknown_rank || in[1]->unknown_rank) {
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  const Shape& a = in[0]->shape;
  const Shape& b = in[1]->shape;
  bool same = a.size() == b.size();
  Shape merged = a;
  for (size_t d = 0; same && d < a.size(); ++d) same = MergeDim(a[d], b[d], &merged[d]);
  if (same) {
    node.shape = merged;
  } else if (b.empty()) {
    node.shape = a;
  } else if (a.empty()) {
    node.shape = b;
  } else {
    return BadInput(fmt::format(
        "Incompatible shapes: {} vs. {} (inputs must have the same shape or "
        "one must be a scalar) {}",
        ShapeDebugString(a), ShapeDebugString(b), ForNode(node, in)));
  }
  return Status::Ok();
}

Status InferCast(Node& node, const std::vector<const Node*>& in) {
  if (!in[0]->has_output()) {
    return BadInput(fmt::format("input '{}' of '{}' has no output",
                                in[0]->name, node.name));
  }
  node.shape = in[0]->shape;  // node.dtype is DstT, set by the loader
  node.unknown_rank = in[0]->unknown_rank;
  return Status::Ok();
}

Status InferNoOp(Node& node, const std::vector<const Node*>&) {
  node.num_outputs = 0;
  node.shape.clear();
  return Status::Ok();
}

Status InferAssign(Node& node, const std::vector<const Node*>& in) {
  TFRUN_RETURN_IF_ERROR(SameDTypes(node, in, kAllTypes));
  if (in[0]->shape != in[1]->shape || in[1]->unknown_rank) {
    return BadInput(fmt::format(
        "Shapes must be equal, but are {} and {} {}",
        ShapeDebugString(in[0]->shape), ShapeDebugString(in[1]->shape, in[1]->unknown_rank),
        ForNode(node, in)));
  }
  node.shape = in[0]->shape;
  return Status::Ok();
}

// The value of an axis input: a scalar int32 Const (the loader makes it).
StatusOr<int64_t> AxisValue(const Node& node, const Node& axis) {
  if (axis.dtype != DType::kInt32 || !axis.value.is_valid() || axis.value.num_elements() != 1) {
    return BadInput(fmt::format("the axis of '{}' must be a scalar int32 constant", node.name));
  }
  return static_cast<int64_t>(axis.value.data<int32_t>()[0]);
}

// Split(split_dim, value): num_outputs equal slices along split_dim
// (array_ops.cc's Split shape function).
Status InferSplit(Node& node, const std::vector<const Node*>& in) {
  const std::vector<const Node*> value = {in[1]};
  TFRUN_RETURN_IF_ERROR(SameDTypes(node, value, FindOp("Split")->allowed_dtypes));
  TFRUN_ASSIGN_OR_RETURN(const int64_t axis, AxisValue(node, *in[0]));
  if (in[1]->unknown_rank) {
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(in[1]->shape.size());
  if (axis < -rank || axis >= rank) {
    return BadInput(fmt::format("Dimension size, given by scalar input {} must be in range [{}, {}) {}", axis, -rank,
                                rank, ForNodeWithAxis(node, in, 0, axis)));
  }
  node.shape = in[1]->shape;
  int64_t& dim = node.shape[axis < 0 ? axis + rank : axis];
  if (dim != kUnknownDim) {
    if (dim % node.num_outputs != 0) {
      return BadInput(fmt::format("Dimension size must be evenly divisible by {} but is {}\n\tNumber of ways to split "
                                  "should evenly divide the split dimension {}",
                                  node.num_outputs, dim, ForNodeWithAxis(node, in, 0, axis)));
    }
    dim /= node.num_outputs;
  }
  return Status::Ok();
}

// ConcatV2(values..., axis): the values joined along axis
// (array_ops.cc's ConcatShapeHelper).
Status InferConcat(Node& node, const std::vector<const Node*>& in) {
  const size_t n = in.size() - 1;
  const std::vector<const Node*> values(in.begin(), in.begin() + n);
  for (const Node* v : values) {
    if (!v->has_output()) return SameDTypes(node, values, kAllTypes);  // its "has no output" text
    if (v->dtype != values[0]->dtype) {
      std::vector<std::string_view> types;
      for (const Node* t : values) types.push_back(Name(t->dtype));
      return BadInput(fmt::format("Tensors in list passed to 'values' of '{}' Op have types [{}] that don't all match.",
                                  node.op, fmt::join(types, ", ")));
    }
  }
  TFRUN_RETURN_IF_ERROR(SameDTypes(node, values, FindOp("ConcatV2")->allowed_dtypes));
  TFRUN_ASSIGN_OR_RETURN(const int64_t axis, AxisValue(node, *in[n]));
  const Node* first = nullptr;
  for (const Node* v : values) {
    if (!v->unknown_rank) {
      first = v;
      break;
    }
  }
  if (first == nullptr) {
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(first->shape.size());
  if (axis >= rank) {
    return BadInput(fmt::format("Shape must be at least rank {} but is rank {} {}", axis + 1, rank,
                                ForNodeWithAxis(node, in, n, axis)));
  }
  if (axis < -rank) {
    return BadInput(fmt::format("Expected concat_dim in the range [{}, {}), but got {} {}", -rank, rank, axis,
                                ForNodeWithAxis(node, in, n, axis)));
  }
  const size_t d = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  for (const Node* v : values) {
    if (!v->unknown_rank && static_cast<int64_t>(v->shape.size()) != rank) {
      return BadInput(fmt::format("Shape must be rank {} but is rank {} {}", rank, v->shape.size(), ForNode(node, in)));
    }
  }
  // Dimensions before and after the axis must agree; along it they add up.
  Shape out = first->shape;
  int64_t along = 0;
  for (const Node* v : values) {
    if (v->unknown_rank) {
      along = kUnknownDim;
      continue;
    }
    for (size_t j = 0; j < out.size(); ++j) {
      if (j == d) continue;
      if (!MergeDim(out[j], v->shape[j], &out[j])) {
        const bool before = j < d;
        const Shape part_out = before ? Shape(out.begin(), out.begin() + d) : Shape(out.begin() + d + 1, out.end());
        const Shape part_in = before ? Shape(v->shape.begin(), v->shape.begin() + d)
                                     : Shape(v->shape.begin() + d + 1, v->shape.end());
        return BadInput(fmt::format("Dimension {} in both shapes must be equal, but are {} and {}. Shapes are {} and "
                                    "{}. {}",
                                    before ? j : j - d - 1, out[j], v->shape[j], ShapeDebugString(part_out),
                                    ShapeDebugString(part_in), ForNodeWithAxis(node, in, n, axis)));
      }
    }
    along = along == kUnknownDim || v->shape[d] == kUnknownDim ? kUnknownDim : along + v->shape[d];
  }
  out[d] = along;
  node.shape = out;
  return Status::Ok();
}

// BiasAdd(value, bias), NHWC: bias along value's last dimension.
Status InferBiasAdd(Node& node, const std::vector<const Node*>& in) {
  TFRUN_RETURN_IF_ERROR(SameDTypes(node, in, FindOp("BiasAdd")->allowed_dtypes));
  if (!in[0]->unknown_rank && in[0]->shape.size() < 2) {
    return BadInput(fmt::format("Shape must be at least rank 2 but is rank {} {}", in[0]->shape.size(),
                                ForNode(node, in)));
  }
  if (!in[1]->unknown_rank && in[1]->shape.size() != 1) {
    return BadInput(fmt::format("Shape must be rank 1 but is rank {} {}", in[1]->shape.size(), ForNode(node, in)));
  }
  if (in[0]->unknown_rank) {
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  node.shape = in[0]->shape;
  const int64_t bias = in[1]->unknown_rank ? kUnknownDim : in[1]->shape[0];
  if (!MergeDim(node.shape.back(), bias, &node.shape.back())) {
    return BadInput(fmt::format("Dimensions must be equal, but are {} and {} {}", in[0]->shape.back(), bias,
                                ForNode(node, in)));
  }
  return Status::Ok();
}

const std::vector<OpDef>& Table() {
  static const std::vector<OpDef> table = {
      {"Const", 0, 0, kAllTypesAndString, {"dtype", "shape", "value", "fill", "random", "npy"}, true, InferConst},
      {"MatMul", 2, 2, kNumericTypes, {"transpose_a", "transpose_b"}, true, InferMatMul},
      {"AddN", 1, -1, kNumericTypes, {}, true, InferSameShape},
      {"Identity", 1, 1, kAllTypesAndString, {}, true, InferSameShape},
      {"Add", 2, 2, kNumericTypes, {}, true, InferBinary},
      {"Sub", 2, 2, kNumericTypes, {}, true, InferBinary},
      {"Mul", 2, 2, kNumericTypes, {}, true, InferBinary},
      {"Cast", 1, 1, kAllTypes, {"DstT"}, true, InferCast},
      {"NoOp", 0, -1, kAllTypes, {}, true, InferNoOp},
      // A value fed at run time (--feed); `shape` may leave dimensions
      // unknown (null) or be left out (no known rank).
      {"Placeholder", 0, 0, kAllTypesAndString, {"dtype", "shape"}, true, InferConst},
      // tf.split(value, num_split, axis) and tf.concat(values, axis): the
      // loader adds the axis Const as their Python does (split_concat.h).
      {"Split", 1, 1, kAllTypes, {"num_split", "axis"}, true, InferSplit},
      {"ConcatV2", 1, -1, kAllTypes, {"axis"}, true, InferConcat},
      {"BiasAdd", 2, 2, kNumericTypes, {}, true, InferBiasAdd},
      {"Relu", 1, 1, kNumericTypes, {}, true, InferSameShape},
      // A graph file's Variable expands into these (loader.cc).
      {"Variable", 0, 0, kAllTypes, {"dtype", "shape", "value", "fill", "random", "npy"}, true, InferConst},
      {"VariableV2", 0, 0, kAllTypes, {}, false, InferConst},
      {"Assign", 2, 2, kAllTypes, {}, false, InferAssign},
  };
  return table;
}

}  // namespace

const std::vector<OpDef>& AllOps() { return Table(); }

const OpDef* FindOp(std::string_view type) {
  for (const OpDef& def : Table()) {
    if (def.type == type) return &def;
  }
  return nullptr;
}

bool IsGenerator(const Node& node) {
  // VariableV2's output is a reference, so only Const and Placeholder qualify.
  return node.op == "Const" || node.op == "Placeholder";
}

std::string DTypeList(DTypeSet set) {
  std::vector<std::string_view> names;
  for (DType d : kAllDTypes) {
    if (set.Contains(d)) names.push_back(Name(d));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace tfrun
