// TensorFlow's AccumulateNV2RemovePass (accumulate_n_optimizer.cc, 2.21):
// each AccumulateNV2 becomes an accumulator, a TemporaryVariable that an
// Assign of zeros (a Fill of its first input's Shape) starts and one
// AssignAdd per input adds to, handed on by a DestroyTemporaryVariable
// that takes the AccumulateNV2's name; inside a while loop that may run
// iterations in parallel it becomes an AddN instead. The new nodes are
// "<name>/Internal/_N" (Graph::NewName, one counter for the graph), on the
// AccumulateNV2's requested device. Its `_class` is read as a string,
// which a list never is, so the new nodes join no colocation group.
#include <fmt/format.h>

#include <cstring>

#include "core/graph/control_flow_info.h"
#include "core/graph/node_builder.h"
#include "core/passes/pass_registry.h"

namespace tfrun {

namespace {

Status RewriteIntoTempVariable(Graph* graph, int id) {
  const Node n = graph->nodes[id];  // a copy: adding nodes moves the vector
  const DType dtype = n.dtype;
  std::vector<NodeOutput> data;
  for (size_t i = 0; i < n.inputs.size(); ++i) data.push_back(n.input(i));
  const auto spec = [&](std::string op) {
    return ReplacementSpec(n, std::move(op), graph->NewName(n.name + "/Internal"));
  };
  const std::string accumulator = n.name + "/Internal/Accumulator";
  NodeSpec variable = spec("TemporaryVariable");
  variable.attrs["shape"] = ShapeAttr(Shape{0});
  variable.attrs["dtype"] = TypeAttr(dtype);
  variable.attrs["var_name"] = StringAttr(accumulator);
  TFRUN_ASSIGN_OR_RETURN(const int create, AddNode(graph, std::move(variable)));
  NodeSpec shape = spec("Shape");
  shape.inputs = {data[0]};
  TFRUN_ASSIGN_OR_RETURN(const int shape_node, AddNode(graph, std::move(shape)));
  NodeSpec zero = spec("Const");
  zero.attrs["dtype"] = TypeAttr(dtype);
  zero.attrs["value"] = AttrValue{"tensor", {fmt::format("<Tensor<type: {} shape: []>>", Info(dtype).tf_name)}};
  TFRUN_ASSIGN_OR_RETURN(zero.value, Tensor::AllocateHost(dtype, Shape{}));
  std::memset(zero.value.raw(), 0, zero.value.num_bytes());
  TFRUN_ASSIGN_OR_RETURN(const int zero_node, AddNode(graph, std::move(zero)));
  NodeSpec fill = spec("Fill");
  fill.inputs = {{shape_node, 0}, {zero_node, 0}};
  TFRUN_ASSIGN_OR_RETURN(const int fill_node, AddNode(graph, std::move(fill)));
  NodeSpec assign = spec("Assign");
  assign.attrs["T"] = TypeAttr(dtype);
  assign.attrs["validate_shape"] = BoolAttr(false);
  assign.inputs = {{create, 0}, {fill_node, 0}};
  TFRUN_ASSIGN_OR_RETURN(const int initialize, AddNode(graph, std::move(assign)));
  graph->nodes[initialize].variable = accumulator;
  std::vector<int> adds;
  for (const NodeOutput& in : data) {
    NodeSpec add = spec("AssignAdd");
    add.attrs["T"] = TypeAttr(dtype);
    add.attrs["use_locking"] = BoolAttr(true);
    add.inputs = {{initialize, 0}, in};
    TFRUN_ASSIGN_OR_RETURN(const int add_node, AddNode(graph, std::move(add)));
    adds.push_back(add_node);
  }
  NodeSpec destroy = ReplacementSpec(n, "DestroyTemporaryVariable", n.name);  // the AccumulateNV2's own name
  destroy.attrs["T"] = TypeAttr(dtype);
  destroy.attrs["var_name"] = StringAttr(accumulator);
  destroy.inputs = {{initialize, 0}};
  TFRUN_ASSIGN_OR_RETURN(const int clean_up, AddNode(graph, std::move(destroy)));
  for (int c : n.control_inputs) graph->AddControlEdge(c, initialize);
  for (int add : adds) graph->AddControlEdge(add, clean_up);
  graph->ReplaceUses(id, clean_up);
  graph->Remove(id);
  return Status::Ok();
}

Status RewriteIntoAddN(Graph* graph, int id) {
  const Node n = graph->nodes[id];
  NodeSpec add = ReplacementSpec(n, "AddN", n.name);
  add.attrs["N"] = IntAttr(static_cast<int64_t>(n.inputs.size()));
  add.attrs["T"] = TypeAttr(n.dtype);
  for (size_t i = 0; i < n.inputs.size(); ++i) add.inputs.push_back(n.input(i));
  add.control_inputs = n.control_inputs;
  TFRUN_ASSIGN_OR_RETURN(const int add_n, AddNode(graph, std::move(add)));
  graph->ReplaceUses(id, add_n);
  graph->Remove(id);
  return Status::Ok();
}

}  // namespace

Status AccumulateNV2RemovePass(PassContext& context) {
  Graph& graph = *context.graph;
  std::vector<int> matches;
  for (const Node& node : graph.nodes) {
    if (!node.removed && node.op == "AccumulateNV2") matches.push_back(node.id);
  }
  if (matches.empty()) return Status::Ok();
  std::vector<bool> all(graph.nodes.size(), true);
  for (const Node& node : graph.nodes) all[node.id] = !node.removed;
  ControlFlowInfo info;
  TFRUN_RETURN_IF_ERROR(BuildControlFlowInfo(graph, all, NodesWithoutInputs(graph, all), &info));
  for (int id : matches) {
    // Temporary variables do not work in a loop's parallel iterations;
    // with parallel_iterations = 1 they do.
    const int frame = info.frame[id];
    bool in_loop = frame >= 0;
    if (in_loop) {
      if (graph.AttrText(graph.nodes[frame], "parallel_iterations") == "1") in_loop = false;
    }
    TFRUN_RETURN_IF_ERROR(in_loop ? RewriteIntoAddN(&graph, id) : RewriteIntoTempVariable(&graph, id));
  }
  return Status::Ok();
}

}  // namespace tfrun
