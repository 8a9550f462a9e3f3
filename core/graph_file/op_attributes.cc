#include "core/graph_file/op_attributes.h"

#include <string_view>

namespace tfrun {
namespace {

struct AttributeContext {
  const YamlNode& entry;
  const FieldReader& fields;
  TensorLiteralReader* literals;
};

using AttributeReader = Status (*)(const AttributeContext& context, Node* node);

Status ReadConstData(const AttributeContext& c, Node* node) { return c.literals->Read(c.entry, node->name, node); }

Status ReadTransposes(const AttributeContext& c, Node* node) {
  if (const YamlNode t = c.entry["transpose_a"]) {
    TFRUN_RETURN_IF_ERROR(c.fields.ReadBool(t, "transpose_a", &node->transpose_a, node->name));
  }
  if (const YamlNode t = c.entry["transpose_b"]) {
    TFRUN_RETURN_IF_ERROR(c.fields.ReadBool(t, "transpose_b", &node->transpose_b, node->name));
  }
  return Status::Ok();
}

// Cast's output dtype is its DstT; its shape comes from the input.
Status ReadDstT(const AttributeContext& c, Node* node) {
  const YamlNode dst = c.entry["DstT"];
  if (!dst) return c.fields.NodeError(c.entry, node->name, "Cast needs DstT, the dtype to cast to");
  TFRUN_ASSIGN_OR_RETURN(node->dtype, c.fields.ReadDType(dst, node->name));
  if (node->dtype == DType::kString) {
    // cast_op.cc has no numeric-to-string cast (tf.strings.as_string is another op).
    return c.fields.NodeError(dst, node->name, "UnimplementedError: Cast to string is not supported");
  }
  return Status::Ok();
}

// tf.compat.v1.placeholder(dtype, shape): no shape, no known rank.
Status ReadPlaceholder(const AttributeContext& c, Node* node) {
  if (const YamlNode d = c.entry["dtype"]) {
    TFRUN_ASSIGN_OR_RETURN(node->dtype, c.fields.ReadDType(d, node->name));
  }
  if (const YamlNode s = c.entry["shape"]; s && !s.IsNull()) {
    return c.fields.ReadPartialShape(s, node->name, &node->shape);
  }
  node->unknown_rank = true;
  return Status::Ok();
}

struct OpAttributes {
  std::string_view op;
  AttributeReader read;
};

constexpr OpAttributes kOpAttributes[] = {
    {"Const", ReadConstData},
    {"MatMul", ReadTransposes},
    {"Cast", ReadDstT},
    {"Placeholder", ReadPlaceholder},
};

}  // namespace

Status ReadOpAttributes(const YamlNode& entry, const FieldReader& fields, TensorLiteralReader* literals, Node* node) {
  for (const OpAttributes& row : kOpAttributes) {
    if (row.op == node->op) return row.read(AttributeContext{entry, fields, literals}, node);
  }
  return Status::Ok();
}

}  // namespace tfrun
