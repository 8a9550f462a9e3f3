#include "core/graph_def/graph_def_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

#include "core/graph/node_builder.h"
#include "core/graph_def/function_defs.h"
#include "core/graph_file/names_and_scopes.h"
#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

// Ops TensorFlow rewrites before placing that tfrun does not rewrite yet
// (LowerFunctionalOpsPass lowers If, Case and While; core/passes has the
// rest).
bool NeedsRewrites(std::string_view op) {
  static constexpr std::string_view kOps[] = {"SymbolicGradient", "RemoteCall"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

std::string TypeName(int type) {
  const std::string& name = tfproto::DataType_Name(static_cast<tfproto::DataType>(type));
  if (name.empty()) return fmt::format("type {}", type);
  return name.substr(3);  // "DT_FLOAT" -> "FLOAT", as the tables write it
}

std::string ShapeItem(const tfproto::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "?";
  std::vector<std::string> dims;
  for (const auto& d : shape.dim()) dims.push_back(std::to_string(d.size() < 0 ? -1 : d.size()));
  return fmt::format("({})", fmt::join(dims, "x"));
}

std::string TensorItem(const tfproto::TensorProto& tensor) {
  std::vector<std::string> dims;
  for (const auto& d : tensor.tensor_shape().dim()) dims.push_back(std::to_string(d.size()));
  return fmt::format("<Tensor<type: {} shape: [{}]>>", DataTypeString(TypeName(tensor.dtype())), fmt::join(dims, ","));
}

// A NodeDef's attr in the tables' form (tf_tables.h AttrValue); `def_type`
// is the OpDef's type for it, when it has the attr.
AttrValue ConvertAttr(const tfproto::AttrValue& value, std::string_view def_type) {  // ConvertGraphDefAttr
  using V = tfproto::AttrValue;
  switch (value.value_case()) {
    case V::kS: return {"string", {value.s()}};
    case V::kI: return {"int", {std::to_string(value.i())}};
    case V::kF: return {"float", {fmt::format("{}", value.f())}};
    case V::kB: return {"bool", {value.b() ? "true" : "false"}};
    case V::kType: return {"type", {TypeName(value.type())}};
    case V::kShape: return {"shape", {ShapeItem(value.shape())}};
    case V::kTensor: return {"tensor", {TensorItem(value.tensor())}};
    case V::kFunc: return {"func", {value.func().name()}};
    case V::kPlaceholder: return {"placeholder", {value.placeholder()}};
    case V::kList: {
      const auto& list = value.list();
      AttrValue out{"list(string)", {}};
      if (list.s_size() > 0) {
        out.items.assign(list.s().begin(), list.s().end());
      } else if (list.i_size() > 0) {
        out.type = "list(int)";
        for (int64_t i : list.i()) out.items.push_back(std::to_string(i));
      } else if (list.f_size() > 0) {
        out.type = "list(float)";
        for (float f : list.f()) out.items.push_back(fmt::format("{}", f));
      } else if (list.b_size() > 0) {
        out.type = "list(bool)";
        for (bool b : list.b()) out.items.push_back(b ? "true" : "false");
      } else if (list.type_size() > 0) {
        out.type = "list(type)";
        for (int t : list.type()) out.items.push_back(TypeName(t));
      } else if (list.shape_size() > 0) {
        out.type = "list(shape)";
        for (const auto& s : list.shape()) out.items.push_back(ShapeItem(s));
      } else if (list.tensor_size() > 0) {
        out.type = "list(tensor)";
        for (const auto& t : list.tensor()) out.items.push_back(TensorItem(t));
      } else if (list.func_size() > 0) {
        out.type = "list(func)";
        for (const auto& f : list.func()) out.items.push_back(f.name());
      } else if (def_type.substr(0, 5) == "list(") {
        out.type = def_type;  // an empty list of the OpDef's kind
      }
      return out;
    }
    case V::VALUE_NOT_SET: break;
  }
  return {def_type.empty() ? std::string_view("string") : def_type, {}};
}

// TensorProto into a host Tensor, for the dtypes tfrun stores; values
// shorter than the shape repeat their last element (tensor_util's rule).
template <typename T, typename Values>
void FillFrom(const Values& values, Tensor* t) {
  T* out = t->data<T>();
  const int64_t n = t->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(values.empty() ? 0 : values[std::min<int64_t>(i, values.size() - 1)]);
  }
}

StatusOr<Tensor> TensorFromProto(const tfproto::TensorProto& proto, DType dtype, const Shape& shape) {
  if (dtype == DType::kString) {
    const auto& given = proto.string_val();
    return Tensor::FromStringElements(shape, [&](int64_t i) -> std::string_view {
      return given.empty() ? std::string_view() : std::string_view(given[std::min<int64_t>(i, given.size() - 1)]);
    });
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateHost(dtype, shape));
  if (!proto.tensor_content().empty()) {
    if (proto.tensor_content().size() != t.num_bytes()) {
      return BadInput(fmt::format("tensor_content has {} bytes; a {} tensor of shape {} has {}",
                                  proto.tensor_content().size(), Name(dtype), ShapeDebugString(shape), t.num_bytes()));
    }
    std::memcpy(t.raw(), proto.tensor_content().data(), t.num_bytes());
    return t;
  }
  auto bits16 = [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = t.data<T>();
    const auto& v = proto.half_val();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const uint16_t b = v.empty() ? 0 : static_cast<uint16_t>(v[std::min<int64_t>(i, v.size() - 1)]);
      out[i] = Eigen::numext::bit_cast<T>(b);
    }
  };
  switch (dtype) {
    case DType::kFloat32: FillFrom<float>(proto.float_val(), &t); break;
    case DType::kFloat64: FillFrom<double>(proto.double_val(), &t); break;
    case DType::kInt32: FillFrom<int32_t>(proto.int_val(), &t); break;
    case DType::kInt64: FillFrom<int64_t>(proto.int64_val(), &t); break;
    case DType::kBool: FillFrom<bool>(proto.bool_val(), &t); break;
    case DType::kFloat16: bits16(TypeTag<Eigen::half>{}); break;
    case DType::kBFloat16: bits16(TypeTag<Eigen::bfloat16>{}); break;
    case DType::kString: break;
    case DType::kUInt8: FillFrom<uint8_t>(proto.int_val(), &t); break;
    case DType::kUInt64: FillFrom<uint64_t>(proto.uint64_val(), &t); break;
    case DType::kVariant: break;  // refused at import (SetValueFields)
  }
  return t;
}

