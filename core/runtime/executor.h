// Runs the nodes the fetches need, in dependency order, on their placed
// devices, and frees every intermediate tensor after its last use
// (TensorFlow's executor.cc). Kernels of asynchronous devices only queue
// their work, so one host thread keeps every GPU busy at once: the two
// towers of the tutorial run together, and the CPU's AddN waits only for
// the copies it reads (ordered by the copier with events).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placer.h"
#include "core/runtime/collectives.h"
#include "core/runtime/control_flow_kernels.h"
#include "core/runtime/elementwise_fusion.h"
#include "core/runtime/kernel_registry.h"

namespace tfrun {

// A tensor moved between memories because an edge crosses devices
// (TensorFlow's Send/Recv pair), or into host memory for a HostMemory kernel.
struct CopyRecord {
  int producer = 0;
  int consumer = 0;
  std::string from;  // allocator names: "cpu", "GPU_0_bfc"
  std::string to;
  size_t bytes = 0;
  int64_t start_ns = 0, end_ns = 0;  // host steady_clock times (below)
};

// One node's run, for traces. Times are steady_clock nanoseconds since its
// epoch. Host devices and simulated GPUs: the kernel's call. A kernel that
// queued work on a device adds the device's own span (CUDA events),
// placed on the host clock at the launch of the queue's first span in
// the run (a device starts no earlier than it is told to).
struct NodeEvent {
  int node = 0;
  int64_t start_ns = 0, end_ns = 0;
  bool on_device_queue = false;
  int64_t device_start_ns = 0, device_end_ns = 0;
  // The memory the kernel wrote into, and its bytes in use after it.
  std::string memory;
  int64_t memory_bytes = 0;
};

// A value fed for one output (sess.run's feed_dict): what consumers read
// instead of running its producer. In host memory.
struct Feed {
  NodeOutput output;
  Tensor value;
};

// The line TensorFlow ends an op's error with, naming the node: by era
// (compat_profile.h), with the device names the era prints.
struct NodeErrorStyle {
  NodeErrorLine line = NodeErrorLine::kName;
  bool legacy_device_names = false;
};

struct RunResult {
  std::vector<Tensor> fetched;   // one per fetch; invalid for NoOp
  // Node ids in execution order (a node in a loop once per run of it),
  // kept only where node times are (set_record_node_times, or events): a
  // loop of a million iterations would hold millions.
  std::vector<int> executed;
  std::vector<CopyRecord> copies;
  std::vector<double> node_ms;   // per node id: wall time of its kernel (set_record_node_times or events)
  std::vector<NodeEvent> events;  // in execution order, with the initializers' runs (set_record_events)
  int64_t start_ns = 0, end_ns = 0;
};

// How tensors cross the tasks of a cluster run (TensorFlow's remote
// rendezvous): the executor of each task runs its own nodes, sends what
// other tasks read and receives what it reads from them. `transfer` is the
// output's slot (executor.h), the same on both sides. A tensor whose shape
// the graph leaves open (a fed batch) is sent with `dynamic_shape`: its
// dimensions travel first, and the receiver, which knows the graph too,
// expects them.
class TensorChannel {
 public:
  virtual ~TensorChannel() = default;
  virtual int local_task() const = 0;
  virtual int master_task() const = 0;  // receives the fetched results
  // Never blocks; the tensor is kept alive until the send completes.
  virtual Status Send(int to_task, int transfer, const Tensor& tensor, bool dynamic_shape) = 0;
  // Blocks until the tensor arrives (bounded by the operation timeout); host memory.
  // `name` (the producer's) is for messages; `shape` is unused when dynamic.
  virtual StatusOr<Tensor> Receive(int from_task, int transfer, std::string_view name, DType dtype,
                                   const Shape& shape, bool dynamic_shape) = 0;
  // Waits until every send has completed.
  virtual Status Flush() = 0;

