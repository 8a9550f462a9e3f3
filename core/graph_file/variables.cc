#include "core/graph_file/variables.h"

#include <map>

#include "core/graph/node_builder.h"

namespace tfrun {

StatusOr<int> VariableExpander::Expand(const YamlNode& entry, const Scope& scope, const std::string& base) {
  const std::string var = namer_->Unique(scope.name_prefix + base);
  auto make = [&](const std::string& name, const std::string& op) {
    Node n;
    n.name = name;
    n.op = op;
    n.location = entry.location();
    n.requested_device = scope.device;
    n.requested_device_text = scope.device_text;
    ApplyColocation(builder_->graph(), scope, &n);
    return n;
  };
  Node init_value = make(namer_->Unique(var + "/initial_value"), "Const");
  TFRUN_RETURN_IF_ERROR(literals_->Read(entry, var, &init_value));
  if (init_value.dtype == DType::kString) {
    return builder_->fields().NodeError(entry["dtype"], var, "string Variables are not supported (use a Const)");
  }
  TFRUN_ASSIGN_OR_RETURN(const int init_id, builder_->Add(std::move(init_value), *FindOp("Const"), entry));

  Node variable = make(var, "VariableV2");
  const Node& initial = builder_->graph().nodes[init_id];
  variable.dtype = initial.dtype;
  variable.shape = initial.shape;
  variable.variable = var;
  variable.eager_name = scope.eager_prefix + base;
  TFRUN_ASSIGN_OR_RETURN(const int var_id, builder_->Add(std::move(variable), *FindOp("VariableV2"), entry));

  // tf.Variable builds its Assign and read under colocate_with(variable).
  const std::vector<std::string> with_variable =
      ColocationGroupsOf(builder_->graph().nodes[var_id]);
  Node assign = make(namer_->Unique(var + "/Assign"), "Assign");
  assign.inputs = {var_id, init_id};
  assign.variable = var;
  assign.colocation = with_variable;
  TFRUN_ASSIGN_OR_RETURN(const int assign_id, builder_->Add(std::move(assign), *FindOp("Assign"), entry));
  assign_ids_.push_back(assign_id);

  Node read = make(namer_->Unique(var + "/read"), "Identity");
  read.inputs = {var_id};
  read.variable = var;
  read.colocation = with_variable;
  TFRUN_ASSIGN_OR_RETURN(const int read_id, builder_->Add(std::move(read), *FindOp("Identity"), entry));
  builder_->ReadVariableThrough(var_id, read_id);
  return var_id;
}

// tf.global_variables_initializer() is control_flow_ops.group() of the
// initialisers (control_flow_ops.py): inside name scope `init`, one NoOp
// per requested device (`init/NoOp`, `init/NoOp_1`, ... in the devices'
// sorted string order, each under its device) and `init` depending on
// them; when all request one device, `init` alone, under that device.
Status VariableExpander::AddInitializer() {
  if (assign_ids_.empty()) return Status::Ok();
  std::vector<Node>& nodes = builder_->graph().nodes;
  std::map<std::string, std::vector<int>> by_device;  // Python's sorted(): by code point
  for (int id : assign_ids_) by_device[nodes[id].requested_device.ToString()].push_back(id);
  auto no_op = [&](const std::string& name, const std::vector<int>& deps, const Node* device_of) {
    Node n;
    n.name = name;
    n.op = "NoOp";
    n.num_outputs = 0;
    n.graph_mode_only = true;
    n.control_inputs = deps;
    if (device_of != nullptr) {
      n.requested_device = device_of->requested_device;
      n.requested_device_text = device_of->requested_device_text;
    }
    return AddInferredNode(&builder_->graph(), std::move(n));
  };
  const std::string scope = namer_->Unique("init");
  if (by_device.size() == 1) return no_op(scope, assign_ids_, &nodes[assign_ids_[0]]).status();
  std::vector<int> groups;
  for (const auto& [device, ids] : by_device) {
    const Node* first = &builder_->graph().nodes[ids[0]];
    TFRUN_ASSIGN_OR_RETURN(const int group, no_op(namer_->Unique(scope + "/NoOp"), ids, first));
    groups.push_back(group);
  }
  return no_op(scope, groups, nullptr).status();
}

}  // namespace tfrun