// The host bytes a Const of `n` elements takes, counted before anything is
// allocated: a string one's offsets and payload, its last string_val
// repeated to fill the shape (tensor_util's rule); nullopt past 2^63.
std::optional<int64_t> ConstBytes(const tfproto::TensorProto& proto, DType dtype, int64_t n) {
  if (dtype != DType::kString) {
    int64_t bytes = 0;
    if (__builtin_mul_overflow(n, static_cast<int64_t>(Info(dtype).size), &bytes)) return std::nullopt;
    return bytes;
  }
  const auto& given = proto.string_val();
  int64_t payload = 0;
  const int64_t listed = std::min<int64_t>(n, given.size());
  for (int64_t i = 0; i < listed; ++i) payload += static_cast<int64_t>(given[i].size());
  if (n > listed && listed > 0) {
    int64_t repeated = 0;
    if (__builtin_mul_overflow(n - listed, static_cast<int64_t>(given[listed - 1].size()), &repeated) ||
        __builtin_add_overflow(payload, repeated, &payload)) {
      return std::nullopt;
    }
  }
  return Tensor::StringTensorBytes(n, payload);
}

Shape ShapeOf(const tfproto::TensorShapeProto& proto) {
  Shape shape;
  for (const auto& d : proto.dim()) shape.push_back(d.size() < 0 ? kUnknownDim : d.size());
  return shape;
}

struct Input {
  int source = -1;  // GraphDef index
  int index = 0;    // output index; -1: a control input
};

class Importer {
 public:
  // `library`: the functions a function body's nodes may call (null for a
  // file's GraphDef, whose own library is read).
  Importer(const TfGraphFile& file, const std::string& path, const GraphDefImportOptions& options,
           std::shared_ptr<const FunctionLibrary> library = nullptr)
      : file_(file), gd_(file.graph_def), path_(path), options_(options), library_(std::move(library)),
        function_body_(library_ != nullptr) {
    graph_.path = path;
    graph_.source = GraphSource::kTensorFlow;
  }