  // A graph with control flow: every task follows the same frames and
  // iterations in the same order (frame_propagator.cc), and the task that
  // runs a node tells each task that needs it the node's outcome in one
  // iteration: whether each output came out live (a Switch leaves one
  // dead) and the value of those it reads (`values[i]` set, host memory).
  // `node` (its id) names the transfer; `where` names its frames and their
  // iterations, the frame and iteration parts of TensorFlow's rendezvous
  // keys, and is checked on arrival: both sides must mean the same run of
  // the node. Send never blocks; Receive is bounded like Receive.
  virtual Status SendOutcome(int to_task, int node, const std::string& where, const std::vector<bool>& live,
                             const std::vector<Tensor>& values) = 0;
  virtual Status ReceiveOutcome(int from_task, int node, std::string_view name, const std::string& where,
                                std::vector<bool>* live, std::vector<Tensor>* values) = 0;
};

// The kernel tfrun runs for `node` placed on `device`, by the rule every run
// plans with: ops whose output TensorFlow keeps in host memory run the
// host's kernel, an XLA device the kernels of the device whose memory it
// uses, a simulated GPU the host's (unless `as_real` asks what a real GPU
// of that name would run: `tfrun ops --coverage`). `fn` is null where tfrun
// has no kernel, also for an output of a dtype tfrun does not hold.
struct KernelChoice {
  KernelFn fn = nullptr;
  std::string kernel_type;  // the device type whose kernel it is
};
KernelChoice ChooseKernel(const Graph& graph, const Node& node, const Device& device, const KernelRegistry& kernels,
                          bool as_real = false);

// The nodes running `wanted` needs: their producers and what they read,
// through every edge that no `fed` output (node, index) replaces, and
// every control edge but from an IteratorGetNext whose every output is
// fed (its feeds stand for it: tf.data's iterator only Python can run).
std::vector<bool> NeededNodes(const Graph& graph, const std::vector<NodeOutput>& wanted,
                              const std::set<std::pair<int, int>>& fed);

class Executor {
 public:
  Executor(const Graph& graph, const DeviceSet& devices, const Placement& placement,
           const KernelRegistry& kernels);

  // Runs `fetch`, reading `feeds` instead of running their producers.
  // When they read a Variable, the graph's `init` runs first, as a TF1
  // program runs sess.run(init) before using them. In a cluster run only
  // the master's result holds the fetched tensors.
  // `targets` run in the same run, for their effects (sess.run([loss,
  // train]): one step of a training loop, its random ops drawn once).
  StatusOr<RunResult> Run(const std::vector<NodeOutput>& fetch, const std::vector<Feed>& feeds = {},
                          const std::vector<int>& targets = {});
  // Runs nodes for their effects (sess.run(init)): nothing is kept.
  // The session's resources (variables, queues) as the runs left them.
  const VariableStore& variables() const { return *store_; }
  VariableStore& mutable_variables() { return *store_; }
  // Runs with `store` instead of a store of its own (a function's body
  // reads and writes its caller's variables); it must outlive the runs.
  void set_variables(VariableStore* store) { store_ = store; }
  // What call nodes (PartitionedCall) run their functions with; null:
  // they fail. It must outlive the runs.
  void set_function_runtime(FunctionRuntime* functions) { functions_ = functions; }
  Status RunTargets(const std::vector<int>& targets, const std::vector<Feed>& feeds = {});

  // Fails, before anything runs, when a node that running `targets` and
  // then `fetch` would execute here is placed where tfrun has no kernel
  // for it (TensorFlow has one, or the placer would not have put it
  // there): one error naming every such node, its op, dtype and device.
  Status CheckKernels(const std::vector<NodeOutput>& fetch, const std::vector<int>& targets,
                      const std::vector<Feed>& feeds);

  void set_node_error_style(NodeErrorStyle style) { error_style_ = style; }
  // Whether runs record RunResult::events (for --trace): a plain run pays
  // nothing for them (a 100,000-node run would hold 9 MB more).
  void set_record_events(bool record) { record_events_ = record; }
  // Each run fails with DeadlineExceededError once `seconds` have passed
  // since it started (--timeout; 0: no bound): a while loop may never end.
  void set_timeout(double seconds) { timeout_seconds_ = seconds; }
  // Whether runs time each node (RunResult::node_ms, for --benchmark): two
  // clock reads a node, as much as a scalar kernel costs.
  void set_record_node_times(bool record) { record_node_times_ = record; }

