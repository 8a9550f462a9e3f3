#include "core/graph_def/graph_def_export.h"

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include <google/protobuf/io/zero_copy_stream.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "core/graph/node_builder.h"
#include "core/graph_def/tf_graph_file.h"
#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

// TensorFlow 2.21's GraphDef producer version (versions.producer in the
// files its write_graph wrote, graphs/tf/).
constexpr int kProducer = 2474;

// Protobuf's 2 GB limit on one message.
constexpr size_t kMaxGraphDefBytes = size_t{1} << 31;

// A string that text printing appends to, refusing to grow past `limit`
// (then Print fails and full() says why).
class BoundedStringOutput final : public google::protobuf::io::ZeroCopyOutputStream {
 public:
  BoundedStringOutput(std::string* out, size_t limit) : out_(out), limit_(limit) { out_->clear(); }
  bool Next(void** data, int* size) override {
    const size_t used = written_;
    if (used >= limit_) {
      full_ = true;
      return false;
    }
    const size_t grow = std::min(limit_ - used, std::max<size_t>(out_->size(), 4096));
    out_->resize(used + grow);
    *data = out_->data() + used;
    *size = static_cast<int>(std::min<size_t>(grow, 1 << 30));
    written_ = used + static_cast<size_t>(*size);
    return true;
  }
  void BackUp(int count) override { written_ -= static_cast<size_t>(count); }
  int64_t ByteCount() const override { return static_cast<int64_t>(written_); }
  bool full() const { return full_; }
  // Drops the unused tail of the last buffer.
  void Finish() { out_->resize(written_); }