  StatusOr<Graph> Run() {
    // TensorFlow runs an empty graph (nothing to do); a file without nodes
    // given to tfrun is a mistake: a MetaGraphDef without its graph_def, an
    // empty or truncated file.
    if (gd_.node_size() == 0) {
      return BadInput(fmt::format("{}: the {} holds no nodes: nothing to place or run", path_, file_.kind));
    }
    if (gd_.node_size() > options_.max_nodes) {
      return BadInput(fmt::format("{}: the graph has {} nodes; --max-nodes allows {}", path_, gd_.node_size(),
                                  options_.max_nodes));
    }
    if (library_ == nullptr && gd_.library().function_size() > 0) {
      TFRUN_ASSIGN_OR_RETURN(library_, MakeFunctionLibrary(gd_.library(), path_));
    }
    graph_.functions = library_;
    TFRUN_RETURN_IF_ERROR(IndexNames());
    TFRUN_RETURN_IF_ERROR(ResolveInputs());
    TFRUN_ASSIGN_OR_RETURN(std::vector<int> order, Order());
    new_id_.assign(gd_.node_size(), -1);
    for (int index : order) TFRUN_RETURN_IF_ERROR(AddNode(index));
    TFRUN_RETURN_IF_ERROR(ConnectBackEdges());
    if (options_.semantics == ImportSemantics::kPython) ApplyPythonImport();
    graph_.collections = file_.node_collections;
    for (const TfGraphFile::Signature& signature : file_.signatures) {
      const std::optional<TensorName> name = ParseTensorName(signature.output_tensor);
      const Node* node = name ? graph_.Find(name->node) : nullptr;
      graph_.signatures.push_back(
          {signature.name, node == nullptr ? std::string() : CalledFunction(graph_, *node), signature.output_keys});
    }
    graph_.saved_objects = file_.saved_objects;
    graph_.queue_runners = file_.queue_runners;
    graph_.saved_model_restore = file_.saved_model_restore;
    graph_.variables_start_initialized = false;
    return std::move(graph_);
  }

 private:
  SourceLocation LocationOf(int index) const {
    return index < static_cast<int>(file_.node_locations.size()) ? file_.node_locations[index] : SourceLocation();
  }
  std::string Where(int index) const { return FormatLocation(path_, LocationOf(index)); }
  Status Fail(int index, const std::string& message) const {
    const std::string& name = gd_.node(index).name();
    return LocatedError(ErrorKind::kBadInput, path_, LocationOf(index), fmt::format("node '{}': {}", name, message),
                        name);
  }

  Status IndexNames() {
    for (int i = 0; i < gd_.node_size(); ++i) {
      const tfproto::NodeDef& node = gd_.node(i);
      if (node.name().empty()) return BadInput(fmt::format("{}: node {} has no name", Where(i), i));
      // GraphConstructor::BuildNodeIndex: TensorFlow's name rule, so that no
      // name carries a newline, an escape sequence or bytes that are not
      // UTF-8 into a message, a --json report or a written GraphDef.
      // A function body's may start with '_' (FunctionDefToBodyHelper's
      // allow_internal_ops: eager's one-op wrapper of _EagerConst).
      if (!IsValidNodeName(node.name(), function_body_)) {
        return BadInput(fmt::format("{}: Node '{}': Node name contains invalid characters", Where(i),
                                    ClipForMessage(node.name())));
      }
      if (node.op().empty()) {
        return BadInput(fmt::format("{}: Node '{}' does not specify an operation", Where(i), node.name()));
      }
      if (!index_.emplace(node.name(), i).second) {
        return BadInput(fmt::format("{}: Node '{}' is not unique", Where(i), node.name()));
      }
      if (NeedsRewrites(node.op())) {
        return Fail(i, fmt::format("{} is not supported yet: TensorFlow rewrites it before placing "
                                   "(v2 control flow, function calls)",
                                   node.op()));
      }
      const TfOpDef* op = FindTfOp(node.op());
      if ((op == nullptr || !op->has_op_def) && !CallsLibraryFunction(node)) {
        return Fail(i, fmt::format("Op type not registered '{}' in TensorFlow {}'s tables", ClipForMessage(node.op()),
                                   TfTablesVersion()));
      }
    }
    return Status::Ok();
  }

  // A native call: the op names a function of the library.
  bool CallsLibraryFunction(const tfproto::NodeDef& node) const {
    return library_ != nullptr && library_->Contains(node.op());
  }

