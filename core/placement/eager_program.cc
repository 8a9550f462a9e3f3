#include "core/placement/eager_program.h"
#include "core/base/device_types.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/graph/kernel_lookup.h"

namespace tfrun {
namespace {

// An eager tensor handle as placement sees it: the device of the op that
// made it (TensorHandle::DeviceName), its dtype and size; a resource is a
// variable's handle.
struct Handle {
  int device = 0;
  DType dtype = DType::kFloat32;
  int64_t elements = 0;
  int variable = -1;  // the VariableV2 node of a resource handle
};

// Ops the small-integer pinning leaves alone: they generate data
// (placement_utils.cc IsPinnableOp).
bool Pinnable(std::string_view op) {
  return op != "RandomUniform" && op != "RandomUniformInt" && op != "RandomStandardNormal";
}

class EagerPlanner {
 public:
  EagerPlanner(const Graph& graph, const DeviceSet& devices, bool soft, Placement* placement, EagerPlan* plan)
      : graph_(graph), devices_(devices), soft_(soft), placement_(*placement), plan_(*plan),
        sorted_(devices.InPlacementOrder()) {
    for (int i = 0; i < devices.size(); ++i) {
      if (devices[i].type == kCpu && devices[i].id == 0) cpu0_ = i;
    }
  }

  Status Run() {
    const size_t n = graph_.nodes.size();
    placement_ = Placement();
    placement_.device_of.assign(n, cpu0_);
    plan_.executed.clear();
    plan_.value.assign(n, EagerValue::kTensor);
    plan_.variable_of.assign(n, -1);
    handles_.assign(n, Handle{cpu0_});
    for (const Node& node : graph_.nodes) {
      TFRUN_RETURN_IF_ERROR(Visit(node));
      placement_.log_order.push_back(node.id);  // --json lists every node, in program order
    }
    return Status::Ok();
  }

 private:
  // The device scope eager TF is in for `node`: none, or the node's
  // annotation merged over the context's first device, CPU:0
  // (_EagerDeviceContext.__enter__), so `/gpu:1` reads
  // /job:localhost/replica:0/task:0/device:GPU:1 and `/job:localhost` CPU:0.
  static std::optional<DeviceSpec> ScopeOf(const Node& node) {
    if (node.requested_device.empty()) return std::nullopt;
    return node.requested_device.MergedOver(DeviceSpec::Local(std::string(kCpu), 0));
  }
  static std::optional<DeviceSpec> Cpu0Scope() { return DeviceSpec::Local(std::string(kCpu), 0); }

