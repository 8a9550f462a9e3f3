#include "core/graph/control_flow_info.h"

#include <fmt/format.h>

#include <deque>
#include <unordered_map>

namespace tfrun {

namespace {

Status Refused(const Graph& graph, const Node& node, const std::string& message) {
  return graph.ErrorAt(ErrorKind::kRuntime, node, fmt::format("node '{}': InvalidArgumentError: {}", node.name, message));
}

}  // namespace

std::vector<int> NodesWithoutInputs(const Graph& graph, const std::vector<bool>& included) {
  std::vector<int> roots;
  for (const Node& node : graph.nodes) {
    if (included[node.id] && node.inputs.empty() && node.control_inputs.empty()) roots.push_back(node.id);
  }
  return roots;
}

Status BuildControlFlowInfo(const Graph& graph, const std::vector<bool>& included, const std::vector<int>& roots,
                            ControlFlowInfo* info) {
  const int n = static_cast<int>(graph.nodes.size());
  constexpr int kUnreached = ControlFlowInfo::kUnreached, kRoot = ControlFlowInfo::kRoot;
  std::vector<int> discovered_by(n, kUnreached);
  info->frame.assign(n, kUnreached);
  info->enclosing.assign(n, kRoot);
  info->frame_name.assign(n, std::string());
  std::deque<int> ready;
  const auto reach = [&](int curr, int out, int frame, int parent, const std::string& name) -> Status {
    const Node& dst = graph.nodes[out];
    const bool visited = discovered_by[out] != kUnreached;
    if (!visited) {
      discovered_by[out] = curr;
      ready.push_back(out);
    }
    const auto mismatch = [&](const std::string& other) {
      return Refused(graph, dst,
                     fmt::format("{{{{node {}}}}} has inputs from different frames. The input {{{{node {}}}}} is in "
                                 "frame '{}'. The input {{{{node {}}}}} is in frame '{}'.",
                                 dst.name, graph.nodes[curr].name, name, graph.nodes[discovered_by[out]].name, other));
    };
    if (dst.cls == NodeClass::kEnter) {
      if (visited) {
        const std::string around = info->NameOf(info->enclosing[out]);
        return around != name ? mismatch(around) : Status::Ok();
      }
      info->frame[out] = out;
      info->enclosing[out] = frame;
      info->frame_name[out] = graph.AttrText(dst, "frame_name");
      if (info->frame_name[out].empty()) {
        return Refused(graph, dst, fmt::format("The Enter {{{{node {}}}}} must have a frame name.", dst.name));
      }
      return Status::Ok();
    }
    if (visited) return info->frame_name[out] != name ? mismatch(info->frame_name[out]) : Status::Ok();
    info->frame[out] = frame;
    info->enclosing[out] = parent;
    info->frame_name[out] = name;
    return Status::Ok();
  };
  for (int id : roots) {
    if (discovered_by[id] == kUnreached) TFRUN_RETURN_IF_ERROR(reach(id, id, kRoot, kRoot, ""));
  }
  while (!ready.empty()) {
    const int id = ready.front();
    ready.pop_front();
    const Node& node = graph.nodes[id];
    int frame = info->frame[id], parent = info->enclosing[id];
    std::string name = info->frame_name[id];
    if (node.cls == NodeClass::kExit) {
      // The executor's check: an Exit leaves a loop.
      if (frame < 0) return Refused(graph, node, "Invalid Exit op: Cannot find a corresponding Enter op.");
      name = info->NameOf(parent);
      frame = parent;
      parent = parent < 0 ? kRoot : info->enclosing[parent];
    }
    for (size_t k = 0; k < node.consumers.size(); ++k) {
      const int c = node.consumers[k];
      if (!included[c] || (k > 0 && node.consumers[k - 1] == c)) continue;
      TFRUN_RETURN_IF_ERROR(reach(id, c, frame, parent, name));
    }
  }
  // ValidateControlFlowInfo: one LoopCond a loop (the gradient's loop
  // counters excepted).
  std::unordered_map<std::string, int> loop_cond;
  for (const Node& node : graph.nodes) {
    if (!included[node.id] || node.cls != NodeClass::kLoopCond || discovered_by[node.id] == kUnreached) continue;
    auto [it, first] = loop_cond.emplace(info->frame_name[node.id], node.id);
    if (!first && graph.nodes[it->second].name.find("LoopCounter") == std::string::npos &&
        node.name.find("LoopCounter") == std::string::npos) {
      return Refused(graph, node,
                     fmt::format("Invalid loop structure: Loop \"{}\" has more than one LoopCond node: {{{{node {}}}}} "
                                 "and {{{{node {}}}}}. This is an internal bug, please file a bug report with "
                                 "instructions on how to reproduce the error.",
                                 info->frame_name[node.id], node.name, graph.nodes[it->second].name));
    }
    it->second = node.id;
  }
  return Status::Ok();
}

}  // namespace tfrun
