#include "core/graph_file/split_concat.h"
#include "core/base/device_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/graph/op_registry.h"

namespace tfrun {

StatusOr<int64_t> SplitConcatExpander::ReadAxis(const YamlNode& entry, const Node& node, bool required) const {
  const YamlNode axis = entry["axis"];
  if (!axis) {
    if (!required) return 0;  // tf.split's default
    return builder_->fields().NodeError(entry, node.name, "ConcatV2 needs 'axis', the dimension to join along");
  }
  int64_t value = 0;
  TFRUN_RETURN_IF_ERROR(builder_->fields().ReadInt(axis, "axis", std::numeric_limits<int32_t>::min(),
                                                   std::numeric_limits<int32_t>::max(), &value, node.name));
  return value;
}

StatusOr<int> SplitConcatExpander::ReadNumSplit(const YamlNode& entry, const Node& node) const {
  const FieldReader& fields = builder_->fields();
  const YamlNode n = entry["num_split"];
  if (!n) return fields.NodeError(entry, node.name, "Split needs 'num_split', the number of slices");
  int64_t count = 0;
  std::string word = n.IsScalar() ? n.ScalarString() : "";
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::toupper(c); });
  if (word == kGpu || word == kCpu) {
    TFRUN_ASSIGN_OR_RETURN(const int devices, count_devices_(word));
    if (devices == 0) {
      return fields.NodeError(n, node.name,
                              fmt::format("Attr 'num_split' of 'Split' Op passed 0 less than minimum 1 (num_split: {} "
                                          "and there is no {} device)",
                                          n.Scalar(), word));
    }
    return devices;
  }
  TFRUN_RETURN_IF_ERROR(fields.ReadInt(n, "num_split", std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max(), &count, node.name));
  if (count < 1) {
    return fields.NodeError(n, node.name,
                            fmt::format("Attr 'num_split' of 'Split' Op passed {} less than minimum 1.", count));
  }
  constexpr int64_t kMostSlices = 1 << 20;  // each slice is an output the executor tracks
  if (count > kMostSlices) {
    return fields.NodeError(n, node.name, fmt::format("num_split {} is more than {} slices", count, kMostSlices));
  }
  return static_cast<int>(count);
}

StatusOr<int> SplitConcatExpander::AddAxis(const YamlNode& entry, const Node& op, const std::string& suffix,
                                           int64_t axis) {
  Node c;
  c.name = namer_->Unique(op.name + "/" + suffix);
  c.op = "Const";
  c.location = op.location;
  c.requested_device = op.requested_device;
  c.requested_device_text = op.requested_device_text;
  c.dtype = DType::kInt32;
  TFRUN_ASSIGN_OR_RETURN(c.value, Tensor::AllocateHost(DType::kInt32, {}));
  c.value.data<int32_t>()[0] = static_cast<int32_t>(axis);
  c.literal.form = ConstLiteral::Form::kScalar;
  c.literal.python = ConstLiteral::Python::kInt;
  c.literal.int_value = axis;
  return builder_->Add(std::move(c), *FindOp("Const"), entry);
}

StatusOr<int> SplitConcatExpander::Add(const YamlNode& entry, Node node, const std::string& base) {
  if (node.op == "Split") {
    TFRUN_ASSIGN_OR_RETURN(node.num_outputs, ReadNumSplit(entry, node));
    TFRUN_ASSIGN_OR_RETURN(const int64_t axis, ReadAxis(entry, node, false));
    TFRUN_ASSIGN_OR_RETURN(const int split_dim, AddAxis(entry, node, "split_dim", axis));
    node.inputs.insert(node.inputs.begin(), split_dim);
    if (!node.input_index.empty()) node.input_index.insert(node.input_index.begin(), 0);
    return builder_->Add(std::move(node), *FindOp("Split"), entry);
  }
  TFRUN_ASSIGN_OR_RETURN(const int64_t axis, ReadAxis(entry, node, true));
  if (node.inputs.size() == 1) {
    // array_ops.concat: convert_to_tensor(axis, name="concat_dim"), then
    // identity(values[0], name=name) inside the name scope.
    const std::string scope_name = node.name;
    TFRUN_RETURN_IF_ERROR(AddAxis(entry, node, "concat_dim", axis).status());
    node.op = "Identity";
    node.name = namer_->Unique(scope_name + "/" + base);
    TFRUN_ASSIGN_OR_RETURN(const int id, builder_->Add(std::move(node), *FindOp("Identity"), entry));
    builder_->graph().by_name[scope_name] = id;  // what the Python name holds
    return id;
  }
  TFRUN_ASSIGN_OR_RETURN(const int axis_id, AddAxis(entry, node, "axis", axis));
  node.inputs.push_back(axis_id);
  if (!node.input_index.empty()) node.input_index.push_back(0);
  return builder_->Add(std::move(node), *FindOp("ConcatV2"), entry);
}

}  // namespace tfrun
