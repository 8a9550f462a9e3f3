// TensorFlow's one-line form of a NodeDef (node_def_util.cc
// SummarizeNodeDef): "name = Op[attrs, sorted by name](inputs)". TF 1.x
// ends runtime errors with it ("[[Node: ...]]"); TF 2.x quotes it in
// graph-construction errors ("for '{{node x}} = MatMul[...](a, b)'").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"

namespace tfrun {

// Whose op definitions give the attributes: an op gains attributes over
// the years (MatMul's grad_a and grad_b, Cast's Truncate are TF 2's).
enum class NodeDefEra { kTf1, kTf2 };

// `node` reads its inputs' names and dtypes from `graph` (it need not be
// in it yet); `op_attrs` are the attributes its op's NodeDef carries
// (OpDef::node_def_attrs; the caller looks the op up, so that this file
// and the op registry, which quotes summaries in its errors, do not
// depend on each other). A non-empty `device` is listed last as
// `_device="..."`.
std::string NodeDefSummary(const Graph& graph, const Node& node, const std::vector<std::string_view>& op_attrs,
                           std::string_view device, NodeDefEra era);

// "DT_FLOAT", as NodeDefs print a type attribute.
std::string DataTypeEnum(DType dtype);

}  // namespace tfrun