  // The first output of NodeDef `index`'s output argument `arg` (a function
  // body's "node:arg:k" reads output start + k): the outputs its OpDef's
  // earlier output arguments bind, or the position of a called function's
  // output of that name.
  StatusOr<int> OutputArgStart(int index, const std::string& arg) const {
    const tfproto::NodeDef& def = gd_.node(index);
    if (CallsLibraryFunction(def)) {
      NodeAttrs call_attrs;
      for (const auto& [name, value] : def.attr()) call_attrs.emplace(name, ConvertAttr(value, ""));
      TFRUN_ASSIGN_OR_RETURN(const FunctionSignature signature, library_->Signature(def.op(), &call_attrs));
      int start = 0;
      for (const auto& [name, count] : signature.output_args) {
        if (name == arg) return start;
        start += count;
      }
      return BadInput(fmt::format("function '{}' has no output '{}'", def.op(), arg));
    }
    const TfOpDef& op = *FindTfOp(def.op());
    NodeAttrs attrs;
    for (const auto& [name, value] : def.attr()) {
      const TfAttrDef* attr_def = op.FindAttr(name);
      attrs.emplace(name, ConvertAttr(value, attr_def != nullptr ? attr_def->type : std::string_view()));
    }
    AddDefaultAttrs(op, &attrs);
    int start = 0;
    for (const TfArgDef& out : op.outputs) {
      if (out.name == arg) return start;
      std::vector<std::string> types;
      std::string missing;
      TFRUN_ASSIGN_OR_RETURN(const int64_t count, BindArgs({out}, attrs, options_.max_nodes, &types, &missing));
      start += static_cast<int>(count);
    }
    return BadInput(fmt::format("{} has no output '{}'", def.op(), arg));
  }

  Status ResolveInputs() {
    inputs_.resize(gd_.node_size());
    for (int i = 0; i < gd_.node_size(); ++i) {
      bool control_seen = false;
      for (const std::string& text : gd_.node(i).input()) {
        Input in;
        std::string_view name = text;
        if (!name.empty() && name[0] == '^') {
          name.remove_prefix(1);
          in.index = -1;
          control_seen = true;
        } else if (control_seen) {
          return Fail(i, fmt::format("Non-control input '{}' after control input in NodeDef", ClipForMessage(text)));
        }
        std::string node_name(name);
        std::string output_arg;  // a function body's "node:out_arg:k"
        if (in.index >= 0) {
          const size_t first = name.find(':');
          if (function_body_ && first != std::string_view::npos && name.find(':', first + 1) != std::string_view::npos) {
            const size_t second = name.find(':', first + 1);
            output_arg = std::string(name.substr(first + 1, second - first - 1));
            const std::optional<TensorName> k = ParseTensorName(fmt::format("x:{}", name.substr(second + 1)));
            if (!k || output_arg.empty()) return Fail(i, fmt::format("malformed input '{}'", ClipForMessage(text)));
            node_name = std::string(name.substr(0, first));
            in.index = k->index;
          } else {
            const std::optional<TensorName> tensor = ParseTensorName(name);
            if (!tensor) return Fail(i, fmt::format("malformed input '{}'", ClipForMessage(text)));
            node_name = tensor->node;
            in.index = tensor->index;
          }
        }
        auto it = index_.find(node_name);
        if (it == index_.end()) return Fail(i, fmt::format("Unknown input node '{}'", ClipForMessage(text)));
        in.source = it->second;
        if (!output_arg.empty()) {
          StatusOr<int> start = OutputArgStart(it->second, output_arg);
          if (!start.ok()) return Fail(i, fmt::format("input '{}': {}", ClipForMessage(text), start.status().message()));
          in.index += *start;
        }
        inputs_[i].push_back(in);
      }
    }
    return Status::Ok();
  }