  // How many of a run's nodes may run at the same time (1, the default:
  // one at a time, in run order). Concurrent runs need a run without
  // control flow, no cluster, and every node on a CPU; nodes that change
  // shared state (node_effects.h) still run alone and in run order, and
  // kernels on several threads take turns (MultiThreadedSection), so a run
  // computes what it computes one node at a time, bit for bit.
  void set_inter_op_threads(int threads) { inter_op_threads_ = threads; }

  // TensorFlow's 0 ("choose") for both thread counts, for runs of `fetch`
  // and `targets` on a machine of `cores`: nodes at once (`cores` inter-op
  // threads) with one thread a kernel where such runs can overlap and
  // their estimated work (EstimatedWidth) is at least `cores` times their
  // longest chain's, as two towers' are on two cores; else one node at a time
  // with kernels on every core (inter-op 1, intra-op 0). From the graph
  // alone, never from timings: a program's values depend on its kernels'
  // thread counts (oneDNN's sums), never on the machine's load.
  struct ThreadChoice {
    int inter_op = 1;
    int intra_op = 0;  // 0: one per core
    double width = 1;  // EstimatedWidth; 0 where nodes cannot run at once
  };
  ThreadChoice ChooseThreads(const std::vector<NodeOutput>& fetch, const std::vector<int>& targets,
                             const std::vector<Feed>& feeds, int cores);
  // Where nodes run at once with fewer kernel threads than the pool has:
  // the threads a node gets where nothing can run beside it, every node of
  // a segment that is one chain (a node that changes shared state, the
  // steps between two such) (0: the process's count). Set with the chosen
  // threads; a program's values stay the same on every run.
  void set_chain_kernel_threads(int threads) { chain_kernel_threads_ = threads; }

  // Whether runs fuse chains of large float32 elementwise nodes into the
  // node that reads them, where the device's backend can
  // (elementwise_fusion.h; on by default). Values are the same either way,
  // bit for bit; tests compare the two.
  void set_fuse_elementwise(bool fuse) {
    fuse_elementwise_ = fuse;
    run_sets_.clear();
  }

  // A cluster run: this process runs the nodes placed on devices of task
  // channel->local_task() and exchanges tensors with the other tasks.
  void set_channel(TensorChannel* channel) { channel_ = channel; }

