#include "core/graph/op_registry.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "core/graph/node_def_summary.h"
#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

// A shape as shape inference sees it: dimensions (some maybe unknown), or
// no known rank at all.
struct PartialShape {
  Shape dims;
  bool unknown_rank = false;
};

PartialShape ShapeOf(const Node& n) { return {n.shape, n.unknown_rank}; }

// InferenceContext::Merge of two shapes (shape_inference.cc): an unknown
// rank takes the other; ranks and known dimensions must agree. The error
// is TensorFlow's text, without the node.
StatusOr<PartialShape> MergeShapes(const PartialShape& s0, const PartialShape& s1) {
  if (s1.unknown_rank) return s0;
  if (s0.unknown_rank) return s1;
  if (s0.dims.size() != s1.dims.size()) {
    return BadInput(fmt::format("Shapes must be equal rank, but are {} and {}", s0.dims.size(), s1.dims.size()));
  }
  PartialShape merged = s0;
  for (size_t i = 0; i < merged.dims.size(); ++i) {
    const int64_t a = s0.dims[i], b = s1.dims[i];
    if (a != kUnknownDim && b != kUnknownDim && a != b) {
      return BadInput(fmt::format("Dimension {} in both shapes must be equal, but are {} and {}. Shapes are {} and {}.",
                                  i, a, b, ShapeDebugString(s0.dims), ShapeDebugString(s1.dims)));
    }
    if (a == kUnknownDim) merged.dims[i] = b;
  }
  return merged;
}

// Merges two dimensions as InferenceContext::Merge: an unknown one takes
// the other's size; two known ones must be equal.
bool MergeDim(int64_t a, int64_t b, int64_t* merged) {
  if (a != kUnknownDim && b != kUnknownDim && a != b) return false;
  *merged = a == kUnknownDim ? b : a;
  return true;
}

std::string DimsMustBeEqual(int64_t a, int64_t b) {
  return fmt::format("Dimensions must be equal, but are {} and {}", a, b);
}

// Whether `name` is one of a ", "-separated list.
bool ListedIn(std::string_view name, std::string_view list) {
  while (!list.empty()) {
    const size_t comma = list.find(", ");
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 2);
  }
  return false;
}

// A producer that has no output (a NoOp) cannot be an input.
Status InputsHaveOutputs(const ShapeContext& c) {
  for (const Node* x : c.in) {
    if (!x->has_output()) {
      return BadInput(fmt::format("input '{}' of '{}' is a {} and has no output", x->name, c.node.name, x->op));
    }
  }
  return Status::Ok();
}

std::string NotInAllowedList(std::string_view param, DType dtype, std::string_view allowed) {
  return fmt::format("Value passed to parameter '{}' has DataType {} not in list of allowed values: {}", param,
                     Name(dtype), allowed);
}

// The allowed values of the op's type attr `attr` as op_def_library.py
// lists them ("float32, float64", TensorFlow's OpDef order), from
// TensorFlow's own OpDef; empty when it allows any type.
// Memoized: every node of a 100,000-node graph asks.
const std::string& TfAllowedTypes(std::string_view op, std::string_view attr) {
  static std::mutex mutex;
  static auto* memo = new std::map<std::pair<std::string, std::string>, std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, added] = memo->try_emplace({std::string(op), std::string(attr)});
  if (!added) return it->second;
  const TfOpDef* def = FindTfOp(op);
  const TfAttrDef* a = def == nullptr ? nullptr : def->FindAttr(attr);
  if (a == nullptr) return it->second;
  std::vector<std::string> names;
  for (const std::string& t : a->allowed) names.push_back(PythonDTypeName(t));
  it->second = fmt::format("{}", fmt::join(names, ", "));
  return it->second;
}

// _SatisfiesTypeConstraint: T's allowed values in TensorFlow's words; then
// tfrun's kernels (a dtype TensorFlow allows and tfrun cannot run).
Status SatisfiesTypeConstraint(const OpDef& def, DType dtype, std::string_view param) {
  const std::string& allowed = TfAllowedTypes(def.type, "T");
  if (!allowed.empty() && !ListedIn(Name(dtype), allowed)) {
    return BadInput(NotInAllowedList(param, dtype, allowed));
  }
  if (!def.allowed_dtypes.Contains(dtype)) {
    return BadInput(fmt::format("Value passed to parameter '{}' has DataType {}, which tfrun's {} does not take "
                                "(it takes {})",
                                param, Name(dtype), def.type, DTypeList(def.allowed_dtypes)));
  }
  return Status::Ok();
}

