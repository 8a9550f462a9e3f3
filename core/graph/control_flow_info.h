// Which while-loop frame each node is in: TensorFlow's BuildControlFlowInfo
// (core/graph/control_flow.cc), which its partitioner, its executor and the
// AccumulateNV2 rewrite run. Breadth first from the nodes a run starts
// with: an Enter opens the frame its `frame_name` names, inside the frame
// of its input; an Exit's consumers are in the frame around its loop;
// every other node is in its inputs' frame. Inputs from two frames, an
// Enter without a frame name, an Exit outside any loop and a loop with two
// LoopConds are refused in TensorFlow's words (InvalidArgumentError, run
// time: exit 4).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"

namespace tfrun {

struct ControlFlowInfo {
  static constexpr int kUnreached = -2;
  static constexpr int kRoot = -1;
  // Per node id. `frame`: the Enter that opened the node's frame (an
  // Enter's own frame is the one it opens), kRoot outside every loop,
  // kUnreached for a node the walk did not reach (not included).
  std::vector<int> frame;
  std::vector<int> enclosing;            // the Enter of the frame around `frame`; kRoot
  std::vector<std::string> frame_name;   // "" for the root
  // The Enter of the frame the node *runs* in, as the executor counts it:
  // an Enter runs in the frame around the one it opens.
  int RunsIn(const Graph& graph, int id) const {
    return graph.nodes[id].cls == NodeClass::kEnter ? enclosing[id] : frame[id];
  }
  // The name of the frame an Enter `frame` (or kRoot) opened.
  std::string NameOf(int frame_enter) const { return frame_enter < 0 ? std::string() : frame_name[frame_enter]; }
};

// `included`: the nodes that take part (a run's pruned graph); `roots`:
// where the walk starts, in order (the included nodes with no input, and
// those a feed reaches). Edges from a node to its consumers are followed
// when both are included.
Status BuildControlFlowInfo(const Graph& graph, const std::vector<bool>& included, const std::vector<int>& roots,
                            ControlFlowInfo* info);

// The included nodes with no input: the walk's usual roots.
std::vector<int> NodesWithoutInputs(const Graph& graph, const std::vector<bool>& included);

}  // namespace tfrun