 private:
  // One run's bookkeeping: its result, and the device work it queued
  // (each queue's spans). A run that fails still settles every queue it
  // used: its queued work is waited for and its spans forgotten, so the
  // next run starts clean.
  struct RunState {
    RunResult* result = nullptr;
    std::map<DeviceQueue*, std::vector<std::pair<int, int>>> spans;  // (span, node id)
    std::map<DeviceQueue*, std::vector<size_t>> span_events;          // the spans' entries in result->events
    std::map<DeviceQueue*, int64_t> queue_anchor_ns;                  // host time of each queue's first span
    bool settled = false;                                             // FinishQueues ran
    // Guards what nodes running at once append to `result` (executed,
    // events, copies); the spans are a real GPU's, whose runs are never
    // concurrent.
    std::mutex records;
    // The run's fusion roles by node id (its RunSet's; null: none fused).
    const std::vector<FusionRole>* fusion = nullptr;
    ~RunState();
  };
  // One run's node outputs by slot (SlotOf) and their bookkeeping; nodes
  // running at once share it under the scheduler's lock.
  struct Slots {
    std::vector<Tensor> outputs;
    std::vector<bool> fed;   // consumers read the fed value; its producer's is dropped
    std::vector<int> uses;   // reads here still to come (a kept fetch holds one)
    // Each output's copies into other memories: made once per (output,
    // memory), dropped with the output.
    std::vector<std::vector<std::pair<Allocator*, Tensor>>> copies;
  };
  // Node `node`'s inputs in the memories its kernel reads (PrepareInput),
  // or the error of reading one before it has a value.
  // `forward`: an input read for the last time, in its producer's memory
  // and held by nothing else, is moved out of its slot, so the kernel may
  // write its output there (KernelContext::ForwardOrAllocateOutput). Where
  // nodes run at once, under the scheduler's lock: a last read means every
  // other reader's kernel has ended and let go of it (RunKernel drops a
  // kernel's inputs when it returns).
  Status GatherInputs(const Node& node, Slots* slots, RunState* run, std::vector<Tensor>* inputs,
                      bool forward = false);
  // Keeps what `node` produced (not its fed outputs, nor those nothing
  // reads), then drops each input read for the last time, with its copies.
  void StoreOutputs(const Node& node, std::vector<Tensor>* produced, Slots* slots);
  void ReleaseInputs(const Node& node, Slots* slots);
  // The node runner both propagators share. PrepareInput moves input `i`
  // of `node` into the memory its kernel reads: `input` itself, or a copy
  // (kept in `made`, when given, so each memory gets one). RunKernel runs
  // the kernel on prepared inputs and returns one tensor per output (unset
  // for a Switch's dead side), checked against the declared dtypes, with
  // the node's time and event. FinishQueues waits for every queue the run
  // used and puts the device times in the result.
  StatusOr<Tensor> PrepareInput(const Node& node, size_t i, const Tensor& input,
                                std::vector<std::pair<Allocator*, Tensor>>* made, RunState* run);
  // `inputs` is left empty, `outputs` resized to the node's outputs; both
  // keep their storage across calls.
  // A collective member's run passes its group's result slot and, for the
  // group's first member, every member's input (KernelContext).
  Status RunKernel(const Node& node, std::vector<Tensor>* inputs, RunState* run, std::vector<Tensor>* outputs,
                   Tensor* collective_result = nullptr, const std::vector<Tensor>* collective_inputs = nullptr);
  Status FinishQueues(RunState* run);
  static StatusOr<Tensor> OnHost(const Tensor& tensor);
  // For input `input` of `node` found empty: a reference variable's output
  // read before its Assign ran in the same run (a consumer behind a control
  // edge on the initializer) is the variable as the store holds it now, as
  // TensorFlow's ref aliases the variable; empty where it still has no
  // value, or the producer is no VariableV2. Only for empty inputs: looking
  // at every input would cost the hot loop a handle copy each.
  Tensor CurrentRef(const Node& node, size_t input) const;
  Status Uninitialized(const Node& node, int producer) const;
  void AssignSlots();