  Status Visit(const Node& node) {
    const int id = node.id;
    if (node.graph_mode_only) {
      plan_.value[id] = EagerValue::kNone;
      return Status::Ok();
    }
    if (node.op == "Placeholder") {
      return graph_.ErrorAt(
          ErrorKind::kBadInput, node,
          fmt::format("node '{}': RuntimeError: tf.placeholder() is not compatible with eager execution.", node.name));
    }
    if (node.op == "Const") return VisitConst(node);
    if (node.op == "VariableV2") {
      TFRUN_ASSIGN_OR_RETURN(const int d, Execute("VarHandleOp", node.dtype, true, {}, ScopeOf(node), node, true));
      SetResult(id, Handle{d, node.dtype, NumElements(node.shape).value_or(0), id});
      plan_.value[id] = EagerValue::kVariable;
      plan_.variable_of[id] = id;
      return Status::Ok();
    }
    if (node.op == "Assign") {  // tf.Variable assigns its initial value
      const Handle& var = handles_[node.inputs[0]];
      TFRUN_RETURN_IF_ERROR(
          Execute("AssignVariableOp", node.dtype, false, {var, handles_[node.inputs[1]]}, ScopeOf(node), node, true)
              .status());
      SetResult(id, var);
      plan_.value[id] = EagerValue::kVariable;
      plan_.variable_of[id] = var.variable;
      return Status::Ok();
    }
    if (!node.variable.empty()) {  // `v/read`: in eager, the variable itself
      Alias(id, node.inputs[0]);
      return Status::Ok();
    }
    if (node.op == "NoOp") {  // tf.no_op(): control inputs are no eager inputs
      TFRUN_RETURN_IF_ERROR(Execute("NoOp", node.dtype, false, {}, ScopeOf(node), node, true).status());
      plan_.value[id] = EagerValue::kNone;
      return Status::Ok();
    }
    std::string op = node.op;
    if (node.op == "AddN" && node.inputs.size() == 1) {
      // math_ops.add_n converts its one input (reading a variable) and
      // returns it, or identity(input, name) when named.
      const Handle& in = handles_[node.inputs[0]];
      if (!node.explicit_name && in.variable < 0) {
        Alias(id, node.inputs[0]);
        return Status::Ok();
      }
      if (!node.explicit_name) {
        TFRUN_ASSIGN_OR_RETURN(const Handle value, Read(in, node));
        SetResult(id, value);
        return Status::Ok();
      }
      op = "Identity";
    }
    if (node.op == "Cast" && graph_.nodes[node.inputs[0]].dtype == node.dtype) {
      Alias(id, node.inputs[0]);  // math_ops.cast returns x of the same dtype
      return Status::Ok();
    }
    // Converting the inputs reads each variable among them, in order.
    std::vector<Handle> inputs;
    for (int in : node.inputs) {
      Handle h = handles_[in];
      if (h.variable >= 0) {
        TFRUN_ASSIGN_OR_RETURN(h, Read(h, node));
      }
      inputs.push_back(h);
    }
    TFRUN_ASSIGN_OR_RETURN(const int d, Execute(op, node.dtype, node.has_output(), inputs, ScopeOf(node), node, true));
    SetResult(id, Handle{d, node.dtype, NumElements(node.shape).value_or(0)});
    return Status::Ok();
  }

  // A variable converted to a tensor for `node`: ReadVariableOp, pinned to
  // the variable's device.
  StatusOr<Handle> Read(const Handle& variable, const Node& node) {
    TFRUN_ASSIGN_OR_RETURN(const int d, Execute("ReadVariableOp", variable.dtype, true, {variable}, ScopeOf(node),
                                                node, true));
    return Handle{d, variable.dtype, variable.elements};
  }

