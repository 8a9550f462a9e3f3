// The frame-aware propagator: TensorFlow's PropagatorState
// (propagator_state.cc) and ImmutableExecutorState::BuildControlFlowInfo,
// on one host thread. Values are tagged with a frame (a while loop's
// instance, created by its Enters, keyed by name and parent iteration) and
// an iteration; a node is ready when every input of its iteration has
// arrived, live or dead; a dead node runs no kernel and makes every output
// dead; a Merge runs on its first live input, or goes dead when all its
// data inputs are; dead values stop at NextIteration, and a loop's dead
// Exits reach the parent frame only when the loop's frame ends.
#include <fmt/format.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>

#include "core/graph/control_flow_info.h"
#include "core/runtime/executor.h"

namespace tfrun {

namespace {

// A value an edge carries: `live` is false for a dead one.
struct Entry {
  Tensor value;
  bool live = false;
};

// The nodes of one frame name, and where each keeps its counts and its
// inputs in an iteration of that frame.
struct FrameInfo {
  std::string name;
  int index = 0;           // in the run's list of frame names
  std::vector<int> nodes;  // node ids
  int input_count = 0;     // its Enters: inputs a frame instance waits for
  int total_inputs = 0;    // data input slots of all its nodes
};

struct IterationState {
  std::vector<Entry> inputs;  // by FrameLayout::input_base + input index
  std::vector<int> pending;   // by FrameLayout::local
  std::vector<int> dead_count;
  int outstanding_ops = 0;
  int outstanding_frame_count = 0;
};

struct Frame {
  const FrameInfo* info = nullptr;
  Frame* parent = nullptr;
  int64_t parent_iter = 0;
  int num_pending_inputs = 0;
  int64_t max_parallel_iterations = 1;
  int64_t iteration_count = 0;
  int64_t num_outstanding_iterations = 1;
  std::map<int64_t, std::unique_ptr<IterationState>> iterations;
  std::vector<std::pair<int, Entry>> next_iter_roots;  // NextIterations held back by parallel_iterations
  std::vector<std::pair<int, Entry>> inv_values;       // constant Enters: loop invariants
  std::vector<int> dead_exits;
  // Child frames, by (parent iteration, frame name).
  std::map<std::pair<int64_t, std::string>, std::unique_ptr<Frame>> children;
};

struct TaggedNode {
  int id = 0;
  Frame* frame = nullptr;
  int64_t iter = 0;
  IterationState* state = nullptr;  // frame->iterations[iter], which lives until the node has run
  bool dead = false;
};

}  // namespace

Status Executor::RunFrames(const std::vector<NodeOutput>& fetch, const std::vector<bool>& needed,
                           const std::vector<bool>& unread, const std::vector<Feed>& feeds, RunResult* result,
                           bool keep) {
  const int n = static_cast<int>(graph_.nodes.size());
  // An unread node goes through the frames as the NoOp Grappler makes of
  // it: live or dead as its inputs say, its outputs live and empty. Not
  // across tasks, whose outcomes carry the values other tasks read.
  const bool skips_unread = channel_ == nullptr && !unread.empty();
  // Fed outputs reach their consumers when the run starts, in the root
  // frame; their producers do not run.
  std::map<std::pair<int, int>, Tensor> fed;
  for (const Feed& f : feeds) fed[{f.output.node, f.output.index}] = f.value;
  const auto is_fed = [&](NodeOutput o) { return !fed.empty() && fed.count({o.node, o.index}) > 0; };

  // The partitioner's BuildControlFlowInfo on the pruned graph, from the
  // nodes without inputs and those fed values reach (TensorFlow's _Recv
  // nodes, in the root frame).
  std::vector<int> roots;
  for (int id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    const Node& node = graph_.nodes[id];
    bool has_inputs = !node.control_inputs.empty();
    for (size_t i = 0; i < node.inputs.size() && !has_inputs; ++i) has_inputs = !is_fed(node.input(i));
    if (!has_inputs) roots.push_back(id);
  }
  for (const auto& [output, value] : fed) {
    for (int c : graph_.nodes[output.first].consumers) {
      if (needed[c]) roots.push_back(c);
    }
  }
  ControlFlowInfo cf;
  TFRUN_RETURN_IF_ERROR(BuildControlFlowInfo(graph_, needed, roots, &cf));
  // The executor's frames: an Enter runs in the frame around the one it
  // opens; every other node in its own.
  std::vector<int> frame_of(n, -1);      // index into `infos`
  std::vector<int> parent_enter(n, -1);  // the Enter of the frame the node runs in
  std::vector<std::unique_ptr<FrameInfo>> infos;
  std::unordered_map<std::string, int> info_index;
  const auto info_for = [&](const std::string& name) {
    auto [it, added] = info_index.emplace(name, static_cast<int>(infos.size()));
    if (added) {
      infos.push_back(std::make_unique<FrameInfo>());
      infos.back()->name = name;
      infos.back()->index = static_cast<int>(infos.size()) - 1;
    }
    return it->second;
  };
  info_for("");
  for (int id = 0; id < n; ++id) {
    if (!needed[id] || cf.frame[id] == ControlFlowInfo::kUnreached) continue;
    parent_enter[id] = cf.RunsIn(graph_, id);
    frame_of[id] = info_for(cf.NameOf(parent_enter[id]));
  }
  // Where each node keeps its counts and inputs in its frame's iterations.
  std::vector<int> local(n, -1), input_base(n, 0);
  for (int id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    const Node& node = graph_.nodes[id];
    if (frame_of[id] < 0) {
      return graph_.ErrorAt(
          ErrorKind::kRuntime, node,
          fmt::format("node '{}' is never reached: it waits on a cycle that is not a while loop's", node.name));
    }
    FrameInfo& info = *infos[frame_of[id]];
    local[id] = static_cast<int>(info.nodes.size());
    info.nodes.push_back(id);
    input_base[id] = info.total_inputs;
    info.total_inputs += static_cast<int>(node.inputs.size());
    if (node.cls == NodeClass::kEnter) ++infos[info_for(graph_.AttrText(node, "frame_name"))]->input_count;
  }
  // A node's inputs in counts: TensorFlow's InitializePending. A Merge
  // waits for its control inputs (2 each) and one live data input (bit 0).
  const auto initial_pending = [&](const Node& node) {
    if (node.cls == NodeClass::kMerge) return 1 + 2 * static_cast<int>(node.control_inputs.size());
    int count = static_cast<int>(node.control_inputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) count += is_fed(node.input(i)) ? 0 : 1;
    return count;
  };
  // Each frame name's initial counts, and iteration states that ended,
  // kept for the next iteration of a frame of that name.
  std::vector<std::vector<int>> initial_counts(infos.size());
  for (size_t f = 0; f < infos.size(); ++f) {
    for (int id : infos[f]->nodes) initial_counts[f].push_back(initial_pending(graph_.nodes[id]));
  }
  std::vector<std::vector<std::unique_ptr<IterationState>>> spare(infos.size());
  const auto new_iteration = [&](const FrameInfo& info) {
    const int f = info.index;
    std::unique_ptr<IterationState> state;
    if (!spare[f].empty()) {
      state = std::move(spare[f].back());
      spare[f].pop_back();
      for (Entry& e : state->inputs) e = Entry();
      state->outstanding_ops = state->outstanding_frame_count = 0;
    } else {
      state = std::make_unique<IterationState>();
      state->inputs.resize(info.total_inputs);
    }
    state->pending = initial_counts[f];
    state->dead_count.assign(info.nodes.size(), 0);
    return state;
  };
  const auto end_iteration = [&](Frame* frame, int64_t iter) {
    auto it = frame->iterations.find(iter);
    spare[frame->info->index].push_back(std::move(it->second));
    frame->iterations.erase(it);
  };

  Frame root;
  root.info = infos[info_for("")].get();
  root.iterations[0] = new_iteration(*root.info);
  std::deque<TaggedNode> ready;
  const auto schedule = [&](int id, Frame* frame, int64_t iter, IterationState* state, bool dead) {
    if (graph_.nodes[id].cls == NodeClass::kControlTrigger) dead = false;
    ready.push_back({id, frame, iter, state, dead});
    ++state->outstanding_ops;
  };

  // Each node's out-edges among the nodes that run, by consumer (its data
  // edges, then its control edges), built once for the run: a loop
  // activates its nodes' consumers every iteration.
  struct OutEdge {
    int dst = 0;
    int input = -1;   // the consumer's data input; -1: a control edge
    int output = 0;   // the producer's output a data edge carries
    bool last = false;  // the consumer's last edge from this node
    bool last_read = false;  // the last data edge that reads `output`: it may take the value
  };
  std::vector<std::vector<OutEdge>> out_edges(n);
  for (int id = 0; id < n; ++id) {
    if (!needed[id] || frame_of[id] < 0) continue;
    const Node& node = graph_.nodes[id];
    std::vector<OutEdge>& edges = out_edges[id];
    for (size_t k = 0; k < node.consumers.size(); ++k) {
      const int c = node.consumers[k];
      if ((k > 0 && node.consumers[k - 1] == c) || !needed[c] || frame_of[c] < 0) continue;
      const Node& dst = graph_.nodes[c];
      const size_t first = edges.size();
      for (size_t i = 0; i < dst.inputs.size(); ++i) {
        const NodeOutput in = dst.input(i);
        if (in.node == id && !is_fed(in)) edges.push_back({c, static_cast<int>(i), in.index, false});
      }
      for (int ctl : dst.control_inputs) {
        if (ctl == id) edges.push_back({c, -1, 0, false});
      }
      if (edges.size() > first) edges.back().last = true;
    }
    std::vector<bool> seen(node.num_outputs, false);
    for (auto e = edges.rbegin(); e != edges.rend(); ++e) {
      if (e->input < 0 || seen[e->output]) continue;
      seen[e->output] = true;
      e->last_read = true;
    }
  }

  // A cluster run: every task follows the whole graph's frames, in the
  // same order (the ready queue's order depends only on the graph and on
  // which outputs come out live), running its own nodes and hearing of the
  // others' from the task that runs them. A node's outcome goes to each
  // task that reads one of its values (`value_to`, by output slot) and, for
  // a Switch, to every task, which must know the side it took; every other
  // node's outcome each task knows already (it ran, so its outputs are
  // live; or it was dead). Since every task takes the same steps in the
  // same order and sends never block, each wait is for a step its sender
  // reaches without waiting on the waiter.
  const int here = channel_ == nullptr ? 0 : channel_->local_task();
  const int master = channel_ == nullptr ? 0 : channel_->master_task();
  std::vector<std::vector<int>> tell(channel_ != nullptr ? n : 0);  // the tasks told each node's outcome
  std::vector<std::vector<int>> value_to(channel_ != nullptr ? first_slot_[n] : 0);
  if (channel_ != nullptr) {
    int tasks = 1;
    for (const Device& d : devices_.devices()) tasks = std::max(tasks, d.task + 1);
    const auto add = [](std::vector<int>& list, int task) {
      if (std::find(list.begin(), list.end(), task) == list.end()) list.push_back(task);
    };
    for (int id = 0; id < n; ++id) {
      if (!needed[id] || frame_of[id] < 0) continue;
      const Node& node = graph_.nodes[id];
      const int task = TaskOf(id);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const NodeOutput in = node.input(i);
        if (is_fed(in) || TaskOf(in.node) == task) continue;
        add(value_to[SlotOf(in)], task);
        add(tell[in.node], task);
      }
      if (node.cls == NodeClass::kSwitch) {
        for (int t = 0; t < tasks; ++t) {
          if (t != task) add(tell[id], t);
        }
      }
    }
    for (const NodeOutput& f : keep ? fetch : std::vector<NodeOutput>()) {
      if (!graph_.nodes[f.node].has_output() || is_fed(f) || TaskOf(f.node) == master) continue;
      add(value_to[SlotOf(f)], master);
      add(tell[f.node], master);
    }
  }