  // GraphConstructor::Convert: the lowest-index ready node first. A Merge
  // fed by a NextIteration (a while loop's) waits for its control inputs
  // and one data input only (InitFromEdges); the inputs not yet imported
  // when it is are its back edges.
  StatusOr<std::vector<int>> Order() const {
    const int n = gd_.node_size();
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> consumers(n);
    for (int i = 0; i < n; ++i) {
      pending[i] = static_cast<int>(inputs_[i].size());
      int control = 0;
      bool back_edge = false;
      for (const Input& in : inputs_[i]) {
        consumers[in.source].push_back(i);
        if (in.index < 0) {
          ++control;
        } else {
          back_edge = back_edge || NodeClassOf(gd_.node(in.source).op()) == NodeClass::kNextIteration;
        }
      }
      if (back_edge && NodeClassOf(gd_.node(i).op()) == NodeClass::kMerge) pending[i] = control + 1;
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.push(i);
    }
    std::vector<int> order;
    order.reserve(n);
    while (!ready.empty()) {
      const int next = ready.top();
      ready.pop();
      order.push_back(next);
      for (int c : consumers[next]) {
        if (--pending[c] == 0) ready.push(c);
      }
    }
    if (static_cast<int>(order.size()) < n) {
      // GraphConstructor's words; the first node left names where.
      for (int i = 0; i < n; ++i) {
        if (pending[i] > 0) {
          return Fail(i, fmt::format("{} nodes in a cycle (a cycle must run through a while loop's NextIteration "
                                     "and Merge)",
                                     n - static_cast<int>(order.size())));
        }
      }
    }
    return order;
  }

  // GraphConstructor::AddBackEdges: each back edge joins its Merge once every
  // node is imported, with the type check of any edge.
  Status ConnectBackEdges() {
    for (const BackEdge& e : back_edges_) {
      const Node& merge = graph_.nodes[e.consumer];
      const int source = new_id_[e.source];
      const NodeProperties& producer = graph_.properties[graph_.nodes[source].properties];
      const NodeProperties& consumer = graph_.properties[merge.properties];
      if (e.index >= static_cast<int>(producer.output_types.size())) {
        return Fail(e.def_index, fmt::format("Connecting to invalid output {} of source node {} which has {} outputs.",
                                             e.index, gd_.node(e.source).name(), producer.output_types.size()));
      }
      const std::string& given = producer.output_types[e.index];
      const std::string& expected = consumer.input_types[e.input];
      if (given != expected && given != expected + "_REF") {
        return Fail(e.def_index,
                    fmt::format("Input {} of node {} was passed {} from {}:{} incompatible with expected {}.", e.input,
                                merge.name, DataTypeString(given), gd_.node(e.source).name(), e.index,
                                DataTypeString(expected)));
      }
      graph_.SetInput(e.consumer, e.input, {source, e.index});
    }
    return Status::Ok();
  }

  Status AddNode(int index) {
    const tfproto::NodeDef& def = gd_.node(index);
    const TfOpDef* found = FindTfOp(def.op());
    if (found == nullptr || !found->has_op_def) return AddCallNode(index);
    const TfOpDef& op = *found;
    NodeProperties imported;
    // node_def_util.cc ValidateNodeDef's type check, in its words (the
    // Op<...> summary shortened to the op's name, as for a missing attr).
    // An attr the OpDef lacks TensorFlow 2.21 logs and ignores.
    for (const auto& [name, value] : def.attr()) {
      const TfAttrDef* attr_def = op.FindAttr(name);
      AttrValue converted = ConvertAttr(value, attr_def != nullptr ? attr_def->type : std::string_view());
      if (attr_def != nullptr && converted.type != attr_def->type) {
        return Fail(index, fmt::format("AttrValue had value with type '{}' when '{}' expected for attr '{}'; NodeDef: "
                                       "{{{{node {}}}}}; Op<name={}>",
                                       converted.type, attr_def->type, name, def.name(), def.op()));
      }
      imported.attrs.emplace(name, std::move(converted));
    }
    AddDefaultAttrs(op, &imported.attrs);
    // ValidateNodeDef's other checks (minimums, allowed values, missing
    // attrs), which GraphConstructor runs on every imported NodeDef.
    if (const std::string error = NodeDefAttrError(op, imported.attrs); !error.empty()) {
      if (error.rfind("NodeDef missing attr", 0) == 0) {
        return Fail(index, fmt::format("{}; NodeDef: {{{{node {}}}}}", error, def.name()));
      }
      return Fail(index, fmt::format("{}; NodeDef: {{{{node {}}}}}; Op<name={}>", error, def.name(), def.op()));
    }
    std::string missing;
    const int64_t data_inputs = static_cast<int64_t>(inputs_[index].size()) -
                                std::count_if(inputs_[index].begin(), inputs_[index].end(),
                                              [](const Input& in) { return in.index < 0; });
    StatusOr<int64_t> bound = BindArgs(op.inputs, imported.attrs, data_inputs, &imported.input_types, &missing);
    if (bound.ok() && *bound > data_inputs) {
      return Fail(index, fmt::format("{} takes {} inputs; the NodeDef has {}", def.op(), *bound, data_inputs));
    }
    // Every output is a slot the executor keeps (a Tensor, its copies, its
    // uses): --max-nodes bounds them as it bounds nodes, so a 15 KB file
    // of Splits with num_split 10^6 is refused, not allocated.
    const int64_t outputs_left = options_.max_nodes - outputs_;
    if (bound.ok()) bound = BindArgs(op.outputs, imported.attrs, outputs_left, &imported.output_types, &missing);
    if (bound.ok() && *bound > outputs_left) {
      return Fail(index, fmt::format("the graph's nodes have more than {} outputs in all (--max-nodes bounds the "
                                     "outputs too)",
                                     options_.max_nodes));
    }
    if (!bound.ok()) {
      return Fail(index, missing.empty() ? bound.status().message()
                                         : fmt::format("NodeDef missing attr '{}' from Op<name={}>; NodeDef: "
                                                       "{{{{node {}}}}}",
                                                       missing, def.op(), def.name()));
    }
    outputs_ += static_cast<int64_t>(imported.output_types.size());
    return AddWithProperties(index, std::move(imported));
  }

