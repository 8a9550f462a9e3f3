#include "core/graph/function_library.h"

namespace tfrun {

std::string CalledFunction(const Graph& graph, const Node& node) {
  if (graph.functions == nullptr) return "";
  if (node.op == "PartitionedCall" || node.op == "StatefulPartitionedCall") {
    const AttrValue* f = graph.AttrOf(node, "f");
    return f == nullptr || f->items.empty() ? std::string() : f->items[0];
  }
  return graph.functions->Contains(node.op) ? node.op : std::string();
}

}  // namespace tfrun
