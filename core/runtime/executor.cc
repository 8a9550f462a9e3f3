#include "core/runtime/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <map>
#include <queue>
#include <set>

#include "core/base/denormals.h"
#include "core/base/device_types.h"
#include "core/graph/function_library.h"
#include "core/graph/kernel_lookup.h"
#include "core/graph/node_def_summary.h"
#include "core/graph/op_registry.h"
#include "core/runtime/collectives.h"
#include "core/runtime/node_effects.h"
#include "core/runtime/unread_values.h"
#include "core/tables/tf_tables.h"

namespace tfrun {

namespace {

int64_t NowNs() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

}  // namespace

std::string Executor::NodeLine(const Node& node) const {
  if (error_style_.line == NodeErrorLine::kName) return fmt::format("\t [[{{{{node {}}}}}]]", node.name);
  const Device& device = devices_[placement_.device_of[node.id]];
  const std::string device_name = error_style_.legacy_device_names ? device.spec.ToLegacyString() : device.name;
  return fmt::format("\t [[Node: {}]]", NodeDefSummary(graph_, node, OpAttrs(node.op), device_name, NodeDefEra::kTf1));
}

// An input pipeline's next element with every output fed (a TF2 train
// step's IteratorGetNext, whose iterator only Python's tf.data can run):
// the feeds stand for the node, so what waits on it by a control edge
// waits for nothing. TensorFlow's own feeds keep such a node (only a
// Placeholder's control edges move to its feed); it cannot run there
// without its dataset either.
namespace {

bool ReplacedByFeeds(const Node& node, const std::set<std::pair<int, int>>& fed) {
  if (node.op != "IteratorGetNext" && node.op != "IteratorGetNextSync") return false;
  for (int i = 0; i < node.num_outputs; ++i) {
    if (fed.count({node.id, i}) == 0) return false;
  }
  return node.num_outputs > 0;
}

bool HasCollectives(const Graph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) { return IsCollective(n); });
}

}  // namespace

Executor::Executor(const Graph& graph, const DeviceSet& devices, const Placement& placement,
                   const KernelRegistry& kernels)
    : graph_(graph), devices_(devices), placement_(placement), kernels_(kernels),
      has_control_flow_(graph.HasControlFlow()), has_collectives_(HasCollectives(graph)),
      cpu_fusion_(kernels.FindFusion(kCpu)) {}

std::vector<bool> NeededNodes(const Graph& graph, const std::vector<NodeOutput>& wanted,
                              const std::set<std::pair<int, int>>& fed) {
  std::vector<bool> needed(graph.nodes.size(), false);
  std::vector<int> stack;
  for (const NodeOutput& f : wanted) {
    if (fed.count({f.node, f.index}) == 0) stack.push_back(f.node);
  }
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = true;
    const Node& n = graph.nodes[id];
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const NodeOutput in = n.input(i);
      if (fed.empty() || fed.count({in.node, in.index}) == 0) stack.push_back(in.node);
    }
    for (int in : n.control_inputs) {
      if (!ReplacedByFeeds(graph.nodes[in], fed)) stack.push_back(in);
    }
  }
  return needed;
}

std::vector<bool> Executor::Needed(const std::vector<NodeOutput>& fetch, const std::vector<Feed>& feeds) const {
  // A fed output cuts the edges that read it (TensorFlow prunes its
  // producer unless something else needs it).
  std::set<std::pair<int, int>> fed;
  for (const Feed& f : feeds) fed.emplace(f.output.node, f.output.index);
  return NeededNodes(graph_, fetch, fed);
}

Executor::Preserved Executor::PreservedBy(const std::vector<NodeOutput>& wanted,
                                          const std::vector<Feed>& feeds) const {
  Preserved preserved{std::vector<bool>(graph_.nodes.size(), false), {}};
  for (const NodeOutput& w : wanted) preserved.nodes[w.node] = true;
  for (const Feed& f : feeds) {
    preserved.nodes[f.output.node] = true;
    preserved.fed.emplace(f.output.node, f.output.index);
  }
  return preserved;
}

std::vector<bool> Executor::Unread(const std::vector<bool>& needed, const Preserved& preserved) const {
  const size_t n = graph_.nodes.size();
  if (may_become_noop_.size() != n) {
    may_become_noop_.assign(n, false);
    for (const Node& node : graph_.nodes) may_become_noop_[node.id] = MayBecomeNoOp(graph_, node);
  }
  return UnreadValues(graph_, needed, preserved.nodes, may_become_noop_, preserved.fed);
}