  // A native call of a library function: its attrs as written, its types
  // the function's signature.
  Status AddCallNode(int index) {
    const tfproto::NodeDef& def = gd_.node(index);
    NodeProperties imported;
    for (const auto& [name, value] : def.attr()) imported.attrs.emplace(name, ConvertAttr(value, ""));
    StatusOr<FunctionSignature> signature = library_->Signature(def.op(), &imported.attrs);
    if (!signature.ok()) return Fail(index, signature.status().message());
    imported.input_types = std::move(signature->input_types);
    imported.output_types = std::move(signature->output_types);
    outputs_ += static_cast<int64_t>(imported.output_types.size());
    return AddWithProperties(index, std::move(imported));
  }

  // The node of NodeDef `index`, its types bound in `imported`: its edges
  // checked and connected, its fields set, appended.
  Status AddWithProperties(int index, NodeProperties imported) {
    const tfproto::NodeDef& def = gd_.node(index);
    Node node;
    node.name = def.name();
    node.op = def.op();
    node.location = index < static_cast<int>(file_.node_locations.size()) ? file_.node_locations[index]
                                                                           : SourceLocation();
    int data = 0;
    for (const Input& in : inputs_[index]) {
      const int source = new_id_[in.source];
      if (source < 0) {
        // Not imported yet: a back edge, which only a Merge may have.
        if (in.index < 0 || NodeClassOf(def.op()) != NodeClass::kMerge) {
          return Fail(index, fmt::format("Node '{}' had a back edge, but only Merge nodes can have back edges.",
                                         def.name()));
        }
        back_edges_.push_back({static_cast<int>(graph_.nodes.size()), data, in.source, in.index, index});
        node.inputs.push_back(-1);
        node.input_index.push_back(in.index);
        ++data;
        continue;
      }
      if (in.index < 0) {
        node.control_inputs.push_back(source);
        continue;
      }
      const NodeProperties& producer = graph_.properties[graph_.nodes[source].properties];
      if (in.index >= static_cast<int>(producer.output_types.size())) {
        return Fail(index, fmt::format("Connecting to invalid output {} of source node {} which has {} outputs.",
                                       in.index, gd_.node(in.source).name(), producer.output_types.size()));
      }
      if (data < static_cast<int>(imported.input_types.size())) {
        const std::string& given = producer.output_types[in.index];
        const std::string& expected = imported.input_types[data];
        // A reference output may feed a value input of its type.
        const bool ok = given == expected || given == expected + "_REF";
        if (!ok) {
          return Fail(index, fmt::format("Input {} of node {} was passed {} from {}:{} incompatible with expected {}.",
                                         data, def.name(), DataTypeString(given), gd_.node(in.source).name(), in.index,
                                         DataTypeString(expected)));
        }
      }
      node.inputs.push_back(source);
      node.input_index.push_back(in.index);
      ++data;
    }
    if (data != static_cast<int>(imported.input_types.size())) {
      return Fail(index, fmt::format("{} takes {} inputs; the NodeDef has {}", def.op(), imported.input_types.size(),
                                     data));
    }
    if (std::all_of(node.input_index.begin(), node.input_index.end(), [](int i) { return i == 0; })) {
      node.input_index.clear();
    }
    node.num_outputs = static_cast<int>(imported.output_types.size());
    TFRUN_RETURN_IF_ERROR(SetValueFields(index, &imported, &node));
    // A reference Assign writes the variable its ref input comes from, as
    // the executor's variables are kept by the VariableV2's name.
    if (node.op == "Assign" && !node.inputs.empty() && graph_.nodes[node.inputs[0]].op == "VariableV2") {
      node.variable = graph_.nodes[node.inputs[0]].name;
    }

    if (!def.device().empty()) {
      StatusOr<DeviceSpec> spec = DeviceSpec::Parse(def.device());
      if (!spec.ok()) return Fail(index, fmt::format("Malformed device specification '{}'", ClipForMessage(def.device())));
      node.requested_device = *spec;
      node.requested_device_text = def.device();
    }
    if (auto it = imported.attrs.find("_class"); it != imported.attrs.end() && it->second.is_list()) {
      for (const std::string& group : it->second.items) {
        if (group.rfind("loc:@", 0) == 0) node.colocation.push_back(group.substr(5));
      }
    }
    node.properties = static_cast<int32_t>(graph_.properties.size());
    graph_.properties.push_back(std::move(imported));
    new_id_[index] = graph_.Add(std::move(node));
    return Status::Ok();
  }