  // Runs the nodes marked in `needed` (what `fetch` reads); keeps the
  // fetched outputs when `keep`. Those `unread` marks (empty: none) run no
  // kernel: a live one's outputs are live and empty, read by no kernel. A
  // run without control flow runs in run order (run_order_), or
  // concurrently; one with it on the frame-aware propagator (RunFrames,
  // frame_propagator.cc), as TensorFlow's executor chooses for the
  // partition it runs.
  Status RunFrames(const std::vector<NodeOutput>& fetch, const std::vector<bool>& needed,
                   const std::vector<bool>& unread, const std::vector<Feed>& feeds, RunResult* result, bool keep);
  // `fusion`: the run's fusion roles (null: none).
  Status RunNodes(const std::vector<NodeOutput>& fetch, const std::vector<bool>& needed,
                  const std::vector<bool>& unread, const std::vector<Feed>& feeds, RunResult* result, bool keep,
                  const std::vector<FusionRole>* fusion = nullptr);
  // RunNodes on several threads (set_inter_op_threads, executor_concurrent.cc):
  // false in `*ran` when this run cannot (then nothing ran).
  // A run's collectives (collectives.h): its groups, each member's group
  // (-1: none) by node id, each group's result (made by the first member
  // to run) and the order in which every member runs after all its group
  // reads. For the `running` nodes, their keys read from the fed slots.
  struct CollectivePlan {
    std::vector<CollectiveGroup> groups;
    std::vector<int> group_of;
    std::vector<Tensor> results;
    std::vector<int> order;
  };
  StatusOr<CollectivePlan> PlanCollectives(const std::vector<bool>& running, const Slots& slots) const;
  Status RunConcurrently(const std::vector<bool>& needed, const std::vector<bool>& unread, Slots* slots,
                         RunState* run, bool* ran);
  // Whether every node of a run that runs a kernel is on a CPU of this
  // machine (not a GPU, not simulated): RunConcurrently's condition.
  bool OnHostCpusOnly(const std::vector<bool>& needed, const std::vector<bool>& unread) const;
  // A run's estimated work over that of its longest chain (1: a chain;
  // above N for N equal towers): each node's cost by its op's kind
  // (NodeCost in executor_concurrent.cc), a node that changes shared
  // state after everything before it in run order (a variable's writer
  // too, which RunConcurrently may start sooner: the estimate errs towards
  // one node at a time).
  double EstimatedWidth(const std::vector<bool>& needed, const std::vector<bool>& unread);
  Status RunInitializers(const std::vector<bool>& needed, RunResult* result);
  // Whether the `needed` nodes hold control flow (Switch, Merge, a loop's
  // nodes): TensorFlow's executor looks at the graph it runs, pruned to
  // the run's fetches, the same way.
  bool NeedsFrames(const std::vector<bool>& needed) const;
  // Whether a run's kernels include collectives (collectives.h), which run
  // one node at a time in one process without control flow.
  bool RunsCollectives(const std::vector<bool>& needed, const std::vector<bool>& unread) const;
  // What runs first when the `needed` nodes read a Variable: every
  // Assign (the graph's init); empty when they read none, or when the
  // graph's variables wait for its own init (Graph::variables_start_initialized).
  std::vector<NodeOutput> InitializersFor(const std::vector<bool>& needed) const;
  // The memory a node's kernel reads and writes: its device's, or the
  // host's for kernels registered with HostMemory (int32 on GPUs).
  Allocator* MemoryFor(const Node& node) const;
  // The nodes `fetch` needs: its producers and what they read, through
  // every edge that no feed replaces.
  std::vector<bool> Needed(const std::vector<NodeOutput>& fetch, const std::vector<Feed>& feeds) const;
  // Grappler's nodes_to_preserve for a run of `wanted` with `feeds`: the
  // fetched, target and fed nodes (by node id), and the fed outputs.
  struct Preserved {
    std::vector<bool> nodes;
    std::set<std::pair<int, int>> fed;
  };
  Preserved PreservedBy(const std::vector<NodeOutput>& wanted, const std::vector<Feed>& feeds) const;
  // Of the nodes a run `needed`, the values nothing reads that TensorFlow's
  // Grappler makes NoOps (unread_values.h): they run no kernel.
  std::vector<bool> Unread(const std::vector<bool>& needed, const Preserved& preserved) const;
  // MayBecomeNoOp of each node, filled by the first Unread.
  mutable std::vector<bool> may_become_noop_;
  // ChangesSharedState of each node, filled by FindSharedStateChanges
  // (the first concurrent run or width estimate), with, by node id:
  // whether all the node changes is reference variables
  // (WrittenReferenceVariables), and then the other nodes that may hold
  // one of their buffers (VariableBufferHolders), in id order. Such a
  // writer keeps its run-order place among those alone.
  std::vector<bool> changes_shared_state_;
  std::vector<bool> writes_variables_only_;
  std::vector<std::vector<int>> variable_conflicts_;
  void FindSharedStateChanges();
  // Needed and Unread of one run's wanted outputs (fetches, then targets)
  // and fed outputs, which depend on nothing else: a training loop asks for
  // the same sets every step. The few most recent are kept (a step, its
  // queue runners' enqueues); a copy is returned, the bits are few.
  struct RunSet {
    std::vector<NodeOutput> wanted;
    std::vector<NodeOutput> fed;
    std::vector<bool> needed;
    std::vector<bool> unread;
    std::shared_ptr<const std::vector<FusionRole>> fusion;  // null: nothing fused
  };
  // The fusion roles of a run of `wanted` (PlanElementwiseFusion), or null
  // where none fuses: a run with control flow or across a cluster's tasks
  // fuses nothing, and only devices of this machine's CPUs fuse.
  std::shared_ptr<const std::vector<FusionRole>> PlanFusion(const std::vector<bool>& needed,
                                                            const std::vector<bool>& unread,
                                                            const Preserved& preserved);
  RunSet RunSetFor(const std::vector<NodeOutput>& wanted, const std::vector<Feed>& feeds);
  std::vector<RunSet> run_sets_;  // most recently used first
  // Output slots: node `id`'s output i is slot first_slot_[id] + i.
  int SlotOf(NodeOutput output) const { return first_slot_[output.node] + output.index; }
  // "\t [[{{node x}}]]" or "\t [[Node: x = ...]]" for op errors.
  std::string NodeLine(const Node& node) const;
  // The task whose process runs node `id` (0 without a channel).
  int TaskOf(int id) const;