Executor::RunSet Executor::RunSetFor(const std::vector<NodeOutput>& wanted, const std::vector<Feed>& feeds) {
  constexpr size_t kKept = 8;
  std::vector<NodeOutput> fed;
  fed.reserve(feeds.size());
  for (const Feed& f : feeds) fed.push_back(f.output);
  auto it = std::find_if(run_sets_.begin(), run_sets_.end(),
                         [&](const RunSet& s) { return s.wanted == wanted && s.fed == fed; });
  if (it == run_sets_.end()) {
    const Preserved preserved = PreservedBy(wanted, feeds);
    RunSet set{wanted, std::move(fed), NeededNodes(graph_, wanted, preserved.fed), {}, nullptr};
    set.unread = Unread(set.needed, preserved);
    set.fusion = PlanFusion(set.needed, set.unread, preserved);
    if (run_sets_.size() == kKept) run_sets_.pop_back();
    run_sets_.insert(run_sets_.begin(), std::move(set));
  } else if (it != run_sets_.begin()) {
    std::rotate(run_sets_.begin(), it, it + 1);
  }
  return run_sets_.front();
}

std::shared_ptr<const std::vector<FusionRole>> Executor::PlanFusion(const std::vector<bool>& needed,
                                                                    const std::vector<bool>& unread,
                                                                    const Preserved& preserved) {
  if (!fuse_elementwise_ || channel_ != nullptr || cpu_fusion_.defer == nullptr || NeedsFrames(needed)) {
    return nullptr;
  }
  AssignSlots();  // run_order_
  const size_t n = graph_.nodes.size();
  std::vector<int> position(n);
  for (size_t k = 0; k < n; ++k) position[run_order_[k]] = static_cast<int>(k);
  std::vector<bool> runs(n), fuses(n);
  for (size_t id = 0; id < n; ++id) {
    runs[id] = needed[id] && (unread.empty() || !unread[id]);
    const Device& device = devices_[placement_.device_of[id]];
    fuses[id] = device.type == kCpu && !device.simulated && MemoryFor(graph_.nodes[id]) == device.allocator;
  }
  std::vector<FusionRole> roles =
      PlanElementwiseFusion(graph_, runs, preserved.nodes, preserved.fed, placement_.device_of, fuses, position);
  if (std::all_of(roles.begin(), roles.end(), [](FusionRole r) { return r == FusionRole::kNone; })) return nullptr;
  return std::make_shared<const std::vector<FusionRole>>(std::move(roles));
}

int Executor::TaskOf(int id) const {
  return channel_ == nullptr ? 0 : devices_[placement_.device_of[id]].task;
}

Allocator* Executor::MemoryFor(const Node& node) const {
  const Device& device = devices_[placement_.device_of[node.id]];
  return OutputInHostMemory(graph_, node, device.type) ? CpuAllocator() : device.allocator;
}

KernelChoice ChooseKernel(const Graph& graph, const Node& node, const Device& device, const KernelRegistry& kernels,
                          bool as_real) {
  const DeviceTypeInfo* type = FindDeviceType(device.type);
  KernelChoice choice;
  choice.kernel_type = (device.simulated && !as_real) || OutputInHostMemory(graph, node, device.type)
                           ? std::string(kCpu)
                           : std::string(type != nullptr ? type->runs_kernels_of : device.type);
  choice.fn = kernels.Find(node.op, choice.kernel_type, node.dtype, node.has_output());
  // A native call (the op names a library function) runs as a
  // PartitionedCall does, its attrs binding the function's.
  if (choice.fn == nullptr && graph.functions != nullptr && graph.functions->Contains(node.op)) {
    choice.fn = kernels.Find("PartitionedCall", choice.kernel_type, node.dtype, node.has_output());
  }
  if (node.properties >= 0) {
    for (std::string_view t : graph.properties[node.properties].output_types) {
      if (IsRefType(t)) t.remove_suffix(4);
      // An output of a dtype tfrun does not hold (uint8, complex64): no
      // kernel, whatever the node's stand-in dtype would find.
      if (!DTypeOfTableType(t) && t != "RESOURCE") choice.fn = nullptr;
    }
  }
  return choice;
}

const Executor::NodePlan* Executor::PlanFor(const Node& node) {
  NodePlan& plan = plans_[node.id];
  if (plan.kernel != nullptr) return &plan;
  const Device& device = devices_[placement_.device_of[node.id]];
  const KernelChoice choice = ChooseKernel(graph_, node, device, kernels_);
  plan.kernel = choice.fn;
  plan.memory = MemoryFor(node);
  plan.kernel_type = choice.kernel_type;
  plan.queues_device_work = choice.kernel_type == device.type && QueuesDeviceWork(node);
  plan.fresh_outputs = device.type == "CPU" && MakesFreshOutputs(node);
  plan.input_memory.clear();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    plan.input_memory.push_back(InputInHostMemory(graph_, node, device.type, i) ? CpuAllocator() : plan.memory);
  }
  plan.output_dtypes.clear();
  if (node.properties >= 0) {
    for (std::string_view type : graph_.properties[node.properties].output_types) {
      if (IsRefType(type)) type.remove_suffix(4);
      plan.output_dtypes.push_back(DTypeOfTableType(type));
    }
  }
  return &plan;
}