  // tf.constant(literal, dtype, shape) (constant_op.py _constant_eager_impl).
  Status VisitConst(const Node& node) {
    const std::optional<DeviceSpec> scope = ScopeOf(node);
    const int64_t elements = NumElements(node.shape).value_or(0);
    const ConstLiteral& literal = node.literal;
    using Form = ConstLiteral::Form;
    Handle t;
    if (literal.form == Form::kArray) {  // a NumPy array (npy, random): converted as it is
      TFRUN_ASSIGN_OR_RETURN(t, Convert(node, node.dtype, elements, scope, false));
      SetResult(node.id, t);
      return Status::Ok();
    }
    const Shape written = literal.form == Form::kNested ? node.shape
                          : literal.form == Form::kFlat ? Shape{elements}
                                                        : Shape{};
    const int64_t written_elements = NumElements(written).value_or(0);
    const bool cached = literal.form == Form::kScalar && literal.python != ConstLiteral::Python::kNone;
    const std::string key =
        cached ? fmt::format("{}:{}|{}|{}", static_cast<int>(literal.python),
                             literal.python == ConstLiteral::Python::kFloat ? fmt::format("{}", literal.float_value)
                                                                            : std::to_string(literal.int_value),
                             Name(node.dtype), scope ? scope->ToString() : "")
               : "";
    if (auto hit = scalar_cache_.find(key); cached && hit != scalar_cache_.end()) {
      t = hit->second;
    } else {
      TFRUN_ASSIGN_OR_RETURN(t, Convert(node, node.dtype, written_elements, scope, true));
      if (cached) scalar_cache_[key] = t;
    }
    if (written != node.shape) {
      // shape.as_list() becomes an int32 tensor, then Reshape or Fill.
      const int64_t rank = static_cast<int64_t>(node.shape.size());
      if (written_elements == elements) {
        TFRUN_ASSIGN_OR_RETURN(const Handle dims, Convert(node, DType::kInt32, rank, scope, false));
        TFRUN_ASSIGN_OR_RETURN(t.device, Execute("Reshape", node.dtype, true, {t, dims}, scope, node, true));
      } else if (node.dtype == DType::kBool) {
        // No bool Fill on GPUs: filled on CPU:0, then an Identity.
        TFRUN_ASSIGN_OR_RETURN(t.device, Execute("Identity", node.dtype, true, {t}, Cpu0Scope(), node, true));
        TFRUN_ASSIGN_OR_RETURN(const Handle dims, Convert(node, DType::kInt32, rank, Cpu0Scope(), false));
        TFRUN_ASSIGN_OR_RETURN(t.device, Execute("Fill", node.dtype, true, {dims, t}, Cpu0Scope(), node, true));
        TFRUN_ASSIGN_OR_RETURN(t.device, Execute("Identity", node.dtype, true, {t}, scope, node, true));
      } else {
        TFRUN_ASSIGN_OR_RETURN(const Handle dims, Convert(node, DType::kInt32, rank, scope, false));
        TFRUN_ASSIGN_OR_RETURN(t.device, Execute("Fill", node.dtype, true, {dims, t}, scope, node, true));
      }
      t.elements = elements;
    }
    SetResult(node.id, t);
    return Status::Ok();
  }

  // ConvertToEagerTensorUncached: a host tensor (bfloat16 from Python
  // goes through a Cast on CPU:0), then _EagerConst onto the scope's
  // device unless the scope names CPU:0 itself.
  StatusOr<Handle> Convert(const Node& node, DType dtype, int64_t elements, const std::optional<DeviceSpec>& scope,
                           bool python_value) {
    Handle t{cpu0_, dtype, elements};
    if (python_value && dtype == DType::kBFloat16) {
      TFRUN_ASSIGN_OR_RETURN(t.device, Execute("Cast", dtype, true, {Handle{cpu0_, DType::kFloat32, elements}},
                                               Cpu0Scope(), node, false));
    }
    if (scope && scope->type == kCpu && scope->id == 0) return t;
    TFRUN_ASSIGN_OR_RETURN(t.device, Execute("_EagerConst", dtype, true, {t}, scope, node, false));
    return t;
  }

  void SetResult(int id, const Handle& h) {
    handles_[id] = h;
    placement_.device_of[id] = h.device;
  }

  void Alias(int id, int of) {
    SetResult(id, handles_[of]);
    plan_.value[id] = plan_.value[of];
    plan_.variable_of[id] = plan_.variable_of[of];
  }

  // EagerOperation::Execute's placement, then the op runs and is logged.
  // `python_op`: run through Python's execute(), whose errors end in
  // "[Op:NAME]" (the C++-side _EagerConst and Cast add nothing).
  StatusOr<int> Execute(const std::string& op, DType dtype, bool has_output, const std::vector<Handle>& inputs,
                        const std::optional<DeviceSpec>& scope, const Node& node, bool python_op) {
    TFRUN_ASSIGN_OR_RETURN(const int d, Select(op, dtype, has_output, inputs, scope, node, python_op));
    plan_.executed.push_back(EagerOp{op, d, node.id});
    return d;
  }