  // dtype, shape and a Const's value, where tfrun's types hold them.
  Status SetValueFields(int index, NodeProperties* properties_def, Node* node) {
    const NodeProperties& imported = *properties_def;
    if (!imported.output_types.empty()) {
      std::string type = imported.output_types[0];
      if (IsRefType(type)) type.resize(type.size() - 4);
      if (std::optional<DType> dtype = DTypeOfTableType(type)) node->dtype = *dtype;
    }
    const NodeAttrs& attrs = imported.attrs;
    if (auto it = attrs.find("transpose_a"); it != attrs.end()) node->transpose_a = it->second.items == std::vector<std::string>{"true"};
    if (auto it = attrs.find("transpose_b"); it != attrs.end()) node->transpose_b = it->second.items == std::vector<std::string>{"true"};
    const tfproto::NodeDef& def = gd_.node(index);
    auto shape_attr = def.attr().find("shape");
    auto output_shapes = def.attr().find("_output_shapes");
    node->unknown_rank = true;
    if (def.op() == "Const") {
      const tfproto::TensorProto& value = def.attr().count("value") ? def.attr().at("value").tensor()
                                                                     : tfproto::TensorProto::default_instance();
      node->shape = ShapeOf(value.tensor_shape());
      node->unknown_rank = false;
      const std::optional<int64_t> n = NumElements(node->shape);
      if (!n || !IsFullyDefined(node->shape)) return Fail(index, "the Const's value has an invalid shape");
      // ConstantOp's constructor (constant_op.cc): a value that does not
      // parse (no dtype, a negative or reference one), or of another dtype
      // than the node's, fails the node when it runs; it printed 0.0.
      const int proto_type = value.dtype();
      const bool parses = tfproto::DataType_IsValid(proto_type) && proto_type != tfproto::DT_INVALID &&
                          proto_type < 100;  // DT_FLOAT_REF and the other reference types
      const std::string attr_type = imported.output_types.empty() ? "" : imported.output_types[0];
      if (!parses) {
        properties_def->kernel_error = fmt::format("Cannot parse tensor from proto: {}", ClipForMessage(value.ShortDebugString(), 300));
        return Status::Ok();
      }
      if (TypeName(proto_type) != attr_type) {
        properties_def->kernel_error = fmt::format("Type mismatch between value ({}) and dtype ({})",
                                             DataTypeString(TypeName(proto_type)), DataTypeString(attr_type));
        return Status::Ok();
      }
      const std::optional<DType> dtype = DTypeOfTableType(TypeName(value.dtype()));
      if (dtype == DType::kVariant) {
        properties_def->kernel_error = "tfrun does not make variant constants (a TensorList is made by its ops)";
        return Status::Ok();
      }
      if (dtype && *dtype == node->dtype) {
        const std::optional<int64_t> bytes = ConstBytes(value, *dtype, *n);
        if (!bytes || __builtin_add_overflow(tensor_bytes_, *bytes, &tensor_bytes_) ||
            tensor_bytes_ > options_.max_tensor_bytes) {
          return Fail(index, fmt::format("the constants need more than --max-tensor-bytes ({})",
                                         options_.max_tensor_bytes));
        }
        StatusOr<Tensor> tensor = TensorFromProto(value, *dtype, node->shape);
        if (!tensor.ok() && tensor.status().kind() != ErrorKind::kBadInput) return Fail(index, tensor.status().message());
        if (!tensor.ok()) {  // MakeTensorFromProto's failure, at run as in TensorFlow
          properties_def->kernel_error = fmt::format("Cannot parse tensor from proto: {}", tensor.status().message());
          return Status::Ok();
        }
        node->value = std::move(*tensor);
      }
    } else if (shape_attr != def.attr().end() && shape_attr->second.has_shape()) {
      node->shape = ShapeOf(shape_attr->second.shape());
      node->unknown_rank = shape_attr->second.shape().unknown_rank();
    } else if (output_shapes != def.attr().end() && output_shapes->second.list().shape_size() > 0) {
      node->shape = ShapeOf(output_shapes->second.list().shape(0));
      node->unknown_rank = output_shapes->second.list().shape(0).unknown_rank();
    }
    return Status::Ok();
  }