Executor::RunState::~RunState() {
  if (settled) return;
  for (auto& [queue, unused] : spans) queue->Finish().ok();  // the run's own error is the one reported
}

StatusOr<Tensor> Executor::PrepareInput(const Node& node, size_t i, const Tensor& input,
                                        std::vector<std::pair<Allocator*, Tensor>>* made, RunState* run) {
  const Device& device = devices_[placement_.device_of[node.id]];
  // HostMemory inputs (an axis) stay on the host whatever the device.
  Allocator* wanted = PlanFor(node)->input_memory[i];
  if (!input.is_valid() || input.allocator() == wanted || input.num_elements() == 0) return input;
  if (made != nullptr) {
    auto copy = std::find_if(made->begin(), made->end(), [&](const auto& c) { return c.first == wanted; });
    if (copy != made->end()) return copy->second;
  }
  // The edge crosses memories.
  const int64_t copy_start = NowNs();
  StatusOr<Tensor> moved = input.CopyTo(wanted, device.name);
  if (!moved.ok()) {
    return graph_.ErrorAt(moved.status().kind(), node,
                          fmt::format("node '{}' on {}: {}", node.name, device.name, moved.status().message()));
  }
  {
    std::lock_guard<std::mutex> records(run->records);
    run->result->copies.push_back({node.inputs[i], node.id, input.allocator()->name(), wanted->name(),
                                   input.num_bytes(), copy_start, NowNs()});
  }
  if (made != nullptr) made->emplace_back(wanted, *moved);
  return std::move(*moved);
}

Status Executor::RunKernel(const Node& node, std::vector<Tensor>* inputs, RunState* run,
                           std::vector<Tensor>* outputs, Tensor* collective_result,
                           const std::vector<Tensor>* collective_inputs) {
  const int id = node.id;
  const Device& device = devices_[placement_.device_of[id]];
  const NodePlan& plan = *PlanFor(node);
  const FusionRole role = run->fusion != nullptr ? (*run->fusion)[id] : FusionRole::kNone;
  if (plan.kernel == nullptr) {
    return graph_.ErrorAt(ErrorKind::kRuntime, node,
                          fmt::format("node '{}': no {} kernel is built for {}", node.name, plan.kernel_type, node.op));
  }
  if (node.properties >= 0 && !graph_.properties[node.properties].kernel_error.empty()) {
    return graph_.ErrorAt(ErrorKind::kRuntime, node,
                          fmt::format("node '{}' on {}: InvalidArgumentError: {}\n{}", node.name, device.name,
                                      graph_.properties[node.properties].kernel_error, NodeLine(node)));
  }
  RunResult* result = run->result;
  // Host clock reads cost as much as a scalar kernel: only when a
  // benchmark or a trace asks for the times.
  const bool timed = record_events_ || record_node_times_;
  const auto started = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  Allocator* memory = plan.memory;
  // Set only for real GPUs, and only kernels that queue work there are
  // timed on the device (not host-memory kernels, not handle-only ones).
  DeviceQueue* queue = plan.queues_device_work ? device.queue.get() : nullptr;
  int span = -1;
  if (queue != nullptr) {
    if (record_events_) {
      run->queue_anchor_ns.emplace(queue, NowNs());
      run->span_events[queue].push_back(result->events.size());
    }
    TFRUN_ASSIGN_OR_RETURN(span, queue->BeginSpan());
    run->spans[queue].push_back({span, id});
  }
  KernelContext context{node, {}, memory, device.name, store_, &device_constants_, device.context.get(),
                        Tensor()};
  // The callers' vectors lend their storage: a loop runs a node many times.
  context.inputs.swap(*inputs);
  context.outputs.swap(*outputs);
  context.outputs.clear();
  struct GiveBack {
    KernelContext& context;
    std::vector<Tensor>* inputs;
    ~GiveBack() {
      context.inputs.clear();
      context.inputs.swap(*inputs);
    }
  } give_back{context, inputs};
  context.attrs = node.properties >= 0 ? &graph_.properties[node.properties].attrs : nullptr;
  context.random_generators = &random_generators_;
  context.stacks = stacks_.get();  // made by RunNodes
  context.functions = functions_;
  context.graph = &graph_;
  context.collective_result = collective_result;
  context.collective_inputs = collective_inputs;
  Status s;  // under RunNodes' ScopedFlushDenormal
  if (role == FusionRole::kNone) {
    s = plan.kernel(context);
  } else {
    s = (role == FusionRole::kDeferred ? cpu_fusion_.defer : cpu_fusion_.run_root)(context, plan.kernel);
  }
  if (!s.ok() && queue != nullptr) queue->EndSpan(span).ok();  // a complete span for the settling Finish
  if (!s.ok()) {
    return graph_.ErrorAt(s.kind(), node,
                          fmt::format("node '{}' on {}: {}{}", node.name, device.name, s.message(),
                                      context.op_error ? "\n" + NodeLine(node) : ""));
  }
  if (queue != nullptr) TFRUN_RETURN_IF_ERROR(queue->EndSpan(span));
  if (timed) {  // record_events_ among them
    const auto ended = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> records(run->records);
    result->node_ms[id] += std::chrono::duration<double, std::milli>(ended - started).count();
    result->executed.push_back(id);
    if (record_events_) {
      NodeEvent event;
      event.node = id;
      event.start_ns = started.time_since_epoch().count();
      event.end_ns = ended.time_since_epoch().count();
      event.on_device_queue = queue != nullptr;
      event.memory = memory->name();
      event.memory_bytes = static_cast<int64_t>(memory->bytes_in_use());
      result->events.push_back(std::move(event));
    }
  }
  if (context.outputs.empty() && node.num_outputs > 0) context.outputs.push_back(std::move(context.output));
  if (plan.fresh_outputs) {
    // An output in an input's buffer is one the kernel took over (that
    // input and the output its only holders) or MakesFreshOutputs is wrong
    // for this op, and a concurrent run may let a variable's update
    // overwrite what this node's readers read.
    for (const Tensor& out : context.outputs) {
      for (const Tensor& in : context.inputs) {
        if (out.SharesBufferWith(in) && in.buffer_holders() > 2) {
          return graph_.ErrorAt(ErrorKind::kRuntime, node,
                                fmt::format("node '{}' on {}: InternalError: the {} kernel output a tensor "
                                            "another node holds",
                                            node.name, device.name, node.op));
        }
      }
    }
  }
  // executor.cc ProcessOutputs' check: an output of another dtype than
  // the NodeDef declares is an error, never a tensor read as that dtype.
  // (A deferred node's output may be the variant that holds its inputs.)
  for (size_t i = 0; i < context.outputs.size() && i < plan.output_dtypes.size(); ++i) {
    const Tensor& out = context.outputs[i];
    if (out.is_valid() && plan.output_dtypes[i] && out.dtype() != *plan.output_dtypes[i] &&
        !(role == FusionRole::kDeferred && out.variant() != nullptr)) {
      return graph_.ErrorAt(ErrorKind::kRuntime, node,
                            fmt::format("node '{}' on {}: InternalError: Output {} of type {} does not match "
                                        "declared output type {} for node {{{{node {}}}}}",
                                        node.name, device.name, i, Info(out.dtype()).tf_name,
                                        Info(*plan.output_dtypes[i]).tf_name, node.name));
    }
  }
  context.outputs.resize(node.num_outputs);
  outputs->swap(context.outputs);
  return Status::Ok();
}

