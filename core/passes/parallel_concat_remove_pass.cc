// TensorFlow's ParallelConcatRemovePass (parallel_concat_optimizer.cc):
// each ParallelConcat becomes a _ParallelConcatStart buffer of its shape,
// one _ParallelConcatUpdate per input writing it at row `loc` (the input's
// index), and an Identity with the ParallelConcat's name that reads the
// buffer after every update (control edges). New nodes are
// "<name>/Internal/_N" on the ParallelConcat's requested device.
#include "core/graph/node_builder.h"
#include "core/passes/pass_registry.h"

namespace tfrun {

Status ParallelConcatRemovePass(PassContext& context) {
  Graph& graph = *context.graph;
  std::vector<int> matches;
  for (const Node& node : graph.nodes) {
    if (!node.removed && node.op == "ParallelConcat") matches.push_back(node.id);
  }
  for (int id : matches) {
    const Node n = graph.nodes[id];  // a copy: adding nodes moves the vector
    const auto spec = [&](std::string op) {
      return ReplacementSpec(n, std::move(op), graph.NewName(n.name + "/Internal"));
    };
    NodeSpec start = spec("_ParallelConcatStart");
    start.attrs["dtype"] = TypeAttr(n.dtype);
    if (const AttrValue* shape = graph.AttrOf(n, "shape")) start.attrs["shape"] = *shape;
    start.control_inputs = n.control_inputs;
    TFRUN_ASSIGN_OR_RETURN(const int start_node, AddNode(&graph, std::move(start)));
    std::vector<int> updates;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      NodeSpec update = spec("_ParallelConcatUpdate");
      update.attrs["loc"] = IntAttr(static_cast<int64_t>(i));
      update.inputs = {{start_node, 0}, n.input(i)};
      TFRUN_ASSIGN_OR_RETURN(const int update_node, AddNode(&graph, std::move(update)));
      updates.push_back(update_node);
    }
    NodeSpec identity = ReplacementSpec(n, "Identity", n.name);
    identity.inputs = {{start_node, 0}};
    identity.control_inputs = updates;
    TFRUN_ASSIGN_OR_RETURN(const int identity_node, AddNode(&graph, std::move(identity)));
    graph.ReplaceUses(id, identity_node);
    graph.Remove(id);
  }
  return Status::Ok();
}

}  // namespace tfrun