  // How a node runs, resolved on its first run: its kernel (null when none
  // is built for `kernel_type`) and the memory it reads and writes.
  struct NodePlan {
    KernelFn kernel = nullptr;
    Allocator* memory = nullptr;
    std::string kernel_type;
    // Each output's declared dtype, where the NodeDef declares one tfrun
    // stores (not a resource): what the kernel's outputs must be, so that
    // no consumer reads one dtype's bytes as another's.
    std::vector<std::optional<DType>> output_dtypes;
    // The memory each input is read from: the kernel's, or the host's for
    // a HostMemory input (an axis). Looked up once: a loop runs a node
    // many times.
    std::vector<Allocator*> input_memory;
    // Whether the kernel queues work on the device's own queue (a real
    // GPU's kernels, not handle-only or host-memory ones): timed there.
    bool queues_device_work = false;
    // MakesFreshOutputs on a CPU: checked after every run of the kernel,
    // as concurrent runs rely on it.
    bool fresh_outputs = false;
  };
  const NodePlan* PlanFor(const Node& node);

  const Graph& graph_;
  const DeviceSet& devices_;
  const Placement& placement_;
  const KernelRegistry& kernels_;
  const bool has_control_flow_;
  const bool has_collectives_;  // any collective node (collectives.h), in any run
  // The CPU backend's fusion kernels (null where none are bound: nothing fuses).
  const KernelRegistry::FusionKernels cpu_fusion_;
  TensorChannel* channel_ = nullptr;
  bool variables_initialized_ = false;  // the same on every task: runs stay in step
  VariableStore variables_;
  VariableStore* store_ = &variables_;  // the runs' store: its own, or set_variables'
  FunctionRuntime* functions_ = nullptr;
  DeviceConstants device_constants_;        // Const values uploaded to a device, by node id
  RandomGenerators random_generators_;      // random nodes' generators, kept across runs
  std::unique_ptr<StackStore> stacks_;      // the current run's stacks (StackV2)
  std::vector<NodePlan> plans_;             // by node id
  std::vector<int> first_slot_;             // by node id, plus the total at the end
  std::vector<int> run_order_;              // node ids in an order that runs inputs first (but NextIteration's)
  NodeErrorStyle error_style_;
  bool record_events_ = false;
  bool record_node_times_ = false;
  int inter_op_threads_ = 1;
  int chain_kernel_threads_ = 0;
  bool fuse_elementwise_ = true;
  // Each node's kernel time in its last concurrent run, in microseconds (0:
  // none yet), by node id; written by the thread that ran the node, read
  // when the next concurrent run plans its order (RunConcurrently). Order
  // only: what runs at once never changes a value.
  std::vector<float> last_kernel_micros_;
  double timeout_seconds_ = 0;
  // When the current run must end (Run sets it from timeout_seconds_).
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  void StartDeadline();
  Status PastDeadline() const;
};

}  // namespace tfrun