Status Executor::FinishQueues(RunState* run) {
  // The run ends when every device's work has (Session::Run returns then).
  run->settled = true;
  Status finished;
  for (auto& [queue, node_spans] : run->spans) {  // every queue, also after one failed
    StatusOr<std::vector<SpanTime>> device_times = queue->Finish();
    if (!device_times.ok()) {
      if (finished.ok()) finished = device_times.status();
      continue;
    }
    const std::vector<size_t>& entries = run->span_events[queue];
    for (size_t k = 0; k < node_spans.size(); ++k) {
      const auto [span, id] = node_spans[k];
      if (span >= static_cast<int>(device_times->size())) continue;
      const SpanTime& t = (*device_times)[span];
      run->result->node_ms[id] = t.duration_ms;
      if (!record_events_) continue;
      NodeEvent& event = run->result->events[entries[k]];
      event.device_start_ns = run->queue_anchor_ns[queue] + static_cast<int64_t>(t.start_ms * 1e6);
      event.device_end_ns = event.device_start_ns + static_cast<int64_t>(t.duration_ms * 1e6);
    }
  }
  return finished;
}

StatusOr<Tensor> Executor::OnHost(const Tensor& out) {
  if (out.is_valid() && !out.allocator()->host_accessible()) {
    return out.CopyTo(CpuAllocator(), "/job:localhost/replica:0/task:0/device:CPU:0");
  }
  return out;
}