  // importer.py _ProcessNewOps: a node with `_class` takes the device of the
  // first group it names whose node has one (or none); others keep theirs.
  // The importer also turns `_output_shapes` into the tensors' shapes and
  // drops the attr.
  void ApplyPythonImport() {
    for (NodeProperties& def : graph_.properties) def.attrs.erase("_output_shapes");
    std::vector<DeviceSpec> original(graph_.nodes.size());
    std::vector<std::string> original_text(graph_.nodes.size());
    for (const Node& n : graph_.nodes) {
      original[n.id] = n.requested_device;
      original_text[n.id] = n.requested_device_text;
    }
    for (Node& n : graph_.nodes) {
      if (n.colocation.empty()) continue;
      n.requested_device = DeviceSpec();
      n.requested_device_text.clear();
      for (const std::string& group : n.colocation) {
        const Node* target = graph_.Find(group);
        if (target == nullptr || original[target->id].empty()) continue;
        n.requested_device = original[target->id];
        n.requested_device_text = n.requested_device.ToString();
        break;
      }
    }
  }

  const TfGraphFile& file_;
  const tfproto::GraphDef& gd_;
  const std::string& path_;
  const GraphDefImportOptions& options_;
  std::shared_ptr<const FunctionLibrary> library_;  // the functions its nodes may call
  const bool function_body_;                       // a function's body: "node:out_arg:k" inputs
  Graph graph_;
  std::unordered_map<std::string, int> index_;  // name -> GraphDef index
  std::vector<std::vector<Input>> inputs_;      // per GraphDef index
  std::vector<int> new_id_;                     // GraphDef index -> node id
  // A Merge's input whose producer was not imported before it.
  struct BackEdge {
    int consumer = 0;   // the Merge's node id
    int input = 0;      // its data input
    int source = 0;     // the producer's GraphDef index
    int index = 0;      // the producer's output
    int def_index = 0;  // the Merge's GraphDef index, for messages
  };
  std::vector<BackEdge> back_edges_;
  int64_t tensor_bytes_ = 0;
  int64_t outputs_ = 0;  // the nodes' outputs so far, against --max-nodes
};

}  // namespace

StatusOr<Graph> ImportGraphDef(const TfGraphFile& file, const std::string& path, const GraphDefImportOptions& options) {
  return Importer(file, path, options).Run();
}

StatusOr<Graph> ImportFunctionGraphDef(const TfGraphFile& body, const std::string& path,
                                       const GraphDefImportOptions& options,
                                       std::shared_ptr<const FunctionLibrary> library) {
  return Importer(body, path, options, std::move(library)).Run();
}

AttrValue ConvertGraphDefAttr(const tfproto::AttrValue& value, std::string_view def_type) {
  return ConvertAttr(value, def_type);
}

}  // namespace tfrun

namespace tfrun {

StatusOr<Graph> LoadTfGraph(const std::string& path, const GraphDefImportOptions& options) {
  TFRUN_ASSIGN_OR_RETURN(TfGraphFile file, ReadTfGraphFile(path, options.saved_model_tag, options.max_file_bytes));
  return ImportGraphDef(file, path, options);
}

}  // namespace tfrun
