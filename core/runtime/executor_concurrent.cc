// A run's nodes on several threads at once, as TensorFlow's executor runs
// every ready node on its inter-op thread pool: a training step's towers,
// and a layer's gradients for its input and its filter, overlap.
//
// What may overlap is decided so that the run computes exactly what it
// computes one node at a time (id order, executor.cc). Nodes that change
// state other nodes read (node_effects.h: queues, Print, handles' writes)
// split the run order into segments: such a node runs alone, after every
// node before it in run order and before every node after it. A node that
// only writes reference variables in place (the Apply ops on a VariableV2)
// stays in its segment, after the nodes before it in run order that may
// hold a written variable's buffer and before those after it: a tower's
// update runs beside the other towers' products, as TensorFlow runs it.
// Within a segment no node reads what another changes out of that order,
// so any order the edges allow gives the same values. A failed node stops
// what comes after it in run order; the run reports the first failure in
// run order, as a run one node at a time would.
#include <algorithm>
#include <climits>
#include <condition_variable>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/kernel_threads.h"
#include "core/base/parallel.h"
#include "core/runtime/executor.h"
#include "core/runtime/node_effects.h"

namespace tfrun {
namespace {

// The process's inter-op threads, beside the thread that calls Run: made
// on first use with the first size asked for, and kept.
KernelThreadPool& InterOpPool(int helpers) {
  static auto* pool = new KernelThreadPool(std::max(1, helpers));
  return *pool;
}

// The order of one run's nodes and what each waits for. Node k of the run
// is `order[k]`, its position k; segments are contiguous ranges of
// positions. A node waits only for the inputs inside its own segment:
// those before it have all run when it starts.
struct RunPlan {
  std::vector<int> order;            // node ids, in run order
  std::vector<int> position;         // by node id; -1 outside the run
  std::vector<int> segment_start;    // first position of each segment, plus order.size()
  std::vector<int> segment_of;       // by position
  std::vector<int> waits_for;        // by position: inputs in its segment not yet run
  std::vector<int> successor_start;  // by position, plus order.size(): successors[start[k] .. start[k+1])
  std::vector<int> successors;       // positions
};

// A kernel's work, by its op's kind alone (a GraphDef rarely records the
// shapes of what its nodes compute): a convolution 8, a matrix product 4,
// a pooling, normalization or softmax 2, a kernel that computes nothing
// (moves a handle, a reference or a shape) 0, any other 1. Enough to tell
// towers from one chain: a tower's weight is in its products and
// convolutions, a chain's optimizer steps are light.
double NodeCost(const Node& node) {
  const std::string& op = node.op;
  const auto has = [&](std::string_view part) { return op.find(part) != std::string::npos; };
  if (has("Conv")) return 8;
  if (has("MatMul")) return 4;
  if (has("Pool") || has("LRN") || has("BatchNorm") || has("Softmax")) return 2;
  static const std::set<std::string, std::less<>> kNoWork = {
      "Const",       "Identity", "VariableV2", "VarHandleOp", "Placeholder", "PlaceholderWithDefault",
      "NoOp",        "Shape",    "Reshape",    "ExpandDims",  "Squeeze",     "StopGradient",
      "PreventGradient", "Size", "Rank",       "IdentityN",   "_Arg",        "_Retval"};
  return kNoWork.count(op) != 0 ? 0 : 1;
}

// A node of elementwise cost (1) with an input of this many elements or
// more (4 MB of float32, more than a core's L2 cache), or twice as many in
// all its inputs, streams through memory, and one thread leaves the other
// cores' bandwidth unused: tf_cnn_benchmarks' trivial, its 16 MB
// gradient's AddN, Mul and update 2.3, 2.1 and 1.8 ms on one thread of
// two, 0.9, 0.9 and 0.7 on both; CIFAR-10's four towers' gradients stacked
// (ConcatV2 of four 3.5 MB) ran alone on one thread at the step's end.
// From 2 MB an input on, CIFAR-10's activations and weights, its two
// towers' step was a millisecond slower: turns and the cores shared with
// the other tower cost more than a second thread gains where the data
// fits a cache.
constexpr int64_t kStreamingElements = int64_t{1} << 20;

bool Streams(double cost, const std::vector<Tensor>& inputs) {
  if (cost != 1) return false;
  int64_t all = 0;
  for (const Tensor& t : inputs) {
    if (t.num_elements() >= kStreamingElements) return true;
    all += t.num_elements();
  }
  return all >= 2 * kStreamingElements;
}

// Which positions of a run lie in a chain: a stretch of run order between
// nodes that change shared state (`alone`, by position; variables' writers
// among them) whose work, by NodeCost, is all on its longest path. Nothing
// runs beside such a kernel, so it may take every thread
// (chain_kernel_threads_). Found on these stretches, not on the segments
// RunConcurrently schedules, and by NodeCost, never by times: a kernel's
// thread count may change its sums, which must not depend on which nodes a
// variable's writer waits for or on how long kernels took.
std::vector<bool> InChains(const Graph& graph, const std::vector<int>& order, const std::vector<int>& position,
                           const std::vector<double>& cost, const std::vector<bool>& alone) {
  const int count = static_cast<int>(order.size());
  std::vector<bool> in_chain(count, false);
  std::vector<double> finish(count, 0.0);  // along the longest path into each position
  int start = 0;
  while (start < count) {
    int end = start + 1;  // [start, end): one stretch
    if (!alone[start]) {
      while (end < count && !alone[end]) ++end;
    }
    double total = 0, longest = 0;
    for (int k = start; k < end; ++k) {
      const Node& node = graph.nodes[order[k]];
      double before = 0;
      const auto after = [&](int producer) {
        const int p = position[producer];
        if (p >= start && p < k) before = std::max(before, finish[p]);
      };
      for (const int in : node.inputs) after(in);
      for (const int in : node.control_inputs) after(in);
      finish[k] = before + cost[k];
      total += cost[k];
      longest = std::max(longest, finish[k]);
    }
    for (int k = start; k < end; ++k) in_chain[k] = total <= longest;
    start = end;
  }
  return in_chain;
}

}  // namespace

void Executor::FindSharedStateChanges() {
  if (changes_shared_state_.size() == graph_.nodes.size()) return;
  const size_t n = graph_.nodes.size();
  changes_shared_state_.assign(n, false);
  writes_variables_only_.assign(n, false);
  variable_conflicts_.assign(n, {});
  std::map<int, std::vector<int>> holders;  // by variable, found once
  for (const Node& node : graph_.nodes) {
    changes_shared_state_[node.id] = ChangesSharedState(graph_, node);
    if (!changes_shared_state_[node.id]) continue;
    const std::vector<int> written = WrittenReferenceVariables(graph_, node);
    if (written.empty()) continue;
    writes_variables_only_[node.id] = true;
    std::vector<int>& conflicts = variable_conflicts_[node.id];
    for (const int variable : written) {
      auto found = holders.find(variable);
      if (found == holders.end()) found = holders.emplace(variable, VariableBufferHolders(graph_, variable)).first;
      conflicts.insert(conflicts.end(), found->second.begin(), found->second.end());
    }
    std::sort(conflicts.begin(), conflicts.end());
    conflicts.erase(std::unique(conflicts.begin(), conflicts.end()), conflicts.end());
    conflicts.erase(std::remove(conflicts.begin(), conflicts.end(), node.id), conflicts.end());
  }
}

bool Executor::OnHostCpusOnly(const std::vector<bool>& needed, const std::vector<bool>& unread) const {
  for (const int id : run_order_) {
    if (!needed[id] || (!unread.empty() && unread[id])) continue;
    // Host kernels on CPUs only: a GPU's queue, a simulated GPU's memory
    // budget and its peak are kept exactly as one node at a time leaves
    // them.
    const Device& device = devices_[placement_.device_of[id]];
    if (device.type != "CPU" || device.simulated) return false;
  }
  return true;
}

double Executor::EstimatedWidth(const std::vector<bool>& needed, const std::vector<bool>& unread) {
  FindSharedStateChanges();
  // finish[id]: when the node would end with unbounded threads; a node
  // alone starts after everything before it (`latest`), and what follows
  // it starts after it (`segment_start`).
  std::vector<double> finish(graph_.nodes.size(), 0.0);
  double total = 0, latest = 0, segment_start = 0;
  for (const int id : run_order_) {
    if (!needed[id]) continue;
    const Node& node = graph_.nodes[id];
    const double cost = !unread.empty() && unread[id] ? 0.0 : NodeCost(node);
    total += cost;
    if (cost > 0 && changes_shared_state_[id]) {
      finish[id] = latest + cost;
      segment_start = latest = finish[id];
      continue;
    }
    double start = segment_start;
    for (const int in : node.inputs) start = std::max(start, finish[in]);
    for (const int in : node.control_inputs) start = std::max(start, finish[in]);
    finish[id] = start + cost;
    latest = std::max(latest, finish[id]);
  }
  return latest > 0 ? total / latest : 1.0;
}

Executor::ThreadChoice Executor::ChooseThreads(const std::vector<NodeOutput>& fetch, const std::vector<int>& targets,
                                               const std::vector<Feed>& feeds, int cores) {
  ThreadChoice choice;
  AssignSlots();  // run_order_
  std::vector<NodeOutput> wanted = fetch;
  for (const int t : targets) wanted.push_back({t, 0});
  const RunSet set = RunSetFor(wanted, feeds);
  // RunNodes' conditions for RunConcurrently, and RunConcurrently's own.
  if (cores < 2 || channel_ != nullptr || RunsCollectives(set.needed, set.unread) || NeedsFrames(set.needed) ||
      !OnHostCpusOnly(set.needed, set.unread)) {
    choice.width = 0;
    return choice;
  }
  choice.width = EstimatedWidth(set.needed, set.unread);
  if (choice.width >= cores) {
    choice.inter_op = cores;
    choice.intra_op = 1;
  }
  return choice;
}

Status Executor::RunConcurrently(const std::vector<bool>& needed, const std::vector<bool>& unread, Slots* slots,
                                 RunState* run, bool* ran) {
  *ran = false;
  const int threads = inter_op_threads_;
  if (threads <= 1 || channel_ != nullptr) return Status::Ok();  // RunNodes: no control flow in this run
  const auto skipped = [&](int id) { return !unread.empty() && unread[id]; };

  RunPlan plan;
  plan.position.assign(graph_.nodes.size(), -1);
  if (!OnHostCpusOnly(needed, unread)) return Status::Ok();
  for (const int id : run_order_) {
    if (!needed[id]) continue;
    plan.position[id] = static_cast<int>(plan.order.size());
    plan.order.push_back(id);
  }
  const int count = static_cast<int>(plan.order.size());
  if (count < 2) return Status::Ok();
  // A node that changes shared state ends the segment before it and makes
  // one of its own; the node after it starts the next. One that only
  // writes reference variables stays in its segment, ordered against the
  // nodes that may hold their buffers (below).
  FindSharedStateChanges();
  plan.segment_of.resize(count);
  bool previous_alone = false;
  for (int k = 0; k < count; ++k) {
    const int id = plan.order[k];
    const bool alone = !skipped(id) && changes_shared_state_[id] && !writes_variables_only_[id];
    if (k == 0 || alone || previous_alone) plan.segment_start.push_back(k);
    plan.segment_of[k] = static_cast<int>(plan.segment_start.size()) - 1;
    previous_alone = alone;
  }
  const int segments = static_cast<int>(plan.segment_start.size());
  plan.segment_start.push_back(count);
  if (segments == count) return Status::Ok();  // every node alone: nothing overlaps
  plan.waits_for.assign(count, 0);
  std::vector<std::pair<int, int>> edges;  // (earlier position, later position) within a segment
  const auto add_edge = [&](int before, int after) {
    if (plan.segment_of[before] != plan.segment_of[after]) return;
    edges.emplace_back(before, after);
    ++plan.waits_for[after];
  };
  for (int k = 0; k < count; ++k) {
    const Node& node = graph_.nodes[plan.order[k]];
    const auto wait_for = [&](int producer) {
      if (const int p = plan.position[producer]; p >= 0) add_edge(p, k);
    };
    for (const int in : node.inputs) wait_for(in);
    for (const int in : node.control_inputs) wait_for(in);
    // A variable's writer after the nodes before it in run order that may
    // hold the variable's buffer, and before those after it: each reads
    // the value it would read one node at a time. Run order puts every
    // node after its inputs, so these edges make no cycle.
    if (skipped(node.id) || !writes_variables_only_[node.id]) continue;
    for (const int holder : variable_conflicts_[node.id]) {
      const int p = plan.position[holder];
      if (p >= 0) p < k ? add_edge(p, k) : add_edge(k, p);
    }
  }
  plan.successor_start.assign(count + 1, 0);
  for (const auto& [p, k] : edges) ++plan.successor_start[p + 1];
  for (int k = 0; k < count; ++k) plan.successor_start[k + 1] += plan.successor_start[k];
  plan.successors.resize(edges.size());
  {
    std::vector<int> next(plan.successor_start.begin(), plan.successor_start.end() - 1);
    for (const auto& [p, k] : edges) plan.successors[next[p]++] = k;
  }
  for (const int id : plan.order) (void)PlanFor(graph_.nodes[id]);  // filled here, read by every thread

  // Each node's remaining work to its segment's end (itself included, by
  // NodeCost): ready nodes with the most left go first, so towers advance
  // together and end together, instead of the first tower's ending leaving
  // the last one's tail alone on one thread (CIFAR-10's two towers: 5 ms of
  // a 27 ms step). Ties go by position, the earliest first, keeping the run
  // close to run order.
  //
  // The work of a node is its kernel's time in the previous concurrent run
  // where every node of this run has one (a training loop's later steps),
  // else NodeCost's estimate by op: an elementwise op over a 16 MB
  // variable takes as long as a MatMul, and by op alone tf_cnn_benchmarks'
  // weight decay (L2Loss, its gradient) waited behind both towers'
  // MatMuls and then ran alone at the step's end, where TensorFlow runs it
  // first.
  last_kernel_micros_.resize(graph_.nodes.size(), 0.0f);
  std::vector<double> node_cost(count);  // NodeCost, by position
  bool measured = true;
  for (int k = 0; k < count; ++k) {
    const int id = plan.order[k];
    node_cost[k] = NodeCost(graph_.nodes[id]);
    measured = measured && (skipped(id) || node_cost[k] == 0 || last_kernel_micros_[id] > 0);
  }
  // Each node's work, then each position's work to its segment's end.
  std::vector<double> node_work = node_cost;
  if (measured) {
    for (int k = 0; k < count; ++k) node_work[k] = node_cost[k] > 0 ? last_kernel_micros_[plan.order[k]] : 0.0;
  }
  std::vector<double> remaining(count, 0.0);
  for (int k = count; k-- > 0;) {
    double after = 0;
    for (int e = plan.successor_start[k]; e < plan.successor_start[k + 1]; ++e) {
      after = std::max(after, remaining[plan.successors[e]]);
    }
    remaining[k] = node_work[k] + after;
  }
  const auto later = [&](int a, int b) { return remaining[a] != remaining[b] ? remaining[a] < remaining[b] : a > b; };
  std::vector<bool> in_chain;
  if (chain_kernel_threads_ > 0) {
    std::vector<bool> alone(count);
    for (int k = 0; k < count; ++k) alone[k] = !skipped(plan.order[k]) && changes_shared_state_[plan.order[k]];
    in_chain = InChains(graph_, plan.order, plan.position, node_cost, alone);
    // A variable's writer, a chain of one node, runs beside others now: it
    // keeps one thread unless it streams, where its threads would take
    // turns with the other writers' (a 0.6 MB update waited a millisecond
    // for a 16 MB one). The update ops compute each element on its own,
    // so their thread count changes no value.
    for (int k = 0; k < count; ++k) in_chain[k] = in_chain[k] && !writes_variables_only_[plan.order[k]];
  }

  // The scheduler's state, under `mu` (with plan.waits_for, counted down
  // as inputs run).
  std::mutex mu;
  std::condition_variable wake;
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  std::vector<int> segment_left(segments);
  for (int s = 0; s < segments; ++s) segment_left[s] = plan.segment_start[s + 1] - plan.segment_start[s];
  int in_flight = 0, idle = 0, participants = 0;
  bool done = false;
  int failed_at = INT_MAX;  // the earliest failed position
  Status failure;

  // A node done (run, or skipped): its successors may be ready, and a
  // segment's last node starts the next segment. Skipped nodes are done as
  // soon as they are ready (a worklist: their chains may be long).
  std::vector<int> done_nodes;
  const auto make_ready = [&](int k) {
    if (skipped(plan.order[k])) {
      done_nodes.push_back(k);
    } else {
      ready.push(k);
    }
  };
  const auto start_segment = [&](int s) {
    for (int k = plan.segment_start[s]; k < plan.segment_start[s + 1]; ++k) {
      if (plan.waits_for[k] == 0) make_ready(k);
    }
  };
  const auto drain = [&] {
    while (!done_nodes.empty()) {
      const int k = done_nodes.back();
      done_nodes.pop_back();
      for (int e = plan.successor_start[k]; e < plan.successor_start[k + 1]; ++e) {
        const int next = plan.successors[e];
        if (--plan.waits_for[next] == 0) make_ready(next);
      }
      const int s = plan.segment_of[k];
      if (--segment_left[s] == 0 && s + 1 < segments) start_segment(s + 1);
    }
  };
  const auto finished = [&](int k) {
    done_nodes.push_back(k);
    drain();
  };
  const auto fail = [&](int k, Status status) {
    if (k < failed_at) {
      failed_at = k;
      failure = std::move(status);
    }
  };

  const auto work = [&] {
    MultiThreadedKernelsTakeTurns(true);
    std::vector<Tensor> inputs, produced;
    std::unique_lock<std::mutex> lock(mu);
    while (!done) {
      // Nodes after a failure in run order never start.
      while (!ready.empty() && ready.top() > failed_at) ready.pop();
      if (ready.empty()) {  // nothing this run may still start
        if (in_flight == 0) {
          done = true;
          wake.notify_all();
          break;
        }
        ++idle;
        wake.wait(lock);
        --idle;
        continue;
      }
      const int k = ready.top();
      ready.pop();
      const Node& node = graph_.nodes[plan.order[k]];
      if (timeout_seconds_ > 0) {
        if (Status late = PastDeadline(); !late.ok()) {
          fail(k, std::move(late));
          continue;
        }
      }
      if (Status read = GatherInputs(node, slots, run, &inputs, /*forward=*/true); !read.ok()) {
        fail(k, std::move(read));
        continue;
      }
      if (!ready.empty() && idle > 0) wake.notify_one();
      ++in_flight;
      lock.unlock();
      const ScopedKernelThreads threads(
          (!in_chain.empty() && in_chain[k]) || Streams(node_cost[k], inputs) ? chain_kernel_threads_ : 0);
      const auto start = std::chrono::steady_clock::now();
      Status ok = RunKernel(node, &inputs, run, &produced);
      last_kernel_micros_[node.id] = std::max(
          0.01f, std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - start).count());
      lock.lock();
      --in_flight;
      if (!ok.ok()) {
        fail(k, std::move(ok));
        continue;
      }
      StoreOutputs(node, &produced, slots);
      ReleaseInputs(node, slots);
      produced.clear();  // the stored values live in `slots` alone
      finished(k);
    }
    MultiThreadedKernelsTakeTurns(false);
    --participants;
    wake.notify_all();
  };

  {
    std::lock_guard<std::mutex> lock(mu);
    start_segment(0);
    drain();
  }
  const int helpers = std::min(threads - 1, count - 1);
  participants = helpers + 1;
  KernelThreadPool& pool = InterOpPool(threads - 1);
  for (int h = 0; h < helpers; ++h) pool.Schedule(work);
  work();
  {
    // The helpers use this frame's state until they leave.
    std::unique_lock<std::mutex> lock(mu);
    wake.wait(lock, [&] { return participants == 0; });
  }
  *ran = true;
  return failure;
}

}  // namespace tfrun