void Executor::AssignSlots() {
  const size_t n = graph_.nodes.size();
  if (plans_.size() != n) plans_.assign(n, NodePlan());
  if (first_slot_.size() != n + 1) {
    first_slot_.assign(n + 1, 0);
    for (size_t id = 0; id < n; ++id) first_slot_[id + 1] = first_slot_[id] + graph_.nodes[id].num_outputs;
  }
  if (run_order_.size() != n) {
    // Ids are a topological order as loaded; a pass's appended nodes may
    // feed earlier ones (AccumulateNV2's DestroyTemporaryVariable its old
    // consumers): then Kahn's order, the lowest ready id first. A loop's
    // NextIteration feeds its Merge back: the one edge no order can keep,
    // and the one a run without control flow never has.
    run_order_.resize(n);
    const auto back_edge = [&](int producer) { return graph_.nodes[producer].cls == NodeClass::kNextIteration; };
    bool in_order = true;
    for (const Node& node : graph_.nodes) {
      for (int in : node.inputs) in_order = in_order && (in < node.id || back_edge(in));
      for (int in : node.control_inputs) in_order = in_order && (in < node.id || back_edge(in));
    }
    if (in_order) {
      for (size_t id = 0; id < n; ++id) run_order_[id] = static_cast<int>(id);
    } else {
      std::vector<int> pending(n, 0);
      for (const Node& node : graph_.nodes) {
        for (int in : node.inputs) pending[node.id] += back_edge(in) ? 0 : 1;
        for (int in : node.control_inputs) pending[node.id] += back_edge(in) ? 0 : 1;
      }
      std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
      for (size_t id = 0; id < n; ++id) {
        if (pending[id] == 0) ready.push(static_cast<int>(id));
      }
      size_t k = 0;
      while (!ready.empty()) {
        const int id = ready.top();
        ready.pop();
        run_order_[k++] = id;
        if (back_edge(id)) continue;
        for (int c : graph_.nodes[id].consumers) {
          if (--pending[c] == 0) ready.push(c);
        }
      }
    }
  }
}

StatusOr<Executor::CollectivePlan> Executor::PlanCollectives(const std::vector<bool>& running,
                                                             const Slots& slots) const {
  // A key's value before the run: fed, or a Const (through Identity).
  const KnownScalar known = [&](NodeOutput out) -> std::optional<int64_t> {
    // (A graph's inputs name earlier nodes but for a loop's back edge, and
    // a run with collectives has no loops: the walk ends.)
    while (graph_.nodes[out.node].op == "Identity" && !graph_.nodes[out.node].inputs.empty() &&
           !slots.fed[SlotOf(out)]) {
      out = graph_.nodes[out.node].input(0);
    }
    const Node& producer = graph_.nodes[out.node];
    const Tensor* value = slots.fed[SlotOf(out)]   ? &slots.outputs[SlotOf(out)]
                          : producer.op == "Const" ? &producer.value
                                                   : nullptr;
    if (value == nullptr || !value->is_valid() || value->num_elements() != 1 ||
        !value->allocator()->host_accessible()) {
      return std::nullopt;
    }
    if (value->dtype() == DType::kInt32) return value->data<int32_t>()[0];
    if (value->dtype() == DType::kInt64) return value->data<int64_t>()[0];
    return std::nullopt;
  };
  const auto device_name = [&](int id) { return devices_[placement_.device_of[id]].name; };
  const auto fail = [&](const Node& node, std::string message) {
    return graph_.ErrorAt(ErrorKind::kRuntime, node,
                          fmt::format("node '{}' on {}: {}", node.name, device_name(node.id), message));
  };
  CollectivePlan plan;
  TFRUN_ASSIGN_OR_RETURN(plan.groups, ResolveCollectiveGroups(graph_, running, known, device_name, fail));
  plan.group_of.assign(graph_.nodes.size(), -1);
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    for (int member : plan.groups[g].members) plan.group_of[member] = static_cast<int>(g);
  }
  plan.results.resize(plan.groups.size());
  plan.order = CollectiveRunOrder(graph_, run_order_, running, plan.groups);
  return plan;
}

bool Executor::RunsCollectives(const std::vector<bool>& needed, const std::vector<bool>& unread) const {
  if (!has_collectives_) return false;
  for (const Node& node : graph_.nodes) {
    if (needed[node.id] && (unread.empty() || !unread[node.id]) && IsCollective(node)) return true;
  }
  return false;
}

bool Executor::NeedsFrames(const std::vector<bool>& needed) const {
  if (!has_control_flow_) return false;
  for (const Node& node : graph_.nodes) {
    if (needed[node.id] && IsControlFlow(node.cls)) return true;
  }
  return false;
}

Status Executor::GatherInputs(const Node& node, Slots* slots, RunState* run, std::vector<Tensor>* inputs,
                              bool forward) {
  inputs->clear();
  inputs->reserve(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int slot = SlotOf(node.input(i));
    Tensor& value = slots->outputs[slot];
    if (!value.is_valid()) value = CurrentRef(node, i);
    // Assign writes through its reference input, IsVariableInitialized
    // asks about it; everything else reads.
    if (!value.is_valid() && !TakesUninitializedRef(node, i)) return Uninitialized(node, node.inputs[i]);
    TFRUN_ASSIGN_OR_RETURN(Tensor prepared, PrepareInput(node, i, value, &slots->copies[slot], run));
    if (forward && slots->uses[slot] == 1 && prepared.raw() == value.raw() && !slots->fed[slot]) {
      prepared = Tensor();
      prepared = std::move(value);  // the slot empties; ReleaseInputs finds it so
    }
    inputs->push_back(std::move(prepared));
  }
  return Status::Ok();
}