  // ActivateNodes: `outputs` of node `id` (dead or live) reach its
  // consumers in `iter` of `frame`, whose state is `state`.
  // With `may_move`, the last edge that reads an output takes it.
  const auto activate = [&](int id, bool is_dead, Frame* frame, int64_t iter, IterationState* state,
                            std::vector<Entry>& outputs, bool may_move) {
    const bool from_enter = graph_.nodes[id].cls == NodeClass::kEnter;
    bool dst_ready = false, dst_dead = false;
    for (const OutEdge& e : out_edges[id]) {
      const Node& dst = graph_.nodes[e.dst];
      const int slot = local[e.dst];
      int& pending = state->pending[slot];
      int& dead_count = state->dead_count[slot];
      const int data_inputs = static_cast<int>(dst.inputs.size());
      if (e.input >= 0) {
        Entry& out = outputs[e.output];
        if (dst.cls == NodeClass::kMerge) {
          if (out.live) {
            const int count = pending;
            pending &= ~1;  // mark_live
            dst_ready = dst_ready || count == 1;
            if ((count & 1) == 1) state->inputs[input_base[e.dst] + e.input] = out;
          } else {
            // A dead Enter kills the Merge (a loop on a branch not taken).
            const bool all_dead = ++dead_count == data_inputs || from_enter;
            dst_dead = all_dead;
            dst_ready = dst_ready || (pending == 1 && all_dead);
          }
        } else {
          const bool live = out.live;
          Entry& slot_entry = state->inputs[input_base[e.dst] + e.input];
          if (may_move && e.last_read) {
            slot_entry = std::move(out);
          } else {
            slot_entry = out;
          }
          if (!live) ++dead_count;
          dst_ready = --pending == 0;
          dst_dead = dead_count > 0;
        }
      } else if (dst.cls == NodeClass::kMerge) {
        pending -= 2;
        dst_dead = dead_count == data_inputs;
        dst_ready = pending == 0 || (pending == 1 && dst_dead);
      } else {
        if (is_dead) ++dead_count;
        dst_ready = --pending == 0;
        dst_dead = dead_count > 0;
      }
      if (e.last) {
        if (dst_ready) schedule(e.dst, frame, iter, state, dst_dead);
        dst_ready = dst_dead = false;
      }
    }
  };