// tf.matmul's Python function builds SparseMatMul, not MatMul, for a
// bfloat16 operand beside another type (math_ops.py: "matmul currently
// doesn't handle mixed-precision inputs"): its Ta and Tb take float32 and
// bfloat16, its product is float32. The node keeps its name and becomes
// that op, as the graph TensorFlow builds has it.
Status MatMulTypes(const OpDef& def, ShapeContext& c) {
  TFRUN_RETURN_IF_ERROR(InputsHaveOutputs(c));
  const DType a = c.in[0]->dtype, b = c.in[1]->dtype;
  if (a == b || (a != DType::kBFloat16 && b != DType::kBFloat16)) return CheckInputTypes(def, c);
  const std::string& ta = TfAllowedTypes("SparseMatMul", "Ta");
  const std::string& tb = TfAllowedTypes("SparseMatMul", "Tb");
  if (!ListedIn(Name(a), ta)) return BadInput(NotInAllowedList("a", a, ta));
  if (!ListedIn(Name(b), tb)) return BadInput(NotInAllowedList("b", b, tb));
  c.node.op = "SparseMatMul";
  c.node.dtype = DType::kFloat32;
  return Status::Ok();
}

// How Python shows a graph tensor: <tf.Tensor 'x:0' shape=(None, 3) dtype=float32>.
std::string TensorRepr(const Node& producer, int index) {
  std::string shape = "<unknown>";
  if (!producer.unknown_rank) {
    std::vector<std::string> dims;
    for (int64_t d : producer.shape) dims.push_back(d == kUnknownDim ? "None" : std::to_string(d));
    shape = dims.size() == 1 ? fmt::format("({},)", dims[0]) : fmt::format("({})", fmt::join(dims, ", "));
  }
  return fmt::format("<tf.Tensor '{}:{}' shape={} dtype={}>", producer.name, index, shape, Name(producer.dtype));
}

Status InferConst(ShapeContext&) {
  return Status::Ok();  // dtype and shape come from the node's own data (or attributes)
}