 private:
  std::string* out_;
  size_t limit_;
  size_t written_ = 0;
  bool full_ = false;
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

StatusOr<tfproto::DataType> DataTypeOf(std::string_view table_type) {
  tfproto::DataType type;
  if (!tfproto::DataType_Parse(fmt::format("DT_{}", table_type), &type)) {
    return BadInput(fmt::format("no GraphDef DataType for '{}'", table_type));
  }
  return type;
}

// "(2x-1)", "()" or "?", as the tables and node_builder.h write shapes.
StatusOr<tfproto::TensorShapeProto> ShapeOf(std::string_view text) {
  tfproto::TensorShapeProto shape;
  if (text == "?") {
    shape.set_unknown_rank(true);
    return shape;
  }
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    return BadInput(fmt::format("no GraphDef shape for '{}'", text));
  }
  const std::string dims(text.substr(1, text.size() - 2));
  for (size_t at = 0; at < dims.size();) {
    const size_t x = dims.find('x', at);
    const std::string dim = dims.substr(at, x == std::string::npos ? std::string::npos : x - at);
    shape.add_dim()->set_size(std::strtoll(dim.c_str(), nullptr, 10));
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return shape;
}

// One item of an attr in the tables' form (tf_tables.h AttrValue).
Status SetItem(std::string_view type, const std::string& item, tfproto::AttrValue* out) {
  if (type == "string") {
    out->set_s(item);
  } else if (type == "int") {
    out->set_i(std::strtoll(item.c_str(), nullptr, 10));
  } else if (type == "float") {
    out->set_f(std::strtof(item.c_str(), nullptr));
  } else if (type == "bool") {
    out->set_b(item == "true");
  } else if (type == "type") {
    TFRUN_ASSIGN_OR_RETURN(const tfproto::DataType t, DataTypeOf(item));
    out->set_type(t);
  } else if (type == "shape") {
    TFRUN_ASSIGN_OR_RETURN(*out->mutable_shape(), ShapeOf(item));
  } else {
    return BadInput(fmt::format("no GraphDef form for an attr of type {}", type));
  }
  return Status::Ok();
}

Status ConvertAttr(const AttrValue& value, tfproto::AttrValue* out) {
  if (!value.is_list()) return value.items.empty() ? Status::Ok() : SetItem(value.type, value.items[0], out);
  const std::string_view item_type = value.type.substr(5, value.type.size() - 6);
  auto* list = out->mutable_list();
  for (const std::string& item : value.items) {
    tfproto::AttrValue one;
    TFRUN_RETURN_IF_ERROR(SetItem(item_type, item, &one));
    switch (one.value_case()) {
      case tfproto::AttrValue::kS: list->add_s(one.s()); break;
      case tfproto::AttrValue::kI: list->add_i(one.i()); break;
      case tfproto::AttrValue::kF: list->add_f(one.f()); break;
      case tfproto::AttrValue::kB: list->add_b(one.b()); break;
      case tfproto::AttrValue::kType: list->add_type(one.type()); break;
      case tfproto::AttrValue::kShape: *list->add_shape() = one.shape(); break;
      default: break;
    }
  }
  return Status::Ok();
}

// The typed value field's element i (float_val, int_val, ...).
void AddValue(const Tensor& tensor, int64_t i, tfproto::TensorProto* proto) {
  switch (tensor.dtype()) {
    case DType::kFloat32: proto->add_float_val(tensor.data<float>()[i]); break;
    case DType::kFloat64: proto->add_double_val(tensor.data<double>()[i]); break;
    case DType::kInt32: proto->add_int_val(tensor.data<int32_t>()[i]); break;
    case DType::kInt64: proto->add_int64_val(tensor.data<int64_t>()[i]); break;
    case DType::kBool: proto->add_bool_val(tensor.data<bool>()[i]); break;
    case DType::kFloat16:
    case DType::kBFloat16:
      proto->add_half_val(static_cast<const uint16_t*>(tensor.raw())[i]);
      break;
    case DType::kString: proto->add_string_val(std::string(tensor.StringAt(i))); break;
    case DType::kUInt8: proto->add_int_val(tensor.data<uint8_t>()[i]); break;  // TensorFlow's field for uint8
    case DType::kUInt64: proto->add_uint64_val(tensor.data<uint64_t>()[i]); break;
    case DType::kVariant: break;  // no Const holds one
  }
}

// As tensor_util.make_tensor_proto writes the value the program gave
// tf.constant: one number filling a shape (tf.constant(1.0, shape=[n, m]))
// as that one value with the shape, the way TensorFlow writes it (a
// 10000x10000 fill was 1.3 GB of tensor_content, TensorFlow's 267 bytes);
// an array of more than one element as its raw bytes, but for bool and
// string (not among _TENSOR_CONTENT_TYPES), whose values are listed; one
// element as its typed value.
StatusOr<tfproto::TensorProto> TensorProtoOf(const Tensor& tensor, const ConstLiteral& literal) {
  tfproto::TensorProto proto;
  TFRUN_ASSIGN_OR_RETURN(const tfproto::DataType type, DataTypeOf(TableTypeName(tensor.dtype())));
  proto.set_dtype(type);
  proto.mutable_tensor_shape();  // present for a scalar too: "tensor_shape { }"
  for (int64_t d : tensor.shape()) proto.mutable_tensor_shape()->add_dim()->set_size(d);
  const int64_t n = tensor.num_elements();
  if (n == 0) return proto;
  if (literal.form == ConstLiteral::Form::kScalar) {
    AddValue(tensor, 0, &proto);
    return proto;
  }
  const bool listed = tensor.dtype() == DType::kBool || tensor.dtype() == DType::kString;
  if (n > 1 && !listed) {
    proto.set_tensor_content(std::string(static_cast<const char*>(tensor.raw()), tensor.num_bytes()));
    return proto;
  }
  for (int64_t i = 0; i < n; ++i) AddValue(tensor, i, &proto);
  return proto;
}

std::string InputName(const Graph& graph, int producer, int index) {
  const std::string& name = graph.nodes[producer].name;
  return index == 0 ? name : fmt::format("{}:{}", name, index);
}

// The NodeDef TensorFlow's Python builds for a graph file's node.
StatusOr<tfproto::NodeDef> NodeDefOf(const Graph& graph, const Node& node, const std::string& device) {
  tfproto::NodeDef def;
  def.set_name(node.name);
  def.set_op(node.op);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const NodeOutput in = node.input(i);
    def.add_input(InputName(graph, in.node, in.index));
  }
  for (int c : node.control_inputs) def.add_input("^" + graph.nodes[c].name);
  def.set_device(device);
  auto& attrs = *def.mutable_attr();
  const NodeProperties* props = graph.PropertiesOf(node);
  if (props == nullptr) return BadInput(fmt::format("node '{}': TensorFlow has no op {}", node.name, node.op));
  for (const auto& [name, value] : props->attrs) {
    if (node.op == "Const" && name == "value") continue;  // from the node's tensor, below
    Status converted = ConvertAttr(value, &attrs[name]);
    if (!converted.ok()) {
      return BadInput(fmt::format("node '{}': attr {}: {}", node.name, name, converted.message()));
    }
  }
  if (node.op == "Const") {
    TFRUN_ASSIGN_OR_RETURN(*attrs["value"].mutable_tensor(), TensorProtoOf(node.value, node.literal));
  }
  return def;
}