  // A new iteration of `frame` (IncrementIteration), with the held-back
  // NextIterations' values and the loop invariants.
  // Scratch reused by every iteration (a loop's iterations would each
  // allocate them): increment_iteration never runs inside itself.
  std::vector<std::pair<int, Entry>> held_roots;
  std::vector<Entry> one(1);
  const auto increment_iteration = [&](Frame* frame) {
    const int64_t next = ++frame->iteration_count;
    std::unique_ptr<IterationState>& state = frame->iterations[next];
    state = new_iteration(*frame->info);
    ++frame->num_outstanding_iterations;
    frame->dead_exits.clear();
    held_roots.clear();
    held_roots.swap(frame->next_iter_roots);  // the frame keeps the cleared vector's room
    for (auto& [id, entry] : held_roots) {
      one.assign(1, std::move(entry));
      activate(id, !one[0].live, frame, next, state.get(), one, true);
    }
    for (const auto& [id, entry] : frame->inv_values) {
      one.assign(1, entry);
      activate(id, !entry.live, frame, next, state.get(), one, true);
    }
    held_roots.clear();
    return next;
  };
  const auto iteration_done = [&](Frame* frame, int64_t iter) {
    const IterationState& state = *frame->iterations[iter];
    if (state.outstanding_ops != 0 || state.outstanding_frame_count != 0) return false;
    if (iter == 0) return frame->num_pending_inputs == 0;
    return frame->iterations.count(iter - 1) == 0;
  };
  // CleanupIterations: whether the frame is done.
  const auto cleanup_iterations = [&](Frame* frame, int64_t iter) {
    int64_t current = iter;
    while (current <= frame->iteration_count && frame->iterations.count(current) > 0 &&
           iteration_done(frame, current)) {
      end_iteration(frame, current);
      --frame->num_outstanding_iterations;
      ++current;
      if (!frame->next_iter_roots.empty()) increment_iteration(frame);
    }
    return frame->num_pending_inputs == 0 && frame->num_outstanding_iterations == 0;
  };
  // DeleteFrame: the loop's dead Exits reach the parent frame, dead.
  const auto delete_frame = [&](Frame* frame) {
    Frame* parent = frame->parent;
    const int64_t parent_iter = frame->parent_iter;
    if (parent == nullptr) return;
    for (int exit : frame->dead_exits) {
      const Node& node = graph_.nodes[exit];
      std::vector<Entry> dead(std::max(node.num_outputs, 1));
      activate(exit, true, parent, parent_iter, parent->iterations[parent_iter].get(), dead, true);
    }
    parent->children.erase({parent_iter, frame->info->name});
  };
  // A node finished in `iter` of `frame`: the frames it completes end.
  const auto decrement_outstanding = [&](Frame* frame, int64_t iter, IterationState* state) {
    if (--state->outstanding_ops != 0) return;
    bool done = cleanup_iterations(frame, iter);
    while (done && frame->parent != nullptr) {
      Frame* parent = frame->parent;
      const int64_t parent_iter = frame->parent_iter;
      delete_frame(frame);  // frees `frame`
      --parent->iterations[parent_iter]->outstanding_frame_count;
      done = cleanup_iterations(parent, parent_iter);
      frame = parent;
    }
  };