// common_shape_fns.cc MatMulShape.
Status InferMatMul(ShapeContext& c) {
  Node& node = c.node;
  for (const Node* x : c.in) {
    if (!x->unknown_rank && x->shape.size() != 2) {
      return c.Fail(fmt::format("Shape must be rank 2 but is rank {}", x->shape.size()));
    }
  }
  if (c.in[0]->unknown_rank || c.in[1]->unknown_rank) {  // TensorFlow 2.21 gives up on the shape too
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  const Shape& a = c.in[0]->shape;
  const Shape& b = c.in[1]->shape;
  const int64_t m = node.transpose_a ? a[1] : a[0];
  const int64_t k_a = node.transpose_a ? a[0] : a[1];
  const int64_t k_b = node.transpose_b ? b[1] : b[0];
  const int64_t n = node.transpose_b ? b[0] : b[1];
  int64_t k;
  if (!MergeDim(k_a, k_b, &k)) return c.Fail(DimsMustBeEqual(k_a, k_b));
  node.shape = {m, n};
  return Status::Ok();
}

// Identity, Relu: the input's shape (UnchangedShape).
Status InferUnchanged(ShapeContext& c) {
  c.node.shape = c.in[0]->shape;
  c.node.unknown_rank = c.in[0]->unknown_rank;
  return Status::Ok();
}

// AddN (math_ops.cc): merges from the last input down to the first.
Status InferAddN(ShapeContext& c) {
  PartialShape cur = ShapeOf(*c.in.back());
  for (int i = static_cast<int>(c.in.size()) - 2; i >= 0; --i) {
    StatusOr<PartialShape> merged = MergeShapes(ShapeOf(*c.in[i]), cur);
    if (!merged.ok()) {
      return c.Fail(fmt::format("{}\n\tFrom merging shape {} with other shapes.", merged.status().message(), i));
    }
    cur = *merged;
  }
  c.node.shape = cur.dims;
  c.node.unknown_rank = cur.unknown_rank;
  return Status::Ok();
}

// Add, Sub, Mul broadcast as TensorFlow's do (common_shape_fns.cc
// BroadcastBinaryOpOutputShapeFnHelper: dimensions aligned from the right,
// a 1 stretches, others must merge), with its texts.
Status InferBinary(ShapeContext& c) {
  Node& node = c.node;
  if (c.in[0]->unknown_rank || c.in[1]->unknown_rank) {
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  const Shape& x = c.in[0]->shape;
  const Shape& y = c.in[1]->shape;
  const size_t rank = std::max(x.size(), y.size());
  Shape broadcast(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t dx = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
    const int64_t dy = i < rank - y.size() ? 1 : y[i - (rank - y.size())];
    if (dx == kUnknownDim || dy == kUnknownDim) {
      broadcast[i] = dx == 1 ? dy : dy == 1 ? dx : dx == kUnknownDim ? dy : dx;
    } else if (dx == 1 || dy == 1) {
      broadcast[i] = dx == 1 ? dy : dx;
    } else if (!MergeDim(dx, dy, &broadcast[i])) {
      return c.Fail(DimsMustBeEqual(dx, dy));
    }
  }
  node.shape = broadcast;
  return Status::Ok();
}

Status InferCast(ShapeContext& c) {
  c.node.shape = c.in[0]->shape;  // node.dtype is DstT, set by the loader
  c.node.unknown_rank = c.in[0]->unknown_rank;
  return Status::Ok();
}

Status InferNoOp(ShapeContext& c) {
  c.node.num_outputs = 0;
  c.node.shape.clear();
  return Status::Ok();
}

// Assign with validate_shape (state_ops.cc): the value's shape merges
// with the variable's.
Status InferAssign(ShapeContext& c) {
  StatusOr<PartialShape> merged = MergeShapes(ShapeOf(*c.in[0]), ShapeOf(*c.in[1]));
  if (!merged.ok()) return c.Fail(merged.status().message());
  c.node.shape = c.in[0]->shape;
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
Status InferSplit(ShapeContext& c) {
  Node& node = c.node;
  const Node& value = *c.in[1];
  TFRUN_ASSIGN_OR_RETURN(const int64_t axis, AxisValue(node, *c.in[0]));
  if (value.unknown_rank) {
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(value.shape.size());
  if (axis < -rank || axis >= rank) {
    return c.FailWithAxis(
        fmt::format("Dimension size, given by scalar input {} must be in range [{}, {})", axis, -rank, rank), 0, axis);
  }
  node.shape = value.shape;
  int64_t& dim = node.shape[axis < 0 ? axis + rank : axis];
  if (dim != kUnknownDim) {
    if (dim % node.num_outputs != 0) {
      return c.FailWithAxis(fmt::format("Dimension size must be evenly divisible by {} but is {}\n\tNumber of ways to "
                                        "split should evenly divide the split dimension",
                                        node.num_outputs, dim),
                            0, axis);
    }
    dim /= node.num_outputs;
  }
  return Status::Ok();
}

// ConcatV2(values..., axis): the values joined along axis
// (array_ops.cc's ConcatShapeHelper).
Status InferConcat(ShapeContext& c) {
  Node& node = c.node;
  const size_t n = c.in.size() - 1;
  const std::vector<const Node*> values(c.in.begin(), c.in.begin() + n);
  TFRUN_ASSIGN_OR_RETURN(const int64_t axis, AxisValue(node, *c.in[n]));
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
    return c.FailWithAxis(fmt::format("Shape must be at least rank {} but is rank {}", axis + 1, rank), n, axis);
  }
  if (axis < -rank) {
    return c.FailWithAxis(fmt::format("Expected concat_dim in the range [{}, {}), but got {}", -rank, rank, axis), n,
                          axis);
  }
  const size_t d = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  for (const Node* v : values) {
    if (!v->unknown_rank && static_cast<int64_t>(v->shape.size()) != rank) {
      return c.Fail(fmt::format("Shape must be rank {} but is rank {}", rank, v->shape.size()));
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
        return c.FailWithAxis(fmt::format("Dimension {} in both shapes must be equal, but are {} and {}. Shapes are {} "
                                          "and {}.",
                                          before ? j : j - d - 1, out[j], v->shape[j], ShapeDebugString(part_out),
                                          ShapeDebugString(part_in)),
                              n, axis);
      }
    }
    along = along == kUnknownDim || v->shape[d] == kUnknownDim ? kUnknownDim : along + v->shape[d];
  }
  out[d] = along;
  node.shape = out;
  return Status::Ok();
}

// BiasAdd(value, bias), NHWC: bias along value's last dimension
// (common_shape_fns.cc BiasAddShape).
Status InferBiasAdd(ShapeContext& c) {
  Node& node = c.node;
  if (!c.in[0]->unknown_rank && c.in[0]->shape.size() < 2) {
    return c.Fail(fmt::format("Shape must be at least rank 2 but is rank {}", c.in[0]->shape.size()));
  }
  if (!c.in[1]->unknown_rank && c.in[1]->shape.size() != 1) {
    return c.Fail(fmt::format("Shape must be rank 1 but is rank {}", c.in[1]->shape.size()));
  }
  if (c.in[0]->unknown_rank) {
    node.unknown_rank = true;
    node.shape.clear();
    return Status::Ok();
  }
  node.shape = c.in[0]->shape;
  const int64_t bias = c.in[1]->unknown_rank ? kUnknownDim : c.in[1]->shape[0];
  if (!MergeDim(node.shape.back(), bias, &node.shape.back())) {
    return c.Fail(DimsMustBeEqual(c.in[0]->shape.back(), bias));
  }
  return Status::Ok();
}

const std::vector<OpDef>& Table() {
  using A = ArgType;
  static const std::vector<OpDef> table = {
      {"Const", 0, 0, kEveryDType, {"dtype", "shape", "value", "fill", "random", "npy"}, true, InferConst,
       {}, {"dtype"}},
      {"MatMul", 2, 2, kNumericTypes, {"transpose_a", "transpose_b"}, true, InferMatMul,
       {{"a", A::kT}, {"b", A::kT}}, {"T", "grad_a", "grad_b", "transpose_a", "transpose_b"},
       MatMulTypes},
      // What MatMulTypes makes a MatMul of bfloat16 and float32 into.
      {"SparseMatMul", 2, 2, DTypeSet{DType::kFloat32}, {}, false, InferMatMul, {{"a", A::kOwn}, {"b", A::kOwn}},
       {"Ta", "Tb", "a_is_sparse", "b_is_sparse", "transpose_a", "transpose_b"}},
      {"AddN", 1, -1, kNumericTypes, {}, true, InferAddN, {{"inputs", A::kTList}}, {"N", "T"}},
      {"Identity", 1, 1, kEveryDType, {}, true, InferUnchanged, {{"input", A::kT}}, {"T"}},
      {"Add", 2, 2, kNumericTypes, {}, true, InferBinary, {{"x", A::kT}, {"y", A::kT}}, {"T"}},
      {"Sub", 2, 2, kNumericTypes, {}, true, InferBinary, {{"x", A::kT}, {"y", A::kT}}, {"T"}},
      {"Mul", 2, 2, kNumericTypes, {}, true, InferBinary, {{"x", A::kT}, {"y", A::kT}}, {"T"}},
      {"Cast", 1, 1, kMovedTypes, {"DstT"}, true, InferCast, {{"x", A::kOwn}}, {"DstT", "SrcT", "Truncate"}},
      {"NoOp", 0, -1, kAllTypes, {}, true, InferNoOp, {}, {}},
      // A value fed at run time (--feed); `shape` may leave dimensions
      // unknown (null) or be left out (no known rank).
      {"Placeholder", 0, 0, kEveryDType, {"dtype", "shape"}, true, InferConst, {}, {"dtype", "shape"}},
      // tf.split(value, num_split, axis) and tf.concat(values, axis): the
      // loader adds the axis Const as their Python does (split_concat.h).
      {"Split", 1, 1, kAllTypes, {"num_split", "axis"}, true, InferSplit, {{"split_dim", A::kOwn}, {"value", A::kT}},
       {"T", "num_split"}},
      {"ConcatV2", 1, -1, kAllTypes, {"axis"}, true, InferConcat, {{"values", A::kTList}, {"axis", A::kOwn}},
       {"N", "T", "Tidx"}},
      // tf.nn.bias_add converts the bias to the value's dtype first.
      {"BiasAdd", 2, 2, kNumericTypes, {}, true, InferBiasAdd, {{"value", A::kT}, {"bias", A::kConverted}},
       {"T", "data_format"}},
      {"Relu", 1, 1, kNumericTypes, {}, true, InferUnchanged, {{"features", A::kT}}, {"T"}},
      // A graph file's Variable expands into these (loader.cc).
      {"Variable", 0, 0, kAllTypes, {"dtype", "shape", "value", "fill", "random", "npy"}, true, InferConst, {},
       {}},
      {"VariableV2", 0, 0, kAllTypes, {}, false, InferConst, {}, {"container", "dtype", "shape", "shared_name"}},
      {"Assign", 2, 2, kAllTypes, {}, false, InferAssign, {{"ref", A::kT}, {"value", A::kT}},
       {"T", "use_locking", "validate_shape"}},
  };
  return table;
}

}  // namespace

Status ShapeContext::Fail(std::string_view text) const {
  return BadInput(fmt::format("{} for {} with input shapes: {}.", text, NodeText(), InputShapes()));
}

Status ShapeContext::FailWithAxis(std::string_view text, size_t axis_input, int64_t axis) const {
  return BadInput(fmt::format("{} for {} with input shapes: {} and with computed input tensors: input[{}] = <{}>.",
                              text, NodeText(), InputShapes(), axis_input, axis));
}

std::string ShapeContext::NodeText() const {
  if (style_ == ConstructionErrors::kTf1) return fmt::format("'{}' (op: '{}')", node.name, node.op);
  // Python sets the device after the C API has built (and shape-checked)
  // the node, so TF 2's text never shows one.
  return fmt::format("'{}'", NodeDefSummary(graph_, node, OpAttrs(node.op), "", NodeDefEra::kTf2));
}

std::string ShapeContext::InputShapes() const {
  std::vector<std::string> shapes;
  for (const Node* x : in) shapes.push_back(ShapeDebugString(x->shape, x->unknown_rank));
  return fmt::format("{}", fmt::join(shapes, ", "));
}

Status CheckInputTypes(const OpDef& def, ShapeContext& c) {
  TFRUN_RETURN_IF_ERROR(InputsHaveOutputs(c));
  std::optional<DType> t;    // the type attribute T, once an argument sets it
  std::string_view t_from;   // that argument
  size_t next = 0;           // the next input
  for (size_t a = 0; a < def.args.size() && next < c.in.size(); ++a) {
    const OpArg& arg = def.args[a];
    if (arg.type == ArgType::kTList) {
      const size_t count = c.in.size() - next - (def.args.size() - a - 1);
      std::vector<std::string_view> types;
      bool all_match = true;
      for (size_t i = next; i < next + count; ++i) {
        types.push_back(Name(c.in[i]->dtype));
        all_match = all_match && c.in[i]->dtype == c.in[next]->dtype;
      }
      if (!all_match) {
        return BadInput(fmt::format("Tensors in list passed to '{}' of '{}' Op have types [{}] that don't all match.",
                                    arg.name, def.type, fmt::join(types, ", ")));
      }
      TFRUN_RETURN_IF_ERROR(SatisfiesTypeConstraint(def, c.in[next]->dtype, arg.name));
      t = c.in[next]->dtype;
      t_from = arg.name;
      next += count;
      continue;
    }
    const Node& x = *c.in[next];
    const int index = c.node.input(next).index;
    ++next;
    if (arg.type == ArgType::kOwn) continue;
    if (t && x.dtype != *t) {
      if (arg.type == ArgType::kConverted) {  // ops.convert_to_tensor(x, dtype=T, name=arg)
        return BadInput(fmt::format("{}: Tensor conversion requested dtype {} for Tensor with dtype {}: {}", arg.name,
                                    Name(*t), Name(x.dtype), TensorRepr(x, index)));
      }
      return BadInput(fmt::format("Input '{}' of '{}' Op has type {} that does not match type {} of argument '{}'.",
                                  arg.name, def.type, Name(x.dtype), Name(*t), t_from));
    }
    if (!t) {
      TFRUN_RETURN_IF_ERROR(SatisfiesTypeConstraint(def, x.dtype, arg.name));
      t = x.dtype;
      t_from = arg.name;
    }
  }
  if (t) c.node.dtype = *t;
  return Status::Ok();
}

Status InferNode(const OpDef& def, ShapeContext& c) {
  TFRUN_RETURN_IF_ERROR(def.check_types ? def.check_types(def, c) : CheckInputTypes(def, c));
  return def.infer(c);
}

const std::vector<OpDef>& AllOps() { return Table(); }

const OpDef* FindOp(std::string_view type) {
  for (const OpDef& def : Table()) {
    if (def.type == type) return &def;
  }
  return nullptr;
}

const std::vector<std::string_view>& OpAttrs(std::string_view op) {
  static const std::vector<std::string_view> kNone;
  const OpDef* def = FindOp(op);
  return def != nullptr ? def->node_def_attrs : kNone;
}

std::string DTypeList(DTypeSet set) {
  std::vector<std::string_view> names;
  for (DType d : kAllDTypes) {
    if (set.Contains(d)) names.push_back(Name(d));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace tfrun
