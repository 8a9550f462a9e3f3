#include "core/graph/kernel_lookup.h"

#include "core/graph/function_library.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/base/device_types.h"
#include "core/graph/node_builder.h"

namespace tfrun {
namespace {

struct Memo {
  std::mutex mutex;
  std::unordered_map<std::string, const TfKernelDef*> kernels;
  // Per op, the attrs any of its kernels' constraints name, sorted.
  std::unordered_map<const TfOpDef*, std::vector<std::string_view>> constrained;
};

Memo& TheMemo() {
  static Memo* memo = new Memo();  // never destroyed: used until exit
  return *memo;
}

// The attrs `op`'s kernel constraints name, computed once per op (Const
// has 80 kernels).
const std::vector<std::string_view>& ConstrainedAttrs(const TfOpDef& op) {
  Memo& memo = TheMemo();
  std::lock_guard<std::mutex> lock(memo.mutex);
  auto [it, added] = memo.constrained.try_emplace(&op);
  if (added) {
    std::vector<std::string_view>& named = it->second;
    for (const TfKernelDef& k : op.kernels) {
      for (const TfKernelConstraint& c : k.constraints) {
        if (std::find(named.begin(), named.end(), c.name) == named.end()) named.push_back(c.name);
      }
    }
    std::sort(named.begin(), named.end());
  }
  return it->second;  // unordered_map values stay put as others are added
}

// What decides a node's kernel: the op, the attrs its kernel constraints
// name, and the `_kernel` label (not the other attrs: a Const's value would
// make the key as large as the tensor).
std::string KeyOf(const Graph& graph, const Node& node, std::string_view device_type) {
  std::string key(device_type);
  key += '\0';
  key += node.op;
  key += '\0';
  const NodeProperties* def = graph.PropertiesOf(node);
  if (def == nullptr) return key;  // no OpDef: no kernel
  auto add = [&](std::string_view name) {
    key += name;
    key += '=';
    auto it = def->attrs.find(name);
    if (it == def->attrs.end()) {
      key += '\2';  // missing
    } else {
      key += it->second.type;
      for (const std::string& item : it->second.items) {
        key += '\3';
        key += item;
      }
    }
    key += '\0';
  };
  add("_kernel");
  if (const TfOpDef* op = FindTfOp(node.op)) {
    for (std::string_view name : ConstrainedAttrs(*op)) add(name);
  }
  return key;
}

const TfKernelDef* Lookup(const TfOpDef& op, const NodeAttrs& attrs, std::string_view device_type) {
  // A NodeDef's `_kernel` attr picks kernels registered with that label.
  auto label = attrs.find("_kernel");
  const std::string_view kernel_label =
      label != attrs.end() && label->second.items.size() == 1 ? std::string_view(label->second.items[0]) : "";
  // A lookup error (an attr a constraint names is missing) means no
  // kernel: tfrun's nodes always carry their OpDef's attrs.
  // The XLA devices' kernels are registered with the devices: there are
  // devices of an XLA type to ask about only when they are.
  const DeviceTypeInfo* type = FindDeviceType(device_type);
  StatusOr<const TfKernelDef*> kernel = FindKernelDef(op, device_type, attrs, type != nullptr && type->is_xla, kernel_label);
  return kernel.ok() ? *kernel : nullptr;
}

// The ArgDef input `i` of `node` belongs to: one input per argument, and
// what the others leave to the one list argument.
const TfArgDef* InputArg(const TfOpDef& op, const Node& node, size_t i) {
  const int list_len = static_cast<int>(node.inputs.size()) - static_cast<int>(op.inputs.size()) + 1;
  size_t first = 0;
  for (const TfArgDef& arg : op.inputs) {
    const bool is_list = !arg.number_attr.empty() || !arg.type_list_attr.empty();
    const size_t count = is_list ? static_cast<size_t>(std::max(list_len, 0)) : 1;
    if (i < first + count) return &arg;
    first += count;
  }
  return nullptr;
}

bool InHost(const TfKernelDef* kernel, std::string_view arg) {
  return kernel != nullptr &&
         std::find(kernel->host_memory_args.begin(), kernel->host_memory_args.end(), arg) !=
             kernel->host_memory_args.end();
}

}  // namespace

const TfKernelDef* TfKernelFor(const Graph& graph, const Node& node, std::string_view device_type) {
  Memo& memo = TheMemo();
  const std::string key = KeyOf(graph, node, device_type);
  {
    std::lock_guard<std::mutex> lock(memo.mutex);
    auto it = memo.kernels.find(key);
    if (it != memo.kernels.end()) return it->second;
  }
  const TfOpDef* op = FindTfOp(node.op);
  const NodeProperties* def = graph.PropertiesOf(node);
  const TfKernelDef* kernel = op == nullptr || def == nullptr ? nullptr : Lookup(*op, def->attrs, device_type);
  std::lock_guard<std::mutex> lock(memo.mutex);
  memo.kernels.emplace(key, kernel);
  return kernel;
}

bool TfHasKernel(const Graph& graph, const Node& node, std::string_view device_type) {
  if (TfKernelFor(graph, node, device_type) != nullptr) return true;
  const TfOpDef* op = FindTfOp(node.op);
  return (op == nullptr || !op->has_op_def) && graph.functions != nullptr && graph.functions->Contains(node.op);
}

bool TfHasKernelFor(std::string_view op_name, DType dtype, std::string_view device_type) {
  const TfOpDef* op = FindTfOp(op_name);
  return op != nullptr && Lookup(*op, OpAttrs(*op, dtype), device_type) != nullptr;
}

bool OutputInHostMemory(const Graph& graph, const Node& node, std::string_view device_type) {
  const TfOpDef* op = FindTfOp(node.op);
  if (op == nullptr || op->outputs.empty()) return false;
  return InHost(TfKernelFor(graph, node, device_type), op->outputs[0].name);
}

bool InputInHostMemory(const Graph& graph, const Node& node, std::string_view device_type, size_t i) {
  const TfOpDef* op = FindTfOp(node.op);
  if (op == nullptr) return false;
  const TfArgDef* arg = InputArg(*op, node, i);
  if (arg == nullptr) return false;
  // A resource handle is host memory on every device (MTypeFromDType).
  if (arg->type == "RESOURCE") return true;
  return InHost(TfKernelFor(graph, node, device_type), arg->name);
}

}  // namespace tfrun