void Executor::StoreOutputs(const Node& node, std::vector<Tensor>* produced, Slots* slots) {
  for (int i = 0; i < node.num_outputs; ++i) {
    const int slot = first_slot_[node.id] + i;
    if (slots->fed[slot] || slots->uses[slot] == 0) continue;  // consumers read the fed value; or none reads it
    slots->outputs[slot] = std::move((*produced)[i]);
  }
}

void Executor::ReleaseInputs(const Node& node, Slots* slots) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int slot = SlotOf(node.input(i));
    if (--slots->uses[slot] == 0) {  // last use: free it and its copies
      slots->outputs[slot] = Tensor();
      std::vector<std::pair<Allocator*, Tensor>>().swap(slots->copies[slot]);  // its memory too, not just its tensors
    }
  }
}

Status Executor::RunNodes(const std::vector<NodeOutput>& fetch, const std::vector<bool>& needed,
                          const std::vector<bool>& unread, const std::vector<Feed>& feeds, RunResult* result,
                          bool keep, const std::vector<FusionRole>* fusion) {
  AssignSlots();
  stacks_ = std::make_unique<StackStore>();  // a run's stacks end with it (TensorFlow's step container)
  // Every kernel runs with denormals flushed, as in TensorFlow's executor;
  // set once here, not per kernel (two MXCSR writes each).
  ScopedFlushDenormal flush;
  // In id order an unread node is simply left out: nothing reads it, and
  // what it waits for runs before what waits for it anyway.
  const auto runs = [&](size_t id) { return needed[id] && (unread.empty() || !unread[id]); };
  const bool collectives = RunsCollectives(needed, unread);
  if (collectives && (channel_ != nullptr || NeedsFrames(needed))) {
    return RuntimeError(fmt::format("tfrun runs collective ops ({}) only in a run of one process without control "
                                    "flow",
                                    channel_ != nullptr ? "this run spans a cluster's tasks" : "this run has some"));
  }
  if (NeedsFrames(needed)) return RunFrames(fetch, needed, unread, feeds, result, keep);
  const size_t n = graph_.nodes.size();
  const size_t slots_count = static_cast<size_t>(first_slot_[n]);
  const int here = channel_ == nullptr ? 0 : channel_->local_task();
  const int master = channel_ == nullptr ? 0 : channel_->master_task();
  // Fed outputs are known before anything runs, on every task (each
  // task's process read the same --feed), so they never cross tasks.
  Slots slots;
  slots.outputs.resize(slots_count);
  slots.fed.assign(slots_count, false);
  for (const Feed& f : feeds) {
    slots.outputs[SlotOf(f.output)] = f.value;
    slots.fed[SlotOf(f.output)] = true;
  }
  // Remaining uses of each output here; fetched outputs hold one more on
  // the master. In a cluster run, `to_tasks` lists the other tasks each
  // output here is sent to, and `wanted_here` the other tasks' outputs
  // this task receives (TensorFlow's Send/Recv pairs, one per task pair).
  slots.uses.assign(slots_count, 0);
  std::vector<std::vector<int>> to_tasks(channel_ != nullptr ? slots_count : 0);
  std::vector<bool> wanted_here(slots_count, false);
  const auto route = [&](int producer, int slot, int consumer_task) {
    const int from = TaskOf(producer);
    if (from == consumer_task || slots.fed[slot]) return;
    if (consumer_task == here) wanted_here[slot] = true;
    if (from == here) {
      std::vector<int>& to = to_tasks[slot];
      if (std::find(to.begin(), to.end(), consumer_task) == to.end()) to.push_back(consumer_task);
    }
  };
  for (size_t id = 0; id < n; ++id) {
    if (!runs(id)) continue;
    const Node& node = graph_.nodes[id];
    const int task = TaskOf(static_cast<int>(id));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int slot = SlotOf(node.input(i));
      if (task == here) ++slots.uses[slot];
      if (channel_ != nullptr) route(node.inputs[i], slot, task);
    }
  }
  if (keep) {
    for (const NodeOutput& f : fetch) {
      if (!graph_.nodes[f.node].has_output()) continue;  // sess.run(no_op): None
      if (here == master) ++slots.uses[SlotOf(f)];
      if (channel_ != nullptr) route(f.node, SlotOf(f), master);
    }
  }
  slots.copies.resize(slots_count);
  RunState run;
  run.result = result;
  run.fusion = fusion;
  result->node_ms.resize(n, 0.0);
  bool ran_concurrently = false;
  CollectivePlan collective;
  if (collectives) {
    std::vector<bool> running(n, false);
    for (size_t id = 0; id < n; ++id) running[id] = runs(id);
    TFRUN_ASSIGN_OR_RETURN(collective, PlanCollectives(running, slots));
  }
  if (channel_ == nullptr && !collectives) {
    TFRUN_RETURN_IF_ERROR(RunConcurrently(needed, unread, &slots, &run, &ran_concurrently));
  }
  // Shapes the graph leaves open travel with the tensor.
  const auto dynamic = [&](const Node& p) { return p.unknown_rank || !IsFullyDefined(p.shape); };
  const auto receive = [&](int producer, int slot) -> Status {
    if (!wanted_here[slot] || slots.outputs[slot].is_valid()) return Status::Ok();
    const Node& p = graph_.nodes[producer];
    TFRUN_ASSIGN_OR_RETURN(slots.outputs[slot],
                           channel_->Receive(TaskOf(producer), slot, p.name, p.dtype, p.shape, dynamic(p)));
    return Status::Ok();
  };
  // Without control flow, run_order_ is a topological order (both sides
  // of the choice are lvalues: no copy of it).
  const std::vector<int> none;
  std::vector<Tensor> inputs, produced;
  for (const int id : ran_concurrently ? none : collectives ? collective.order : run_order_) {
    if (!runs(id)) continue;
    const Node& node = graph_.nodes[id];
    if (TaskOf(static_cast<int>(id)) != here) {  // another task runs it
      for (int i = 0; i < node.num_outputs; ++i) {
        const int slot = first_slot_[id] + i;
        if (!slots.fed[slot]) TFRUN_RETURN_IF_ERROR(receive(static_cast<int>(id), slot));
      }
      continue;
    }
    if (timeout_seconds_ > 0) TFRUN_RETURN_IF_ERROR(PastDeadline());
    TFRUN_RETURN_IF_ERROR(GatherInputs(node, &slots, &run, &inputs, /*forward=*/channel_ == nullptr));
    if (collectives && collective.group_of[id] >= 0) {
      const int g = collective.group_of[id];
      std::vector<Tensor> members;
      if (!collective.results[g].is_valid()) {
        // The first member to run: every member's input exists (the
        // order's promise) and is still held (its member has not run).
        for (int member : collective.groups[g].members) {
          const Tensor& in = member == static_cast<int>(id) ? inputs.at(0)
                                                            : slots.outputs[SlotOf(graph_.nodes[member].input(0))];
          TFRUN_ASSIGN_OR_RETURN(Tensor host, OnHost(in));
          members.push_back(std::move(host));
        }
      }
      TFRUN_RETURN_IF_ERROR(RunKernel(node, &inputs, &run, &produced, &collective.results[g], &members));
    } else {
      TFRUN_RETURN_IF_ERROR(RunKernel(node, &inputs, &run, &produced));
    }
    if (channel_ != nullptr) {
      const Device& device = devices_[placement_.device_of[id]];
      for (int i = 0; i < node.num_outputs; ++i) {
        const int slot = first_slot_[id] + i;
        if (slots.fed[slot] || to_tasks[slot].empty()) continue;
        // Other tasks read it: from host memory (a GPU's copy synchronizes).
        Tensor sent = produced[i];
        if (sent.is_valid() && !sent.allocator()->host_accessible()) {
          TFRUN_ASSIGN_OR_RETURN(sent, sent.CopyTo(CpuAllocator(), device.name));
        }
        for (int task : to_tasks[slot]) TFRUN_RETURN_IF_ERROR(channel_->Send(task, slot, sent, dynamic(node)));
      }
    }
    StoreOutputs(node, &produced, &slots);
    ReleaseInputs(node, &slots);
  }
  TFRUN_RETURN_IF_ERROR(FinishQueues(&run));
  if (channel_ != nullptr) TFRUN_RETURN_IF_ERROR(channel_->Flush());
  if (keep) {
    // Results are read on the host: bring device-memory ones back.
    for (const NodeOutput& f : fetch) {
      if (!graph_.nodes[f.node].has_output()) {
        result->fetched.emplace_back();
        continue;
      }
      TFRUN_ASSIGN_OR_RETURN(Tensor host, OnHost(slots.outputs[SlotOf(f)]));
      result->fetched.push_back(std::move(host));
    }
  }
  return Status::Ok();
}

