// TensorFlow's own op and kernel tables (every OpDef and KernelDef that
// TensorFlow 2.21's CUDA build registers, written by tools/gen_tf_tables.py
// into core/tables/tf_ops.tsv and embedded in the binary), and TensorFlow's
// kernel lookup over them (op_kernel.cc FindKernelRegistration,
// kernel_def_util.cc KernelAttrsMatch). The placer reads these and nothing
// else to decide where an op can go; what tfrun itself can execute is each
// backend's business (kernel_registry.h).
//
// Lookups parse one op's line on first use and keep it for the process:
// a run pays for the ops its graph uses, not for the 1 MB table.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/status.h"

namespace tfrun {

// A value as a NodeDef's attribute holds it. Elements are written as the
// tables write them: types without DT_ ("FLOAT"), strings as their bytes,
// bools "true"/"false", ints in decimal, shapes "?" or "(2x-1)".
struct AttrValue {
  std::string_view type;  // the AttrDef's: "type", "list(type)", "string", "int", "bool", "shape", ...
  std::vector<std::string> items;  // exactly one for a scalar
  bool is_list() const { return type.substr(0, 5) == "list("; }
};

// A NodeDef's attributes by name (sorted, as TensorFlow prints them).
using NodeAttrs = std::map<std::string, AttrValue, std::less<>>;

struct TfArgDef {
  std::string_view name;
  std::string_view type;  // a fixed type ("INT32"), or empty
  std::string_view type_attr;
  std::string_view number_attr;
  std::string_view type_list_attr;
  bool is_ref = false;
};

struct TfAttrDef {
  std::string_view name;
  std::string_view type;
  std::optional<AttrValue> default_value;
  std::vector<std::string> allowed;  // empty: any value of the type
  // An int's least value, or a list's least length (OpDef's has_minimum).
  std::optional<int64_t> minimum;
};

struct TfKernelConstraint {
  std::string_view name;
  std::string_view kind;  // "type", "string", "int" or "bool"
  // The allowed values as the table writes them (comma-separated,
  // %-escaped): kept unparsed, so that looking an op up costs no more than
  // splitting its line (Const has 80 kernels of up to 23 types each).
  std::string_view encoded;

  std::vector<std::string> allowed() const;
  bool Allows(std::string_view value) const;
};

struct TfKernelDef {
  std::string_view device_type;
  int priority = 0;
  std::string_view label;
  std::vector<std::string_view> host_memory_args;
  std::vector<TfKernelConstraint> constraints;
  // Registered only once XLA devices exist (TF_XLA_FLAGS=
  // --tf_xla_enable_xla_devices): XLA_CPU/XLA_GPU's op kernels and the
  // XLA_*_JIT compilation kernels.
  bool needs_xla_devices = false;
};

struct TfOpDef {
  std::string_view name;
  bool has_op_def = true;  // false: kernels registered for an op TensorFlow does not define
  bool is_stateful = false;
  std::vector<TfArgDef> inputs;
  std::vector<TfArgDef> outputs;
  std::vector<TfAttrDef> attrs;
  std::vector<TfKernelDef> kernels;  // in TensorFlow's listing order
  // Indices into `kernels` in the order TensorFlow lists them once XLA
  // devices exist; empty when it is the same.
  std::vector<int> xla_listing_order;

  const TfAttrDef* FindAttr(std::string_view attr) const;
};

// The op's definition and kernels; nullptr for an op TensorFlow does not
// know. Thread-safe; the result lives as long as the process.
const TfOpDef* FindTfOp(std::string_view op);
// Every op name in the tables, sorted.
std::vector<std::string_view> AllTfOpNames();
// The TensorFlow version the tables came from ("2.21.0").
std::string_view TfTablesVersion();

// The table's type names ("FLOAT") and TensorFlow's others: Python's
// tf.dtypes.as_dtype(x).name ("float32"), DataTypeString's enum ("DT_FLOAT").
std::string_view TableTypeName(DType dtype);
std::optional<DType> DTypeOfTableType(std::string_view table_type);
std::string PythonDTypeName(std::string_view table_type);

// The attributes a NodeDef lacks, from the OpDef's defaults
// (AddDefaultAttrsToNodeDef): TensorFlow fills them before placing.
void AddDefaultAttrs(const TfOpDef& op, NodeAttrs* attrs);

// What ValidateNodeDef (node_def_util.cc) says of `attrs` (defaults filled
// in, every value of its AttrDef's kind) against the OpDef: an attr the
// OpDef has and the NodeDef lacks; a reference type; an int below its
// minimum or a list shorter; a type or string not among the allowed
// values. TensorFlow's text without its "; NodeDef: ..." tail, or "" when
// the attrs are valid. Attrs the OpDef lacks are not checked (TensorFlow
// 2.21 ignores them).
std::string NodeDefAttrError(const TfOpDef& op, const NodeAttrs& attrs);

// The kernel TensorFlow would instantiate for a node with `attrs` on
// `device_type` (FindKernelRegistration): the highest-priority matching
// KernelDef with the node's `label` (its _kernel attr), else the DEFAULT
// one; nullptr when none matches. Errors are TensorFlow's: a constraint on
// an attr the node lacks, two matches at one priority.
// `xla_devices`: whether kernels registered with the XLA devices exist.
StatusOr<const TfKernelDef*> FindKernelDef(const TfOpDef& op, std::string_view device_type, const NodeAttrs& attrs,
                                           bool xla_devices, std::string_view label = "");

// SupportedDeviceTypesForNode: each of `types` (in the DeviceSet's priority
// order) with a matching kernel, with that kernel's priority, stable-sorted
// by priority, highest first.
StatusOr<std::vector<std::pair<std::string_view, int>>> SupportedDeviceTypes(
    const TfOpDef& op, const std::vector<std::string_view>& types, const NodeAttrs& attrs, bool xla_devices);

// KernelsRegisteredForOp: "  device='GPU'; T in [DT_FLOAT, DT_HALF]\n" per
// kernel, or "  <no registered kernels>\n".
std::string KernelsRegisteredForOp(const TfOpDef& op, bool xla_devices);

// SummarizeAttrValue: DT_FLOAT, "NHWC", 3, true, [DT_FLOAT, DT_HALF], [?,3].
std::string SummarizeAttrValue(const AttrValue& value);
// "T=DT_FLOAT, transpose_a=false" (SummarizeAttrs, sorted by name).
std::string SummarizeAttrs(const NodeAttrs& attrs);

}  // namespace tfrun