  StatusOr<int> Select(const std::string& op, DType dtype, bool has_output, const std::vector<Handle>& inputs,
                       const std::optional<DeviceSpec>& scope, const Node& node, bool python_op) {
    // A resource input pins the op to the resource's device, whatever the scope.
    for (const Handle& in : inputs) {
      if (in.variable >= 0) return in.device;
    }
    // Small integer inputs all on CPU:0 pin the op there, whatever the scope.
    if (Pinnable(op) && !inputs.empty() &&
        std::all_of(inputs.begin(), inputs.end(), [&](const Handle& in) {
          return in.device == cpu0_ && (in.dtype == DType::kInt32 || in.dtype == DType::kInt64) && in.elements <= 64;
        })) {
      return cpu0_;
    }
    // SelectDevice: without a scope, any local device.
    DeviceSpec preferred;
    if (scope) {
      preferred = *scope;
    } else {
      preferred.job = "localhost";
      preferred.replica = 0;
      preferred.task = 0;
    }
    if (const int d = FirstCandidate(op, dtype, has_output, preferred); d >= 0) return d;
    if (soft_) {
      if (const int d = FirstCandidate(op, dtype, has_output, preferred.SoftPlacementRelaxed()); d >= 0) {
        placement_.soft_moves.push_back(SoftMoveNote(node.name, op, dtype, preferred, devices_[d], devices_));
        return d;
      }
    }
    std::vector<std::string> types, all;
    // SupportedDeviceTypesForNode over the types the context has devices of.
    for (std::string_view t : {kGpu, kCpu}) {
      const bool present = std::any_of(devices_.devices().begin(), devices_.devices().end(),
                                       [&](const Device& dev) { return dev.type == t; });
      if (present && TfHasKernelFor(op, dtype, t)) types.emplace_back(t);
    }
    for (int d : sorted_) all.push_back(devices_[d].name);
    return graph_.ErrorAt(ErrorKind::kPlacement, node,
                          fmt::format("InvalidArgumentError: Could not satisfy device specification '{}'. "
                                      "enable_soft_placement={}. Supported device types [{}]. All available "
                                      "devices [{}].{}",
                                      preferred.ToString(), soft_ ? 1 : 0, fmt::join(types, ", "),
                                      fmt::join(all, ", "), python_op ? fmt::format(" [Op:{}]", op) : ""),
                          false);  // eager's text names no node
  }

  int FirstCandidate(const std::string& op, DType dtype, bool has_output, const DeviceSpec& spec) const {
    const std::vector<int> candidates = CandidateDevices(
        devices_, sorted_, spec, [&](std::string_view type) { return TfHasKernelFor(op, dtype, type); });
    return candidates.empty() ? -1 : candidates[0];
  }

  const Graph& graph_;
  const DeviceSet& devices_;
  bool soft_;
  Placement& placement_;
  EagerPlan& plan_;
  std::vector<int> sorted_;  // SelectDevice's order
  int cpu0_ = 0;
  std::vector<Handle> handles_;
  std::map<std::string, Handle> scalar_cache_;  // TFE_TensorHandleCache
};

}  // namespace

Status PlanEager(const Graph& graph, const DeviceSet& devices, bool allow_soft_placement, Placement* placement,
                 EagerPlan* plan) {
  return EagerPlanner(graph, devices, allow_soft_placement, placement, plan).Run();
}

std::vector<EagerOp> EagerPrintOps(const Placement& placement, const EagerPlan& plan, int id) {
  if (plan.value[id] != EagerValue::kVariable) return {};
  // ResourceVariable.__repr__: read_value() under `with ops.device(self.device)`;
  // the read is pinned to the variable, and the Identity's scope is its device.
  const int d = placement.device_of[plan.variable_of[id]];
  return {EagerOp{"ReadVariableOp", d, id}, EagerOp{"Identity", d, id}};
}

int EagerValueNode(const Graph& graph, const EagerPlan& plan, int id) {
  if (plan.value[id] != EagerValue::kVariable) return id;
  for (int c : graph.nodes[plan.variable_of[id]].consumers) {
    const Node& n = graph.nodes[c];
    if (n.op == "Identity" && !n.variable.empty()) return c;
  }
  return id;
}

}  // namespace tfrun