// A TensorFlow graph file's nodes as the graph now has them, in `out`
// (the file, its library and versions kept): the file's own NodeDefs, in
// its order, with the devices given. Where the passes rewrote the graph
// (v2 control flow lowered, calls inlined) or it is a TF2 call's body,
// the nodes the file no longer matches are dropped, the passes' nodes
// follow in id order, and every node's inputs are the graph's.
Status SetTfGraphNodes(const Graph& graph, const std::vector<std::string>& devices, tfproto::GraphDef* out) {
  std::unordered_map<std::string_view, int> ids;
  for (const Node& n : graph.nodes) ids.emplace(n.name, n.id);
  // A call's graph is the function's body: the file's nodes are the
  // caller's, whatever their names.
  const bool body = !graph.call.function.empty();
  std::vector<bool> from_file(graph.nodes.size(), false);
  bool rewritten = body;
  std::vector<int> kept;  // file node index -> graph id, or -1
  for (const tfproto::NodeDef& def : out->node()) {
    const auto it = body ? ids.end() : ids.find(def.name());
    const bool same = it != ids.end() && graph.nodes[it->second].op == def.op();
    kept.push_back(same ? it->second : -1);
    if (same) from_file[it->second] = true;
    rewritten = rewritten || !same;
  }
  rewritten = rewritten || std::find(from_file.begin(), from_file.end(), false) != from_file.end();
  google::protobuf::RepeatedPtrField<tfproto::NodeDef> nodes;
  for (int i = 0; i < out->node_size(); ++i) {
    if (kept[i] < 0) continue;
    tfproto::NodeDef* def = nodes.Add();
    def->Swap(out->mutable_node(i));
    def->set_device(devices[kept[i]]);
    if (!rewritten) continue;
    const Node& node = graph.nodes[kept[i]];
    def->clear_input();
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const NodeOutput in = node.input(k);
      def->add_input(InputName(graph, in.node, in.index));
    }
    for (int c : node.control_inputs) def->add_input("^" + graph.nodes[c].name);
  }
  for (const Node& node : graph.nodes) {
    if (from_file[node.id]) continue;
    TFRUN_ASSIGN_OR_RETURN(*nodes.Add(), NodeDefOf(graph, node, devices[node.id]));
  }
  out->mutable_node()->Swap(&nodes);
  return Status::Ok();
}

}  // namespace

Status TableAttrToProto(const AttrValue& value, tfproto::AttrValue* out) { return ConvertAttr(value, out); }

bool IsTextGraphDefPath(const std::string& path) {
  return EndsWith(path, ".pbtxt") || EndsWith(path, ".pbtext") || EndsWith(path, ".txt");
}

StatusOr<std::string> GraphDefBytes(const Graph& graph, const std::vector<std::string>& devices, bool text,
                                    const std::string& saved_model_tag, int64_t max_file_bytes) {
  tfproto::GraphDef out;
  if (graph.source == GraphSource::kTensorFlow) {
    TFRUN_ASSIGN_OR_RETURN(TfGraphFile file, ReadTfGraphFile(graph.path, saved_model_tag, max_file_bytes));
    out = std::move(file.graph_def);
    TFRUN_RETURN_IF_ERROR(SetTfGraphNodes(graph, devices, &out));
  } else {
    for (const Node& node : graph.nodes) {
      TFRUN_ASSIGN_OR_RETURN(*out.add_node(), NodeDefOf(graph, node, devices[node.id]));
    }
    out.mutable_versions()->set_producer(kProducer);
  }
  // Protobuf's limit: TensorFlow reads no GraphDef of 2 GB or more, so
  // none is written (and a text one, up to four times larger for raw
  // bytes, stops at the same size instead of filling the disk).
  const size_t binary_bytes = out.ByteSizeLong();
  if (binary_bytes >= kMaxGraphDefBytes) {
    return BadInput(fmt::format("the GraphDef would have {} bytes, over the {} a protobuf can hold (TensorFlow could "
                                "not read it)",
                                binary_bytes, kMaxGraphDefBytes - 1));
  }
  std::string bytes;
  if (!text) {
    if (!out.SerializeToString(&bytes)) return BadInput("the GraphDef could not be serialised");
    return bytes;
  }
  BoundedStringOutput stream(&bytes, kMaxGraphDefBytes - 1);
  if (!google::protobuf::TextFormat::Printer().Print(out, &stream)) {
    return BadInput(stream.full() ? fmt::format("the text GraphDef would have more than {} bytes, over the {} a "
                                                "protobuf can hold (TensorFlow could not read it); a binary one has {}",
                                                kMaxGraphDefBytes - 1, kMaxGraphDefBytes - 1, binary_bytes)
                                  : "the GraphDef could not be serialised");
  }
  stream.Finish();
  return bytes;
}

}  // namespace tfrun