Tensor Executor::CurrentRef(const Node& node, size_t input) const {
  const Node& producer = graph_.nodes[node.inputs[input]];
  if (producer.op != "VariableV2") return Tensor();
  const auto it = store_->ref.find(producer.name);
  return it == store_->ref.end() ? Tensor() : it->second;
}

Status Executor::Uninitialized(const Node& node, int producer) const {
  return graph_.ErrorAt(ErrorKind::kRuntime, node,
                        fmt::format("node '{}': FailedPreconditionError: Attempting to use uninitialized value {}",
                                    node.name, graph_.nodes[producer].name));
}

// Variables are initialised before their first read (the TF1 program's
// sess.run(init)), on every task alike.
std::vector<NodeOutput> Executor::InitializersFor(const std::vector<bool>& needed) const {
  if (!graph_.variables_start_initialized) return {};
  bool reads_variable = false;
  std::vector<NodeOutput> assigns;
  for (const Node& node : graph_.nodes) {
    reads_variable = reads_variable || (needed[node.id] && node.op == "VariableV2");
    if (node.op == "Assign") assigns.push_back({node.id, 0});
  }
  return reads_variable ? assigns : std::vector<NodeOutput>();
}

Status Executor::RunInitializers(const std::vector<bool>& needed, RunResult* result) {
  const std::vector<NodeOutput> assigns = InitializersFor(needed);
  if (assigns.empty() || variables_initialized_) return Status::Ok();
  variables_initialized_ = true;
  return RunNodes(assigns, Needed(assigns, {}), {}, {}, result, false);
}

