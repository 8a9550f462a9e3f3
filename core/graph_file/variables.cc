#include "core/graph_file/variables.h"

namespace tfrun {

Status VariableExpander::Expand(const YamlNode& entry, const Scope& scope, const std::string& base) {
  const std::string var = namer_->Unique(scope.name_prefix + base);
  auto make = [&](const std::string& name, const std::string& op) {
    Node n;
    n.name = name;
    n.op = op;
    n.location = entry.location();
    n.requested_device = scope.device;
    n.requested_device_text = scope.device_text;
    return n;
  };
  Node init_value = make(namer_->Unique(var + "/initial_value"), "Const");
  TFRUN_RETURN_IF_ERROR(literals_->Read(entry, var, &init_value));
  TFRUN_ASSIGN_OR_RETURN(const int init_id, builder_->Add(std::move(init_value), *FindOp("Const"), entry));

  Node variable = make(var, "VariableV2");
  const Node& initial = builder_->graph().nodes[init_id];
  variable.dtype = initial.dtype;
  variable.shape = initial.shape;
  variable.variable = var;
  TFRUN_ASSIGN_OR_RETURN(const int var_id, builder_->Add(std::move(variable), *FindOp("VariableV2"), entry));

  Node assign = make(namer_->Unique(var + "/Assign"), "Assign");
  assign.inputs = {var_id, init_id};
  assign.variable = var;
  TFRUN_ASSIGN_OR_RETURN(const int assign_id, builder_->Add(std::move(assign), *FindOp("Assign"), entry));
  assign_ids_.push_back(assign_id);

  Node read = make(namer_->Unique(var + "/read"), "Identity");
  read.inputs = {var_id};
  read.variable = var;
  TFRUN_ASSIGN_OR_RETURN(const int read_id, builder_->Add(std::move(read), *FindOp("Identity"), entry));
  builder_->ReadVariableThrough(var_id, read_id);
  return Status::Ok();
}

// control_flow_ops.group() creates `init` under the initialisers' device
// when they all request the same one.
void VariableExpander::AddInitializer() {
  if (assign_ids_.empty()) return;
  const std::vector<Node>& nodes = builder_->graph().nodes;
  Node init;
  const Node& first = nodes[assign_ids_[0]];
  bool same = true;
  for (int id : assign_ids_) same = same && nodes[id].requested_device == first.requested_device;
  if (same) {
    init.requested_device = first.requested_device;
    init.requested_device_text = first.requested_device_text;
  }
  init.name = namer_->Unique("init");
  init.op = "NoOp";
  init.has_output = false;
  init.control_inputs = assign_ids_;
  builder_->graph().Add(std::move(init));
}

}  // namespace tfrun