  result->node_ms.resize(n, 0.0);
  RunState run;
  run.result = result;
  // Fetched values, by output: set when their producer runs in the root frame.
  // Each fetched tensor's value and its position among the fetches (its
  // first: TensorFlow's Retval index); a fed one has its fed value.
  struct Fetched {
    Entry entry;
    int retval;
  };
  std::map<std::pair<int, int>, Fetched> fetched;
  std::vector<bool> fetched_node(n, false);
  for (size_t k = 0; k < fetch.size(); ++k) {
    const NodeOutput& f = fetch[k];
    fetched_node[f.node] = true;
    Entry value = is_fed(f) ? Entry{fed[{f.node, f.index}], true} : Entry();
    fetched.emplace(std::make_pair(f.node, f.index), Fetched{std::move(value), static_cast<int>(k)});
  }
  // Nodes without inputs start; fed values reach their consumers.
  for (int id : root.info->nodes) {
    if (initial_pending(graph_.nodes[id]) == 0 && graph_.nodes[id].cls != NodeClass::kMerge) {
      schedule(id, &root, 0, root.iterations[0].get(), false);
    }
  }
  IterationState& root_state = *root.iterations[0];
  for (int id : root.info->nodes) {
    const Node& node = graph_.nodes[id];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!is_fed(node.input(i))) continue;
      root_state.inputs[input_base[id] + i] = Entry{fed[{node.input(i).node, node.input(i).index}], true};
      if (node.cls == NodeClass::kMerge && (root_state.pending[local[id]] & 1)) {
        root_state.pending[local[id]] &= ~1;
        if (root_state.pending[local[id]] == 0) schedule(id, &root, 0, &root_state, false);
      }
    }
  }

  // The control-flow ops (and Identity and Const) only move values:
  // without a trace or node times to record, the propagator moves them
  // itself instead of calling their kernels (control_flow_kernels.cc,
  // ConstKernel, which a trace runs), and a Merge's value_index is one
  // shared scalar per index.
  const bool fast = !record_events_ && !record_node_times_;
  std::vector<Tensor> merge_index;
  const auto Forward = [&](const Node& node, Entry* in, std::vector<Entry>* out) -> bool {
    switch (node.cls) {
      case NodeClass::kEnter:
      case NodeClass::kExit:
      case NodeClass::kNextIteration:
      case NodeClass::kLoopCond:
      case NodeClass::kIdentity:
        if (!in[0].value.is_valid()) return false;  // an uninitialized variable: the kernel path says so
        (*out)[0] = std::move(in[0]);
        return true;
      case NodeClass::kSwitch: {
        const Tensor& pred = in[1].value;
        if (node.inputs.size() != 2 || !in[0].value.is_valid() || !pred.is_valid() || pred.rank() != 0 ||
            pred.dtype() != DType::kBool || !pred.allocator()->host_accessible()) {
          return false;  // SwitchKernel's checks and errors
        }
        (*out)[pred.data<bool>()[0] ? 1 : 0] = std::move(in[0]);
        in[1] = Entry();
        return true;
      }
      case NodeClass::kMerge:
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          if (!in[i].live) continue;
          while (merge_index.size() <= i) {
            StatusOr<Tensor> index = Tensor::AllocateHost(DType::kInt32, Shape{});
            if (!index.ok()) return false;
            index->data<int32_t>()[0] = static_cast<int32_t>(merge_index.size());
            merge_index.push_back(std::move(*index));
          }
          (*out)[0] = std::move(in[i]);
          if (out->size() > 1) (*out)[1] = Entry{merge_index[i], true};
          for (size_t j = 0; j < node.inputs.size(); ++j) in[j] = Entry();
          return true;
        }
        return false;
      case NodeClass::kConstant: {
        // ConstKernel's answer where the value already lives in the
        // node's memory (a loop's constants run every iteration).
        const NodePlan* plan = PlanFor(node);
        if (plan->kernel != &ConstKernel || node.value.allocator() != plan->memory) return false;
        (*out)[0] = Entry{node.value, true};
        return true;
      }
      default: return false;
    }
  };
  // Where a node runs in the frames, the same on every task: each frame's
  // name and iteration, outermost first (a cluster run's transfer keys).
  const auto frame_key = [](const Frame* frame, int64_t iter) {
    std::string key = fmt::format("frame '{}' iteration {}", frame->info->name, iter);
    for (const Frame* f = frame; f->parent != nullptr; f = f->parent) {
      key = fmt::format("frame '{}' iteration {} / ", f->parent->info->name, f->parent_iter) + key;
    }
    return key;
  };
  std::vector<bool> outcome_live;
  std::vector<Tensor> outcome_values, host_values;
  // Another task's node: its outputs as that task tells them, or as this
  // task knows them (live when it runs).
  const auto hear = [&](const Node& node, const TaggedNode& tagged, std::vector<Entry>* outputs) -> Status {
    if (tagged.dead) return Status::Ok();
    for (Entry& e : *outputs) e.live = true;
    const std::vector<int>& told = tell[node.id];
    if (std::find(told.begin(), told.end(), here) == told.end()) return Status::Ok();
    outcome_live.assign(outputs->size(), false);
    TFRUN_RETURN_IF_ERROR(channel_->ReceiveOutcome(TaskOf(node.id), node.id, node.name,
                                                   frame_key(tagged.frame, tagged.iter), &outcome_live,
                                                   &outcome_values));
    for (size_t i = 0; i < outputs->size(); ++i) (*outputs)[i] = Entry{std::move(outcome_values[i]), outcome_live[i]};
    return Status::Ok();
  };
  // This task's node: its outcome to the tasks that need it.
  const auto tell_outcome = [&](const Node& node, const TaggedNode& tagged, const std::vector<Entry>& outputs) -> Status {
    const std::vector<int>& told = tell[node.id];
    if (told.empty() || tagged.dead) return Status::Ok();
    const std::string key = frame_key(tagged.frame, tagged.iter);
    outcome_live.assign(outputs.size(), false);
    host_values.assign(outputs.size(), Tensor());
    for (size_t i = 0; i < outputs.size(); ++i) {
      outcome_live[i] = outputs[i].live;
      const Tensor& value = outputs[i].value;
      if (!outputs[i].live || !value.is_valid() || value_to[first_slot_[node.id] + i].empty()) continue;
      // Sent from host memory (a GPU's copy synchronizes).
      host_values[i] = value;
      if (!value.allocator()->host_accessible()) {
        TFRUN_ASSIGN_OR_RETURN(host_values[i], value.CopyTo(CpuAllocator(), devices_[placement_.device_of[node.id]].name));
      }
    }
    for (int task : told) {
      outcome_values.assign(outputs.size(), Tensor());
      for (size_t i = 0; i < outputs.size(); ++i) {
        const std::vector<int>& readers = value_to[first_slot_[node.id] + i];
        if (std::find(readers.begin(), readers.end(), task) != readers.end()) outcome_values[i] = host_values[i];
      }
      TFRUN_RETURN_IF_ERROR(channel_->SendOutcome(task, node.id, key, outcome_live, outcome_values));
    }
    return Status::Ok();
  };
  std::vector<Tensor> inputs, produced;
  std::vector<Entry> outputs;
  int64_t since_check = 0;
  while (!ready.empty()) {
    // --timeout: checked every few thousand nodes (a clock read a node
    // would cost as much as a scalar kernel).
    if (++since_check == 4096) {
      since_check = 0;
      TFRUN_RETURN_IF_ERROR(PastDeadline());
    }
    const TaggedNode tagged = ready.front();
    ready.pop_front();
    const Node& node = graph_.nodes[tagged.id];
    Frame* frame = tagged.frame;
    const int64_t iter = tagged.iter;
    IterationState& state = *tagged.state;
    Entry* in = state.inputs.data() + input_base[tagged.id];
    // Cleared in place: most were moved out already, and assigning a
    // fresh Entry to each copied its empty shape and handle every node.
    outputs.resize(node.num_outputs);
    for (Entry& e : outputs) {
      if (e.value.is_valid()) e.value = Tensor();
      e.live = false;
    }
    const bool remote = channel_ != nullptr && TaskOf(tagged.id) != here;
    if (remote) {
      TFRUN_RETURN_IF_ERROR(hear(node, tagged, &outputs));
      for (size_t i = 0; i < node.inputs.size(); ++i) in[i] = Entry();
    } else if (!tagged.dead && skips_unread && unread[tagged.id]) {
      for (size_t i = 0; i < node.inputs.size(); ++i) in[i] = Entry();
      for (Entry& e : outputs) e.live = true;
    } else if (!tagged.dead && fast && Forward(node, in, &outputs)) {
      // Moved by the propagator (not timed: `fast` means no times are kept).
    } else if (!tagged.dead) {
      inputs.clear();
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        Entry& entry = in[i];
        if (!entry.live && node.cls != NodeClass::kMerge) {
          return graph_.ErrorAt(ErrorKind::kRuntime, node,
                                fmt::format("node '{}': InternalError: input {} is missing", node.name, i));
        }
        if (entry.live && !entry.value.is_valid()) entry.value = CurrentRef(node, i);
        if (entry.live && !entry.value.is_valid() && !TakesUninitializedRef(node, i)) {
          return Uninitialized(node, node.inputs[i]);
        }
        TFRUN_ASSIGN_OR_RETURN(Tensor prepared, PrepareInput(node, i, entry.value, nullptr, &run));
        inputs.push_back(std::move(prepared));
        entry = Entry();  // consumed: its memory goes when the kernel is done with it
      }
      TFRUN_RETURN_IF_ERROR(RunKernel(node, &inputs, &run, &produced));
      for (int i = 0; i < node.num_outputs; ++i) {
        // Only a Switch leaves an output unset (dead); a VariableV2 before
        // its Assign has a live, uninitialized one.
        const bool live = produced[i].is_valid() || node.cls != NodeClass::kSwitch;
        outputs[i] = Entry{std::move(produced[i]), live};
      }
    } else {
      for (size_t i = 0; i < node.inputs.size(); ++i) in[i] = Entry();
    }
    if (channel_ != nullptr && !remote) TFRUN_RETURN_IF_ERROR(tell_outcome(node, tagged, outputs));
    if (fetched_node[tagged.id] && here == master) {
      // TensorFlow's _Retval for the fetch sits in the tensor's frame and
      // runs on every live value: the first sets the fetch, a second (a
      // tensor inside a loop that runs twice) is an error.
      for (int i = 0; i < node.num_outputs; ++i) {
        auto it = fetched.find({tagged.id, i});
        if (it == fetched.end() || is_fed({tagged.id, i}) || !outputs[i].live) continue;
        if (it->second.entry.live) {
          const int retval = it->second.retval;
          return RuntimeError(fmt::format("{}: InternalError: Retval[{}] has already been set.\n\t [[{{{{node "
                                          "_retval_{}_{}_{}}}}}]]",
                                          graph_.path, retval, node.name, i, retval));
        }
        it->second.entry = outputs[i];
      }
    }
    // PropagateOutputs.
    switch (node.cls) {
      case NodeClass::kEnter: {
        const std::string name = graph_.AttrText(node, "frame_name");
        std::unique_ptr<Frame>& child = frame->children[{iter, name}];
        if (child == nullptr) {
          child = std::make_unique<Frame>();
          child->info = infos[info_for(name)].get();
          child->parent = frame;
          child->parent_iter = iter;
          child->num_pending_inputs = child->info->input_count;
          const std::string parallel = graph_.AttrText(node, "parallel_iterations");
          child->max_parallel_iterations = parallel.empty() ? 10 : std::max<int64_t>(1, std::stoll(parallel));
          child->iterations[0] = new_iteration(*child->info);
          ++state.outstanding_frame_count;
        }
        Frame* output_frame = child.get();
        if (graph_.AttrText(node, "is_constant") == "true") {
          output_frame->inv_values.push_back({tagged.id, outputs[0]});
          for (auto& [i, iteration] : output_frame->iterations) {
            activate(tagged.id, tagged.dead, output_frame, i, iteration.get(), outputs, false);
          }
        } else {
          activate(tagged.id, tagged.dead, output_frame, 0, output_frame->iterations[0].get(), outputs, true);
        }
        --output_frame->num_pending_inputs;
        break;
      }
      case NodeClass::kExit:
        if (tagged.dead) {
          if (iter == frame->iteration_count) frame->dead_exits.push_back(tagged.id);
        } else {
          activate(tagged.id, false, frame->parent, frame->parent_iter,
                   frame->parent->iterations[frame->parent_iter].get(), outputs, true);
        }
        break;
      case NodeClass::kNextIteration: {
        if (tagged.dead) break;  // deadness stops here
        if (iter == frame->iteration_count && frame->num_outstanding_iterations == frame->max_parallel_iterations) {
          frame->next_iter_roots.push_back({tagged.id, outputs[0]});
          break;
        }
        const int64_t next = iter == frame->iteration_count ? increment_iteration(frame) : iter + 1;
        activate(tagged.id, false, frame, next, frame->iterations[next].get(), outputs, true);
        break;
      }
      default: activate(tagged.id, tagged.dead, frame, iter, &state, outputs, true); break;
    }
    decrement_outstanding(frame, iter, &state);
  }
  TFRUN_RETURN_IF_ERROR(FinishQueues(&run));
  if (channel_ != nullptr) TFRUN_RETURN_IF_ERROR(channel_->Flush());
  if (keep && here != master) {
    result->fetched.resize(fetch.size());  // the master holds the fetched values
  } else if (keep) {
    for (const NodeOutput& f : fetch) {
      if (!graph_.nodes[f.node].has_output()) {
        result->fetched.emplace_back();
        continue;
      }
      const Entry& entry = fetched.at({f.node, f.index}).entry;
      if (!entry.live) {
        // The Session's words for a fetch whose value never came, or came dead.
        return RuntimeError(fmt::format("{}: InvalidArgumentError: Retval[{}] does not have value",
                                        graph_.path, &f - fetch.data()));
      }
      TFRUN_ASSIGN_OR_RETURN(Tensor host, OnHost(entry.value));
      result->fetched.push_back(std::move(host));
    }
  }
  return Status::Ok();
}

}  // namespace tfrun