void Executor::StartDeadline() {
  using Clock = std::chrono::steady_clock;
  const auto bound = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds_));
  deadline_ = timeout_seconds_ > 0 ? Clock::now() + bound : Clock::time_point::max();
}

Status Executor::PastDeadline() const {
  if (std::chrono::steady_clock::now() < deadline_) return Status::Ok();
  return RuntimeError(fmt::format("{}: DeadlineExceededError: the run took longer than --timeout ({} s)", graph_.path,
                                  timeout_seconds_));
}

StatusOr<RunResult> Executor::Run(const std::vector<NodeOutput>& fetch, const std::vector<Feed>& feeds,
                                  const std::vector<int>& targets) {
  StartDeadline();
  RunResult result;
  result.start_ns = NowNs();
  std::vector<NodeOutput> wanted = fetch;
  for (int t : targets) wanted.push_back({t, 0});
  const RunSet set = RunSetFor(wanted, feeds);
  TFRUN_RETURN_IF_ERROR(RunInitializers(set.needed, &result));
  TFRUN_RETURN_IF_ERROR(RunNodes(fetch, set.needed, set.unread, feeds, &result, true, set.fusion.get()));
  result.end_ns = NowNs();
  return result;
}

Status Executor::CheckKernels(const std::vector<NodeOutput>& fetch, const std::vector<int>& targets,
                              const std::vector<Feed>& feeds) {
  if (plans_.size() != graph_.nodes.size()) plans_.assign(graph_.nodes.size(), NodePlan());
  std::vector<NodeOutput> outputs = fetch;
  for (int t : targets) outputs.push_back({t, 0});
  const RunSet set = RunSetFor(outputs, feeds);
  std::vector<bool> runs = set.needed;
  for (size_t i = 0; i < runs.size(); ++i) runs[i] = runs[i] && !set.unread[i];  // no kernel needed
  if (const std::vector<NodeOutput> assigns = InitializersFor(runs); !assigns.empty()) {
    const std::vector<bool> init = Needed(assigns, {});
    for (size_t i = 0; i < runs.size(); ++i) runs[i] = runs[i] || init[i];
  }
  const int here = channel_ == nullptr ? 0 : channel_->local_task();
  std::vector<std::string> missing;
  for (const Node& node : graph_.nodes) {
    if (!runs[node.id] || TaskOf(node.id) != here || PlanFor(node)->kernel != nullptr) continue;
    const Device& device = devices_[placement_.device_of[node.id]];
    const std::optional<DType> dtype = node.has_output() ? graph_.OutputDType({node.id, 0}) : std::nullopt;
    missing.push_back(fmt::format("'{}' ({}, {}) on {}", node.name, node.op,
                                  !node.has_output() ? "no output"
                                  : dtype          ? std::string(Name(*dtype))
                                                   : graph_.OutputTypeString({node.id, 0}),
                                  device.name));
  }
  if (missing.empty()) return Status::Ok();
  return RuntimeError(fmt::format("{}: tfrun has no kernel for {} as placed: {} (TensorFlow has one; --place-only "
                                  "places and logs without running)",
                                  graph_.path, missing.size() == 1 ? "this node" : "these nodes",
                                  fmt::join(missing, "; ")));
}

Status Executor::RunTargets(const std::vector<int>& targets, const std::vector<Feed>& feeds) {
  StartDeadline();
  RunResult result;
  std::vector<NodeOutput> outputs;
  for (int t : targets) outputs.push_back({t, 0});
  const RunSet set = RunSetFor(outputs, feeds);
  TFRUN_RETURN_IF_ERROR(RunInitializers(set.needed, &result));
  return RunNodes(outputs, set.needed, set.unread, feeds, &result, false, set.fusion.get());
}

}  // namespace tfrun
