#include "core/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

namespace tfrun {

std::vector<bool> Executor::Needed(const std::vector<int>& targets) const {
  std::vector<bool> needed(graph_.nodes.size(), false);
  std::vector<int> stack = targets;
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = true;
    const Node& n = graph_.nodes[id];
    stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
    stack.insert(stack.end(), n.control_inputs.begin(), n.control_inputs.end());
  }
  return needed;
}

Allocator* Executor::MemoryFor(const Node& node) const {
  const Device& device = devices_[placement_.device_of[node.id]];
  return UsesHostMemory(node, device.type) ? CpuAllocator() : device.allocator;
}

const Executor::NodePlan* Executor::PlanFor(const Node& node) {
  NodePlan& plan = plans_[node.id];
  if (plan.kernel != nullptr) return &plan;
  const Device& device = devices_[placement_.device_of[node.id]];
  // Simulated GPUs, and ops registered with HostMemory, run host kernels.
  const std::string kernel_type =
      device.simulated || UsesHostMemory(node, device.type) ? std::string(kCpu) : device.type;
  plan.kernel = kernels_.Find(node.op, kernel_type);
  plan.memory = MemoryFor(node);
  plan.kernel_type = kernel_type;
  return &plan;
}

Status Executor::RunNodes(const std::vector<int>& targets, const std::vector<bool>& needed, RunResult* result,
                          bool keep_targets) {
  const size_t n = graph_.nodes.size();
  if (plans_.size() != n) plans_.assign(n, NodePlan());
  // Remaining uses of each output; fetched outputs hold one more.
  std::vector<int> uses(n, 0);
  for (size_t id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    for (int in : graph_.nodes[id].inputs) ++uses[in];
  }
  if (keep_targets) {
    for (int t : targets) ++uses[t];
  }
  std::vector<Tensor> outputs(n);
  // An output's copies into other memories, by producer: made once per
  // (producer, memory), dropped with the output.
  std::vector<std::vector<std::pair<Allocator*, Tensor>>> copies(n);
  // Asynchronous devices time each node's work on the device, not launch.
  std::map<DeviceQueue*, std::vector<std::pair<int, int>>> spans;  // (span, node id)
  result->node_ms.resize(n, 0.0);
  // Node ids follow the file, which is a topological order.
  for (size_t id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    const Node& node = graph_.nodes[id];
    const Device& device = devices_[placement_.device_of[id]];
    const NodePlan& plan = *PlanFor(node);
    if (plan.kernel == nullptr) {
      return RuntimeError(fmt::format("{}: node '{}': no {} kernel is built for {}", graph_.Where(node.location),
                                      node.name, plan.kernel_type, node.op));
    }
    const auto started = std::chrono::steady_clock::now();
    Allocator* memory = plan.memory;
    DeviceQueue* queue = device.queue.get();  // set only for real GPUs
    int span = -1;
    if (queue != nullptr) {
      TFRUN_ASSIGN_OR_RETURN(span, queue->BeginSpan());
      spans[queue].push_back({span, static_cast<int>(id)});
    }
    KernelContext context{node, {}, memory, device.name, &variables_, &device_constants_, device.context.get(),
                          Tensor()};
    context.inputs.reserve(node.inputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int producer = node.inputs[i];
      const Tensor& input = outputs[producer];
      // Assign writes through its reference input; everything else reads.
      if (!input.is_valid()) {
        if (node.op == "Assign" && i == 0) {
          context.inputs.push_back(input);
          continue;
        }
        return RuntimeError(
            fmt::format("{}: node '{}': FailedPreconditionError: Attempting to use uninitialized "
                        "value {}",
                        graph_.Where(node.location), node.name, graph_.nodes[producer].name));
      }
      if (input.allocator() == memory || input.num_elements() == 0) {
        context.inputs.push_back(input);
        continue;
      }
      // The edge crosses memories: copy once per (producer, memory).
      std::vector<std::pair<Allocator*, Tensor>>& made = copies[producer];
      auto copy = std::find_if(made.begin(), made.end(), [&](const auto& c) { return c.first == memory; });
      if (copy == made.end()) {
        StatusOr<Tensor> moved = input.CopyTo(memory, device.name);
        if (!moved.ok()) {
          return Status(moved.status().kind(), fmt::format("{}: node '{}' on {}: {}", graph_.Where(node.location),
                                                           node.name, device.name, moved.status().message()));
        }
        result->copies.push_back({producer, node.id, input.allocator()->name(), memory->name(), input.num_bytes()});
        made.emplace_back(memory, std::move(*moved));
        copy = made.end() - 1;
      }
      context.inputs.push_back(copy->second);
    }
    Status s = plan.kernel(context);
    if (!s.ok()) {
      return Status(s.kind(), fmt::format("{}: node '{}' on {}: {}", graph_.Where(node.location), node.name,
                                          device.name, s.message()));
    }
    if (queue != nullptr) TFRUN_RETURN_IF_ERROR(queue->EndSpan(span));
    result->node_ms[id] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    result->executed.push_back(static_cast<int>(id));
    outputs[id] = std::move(context.output);
    context.inputs.clear();
    for (int in : node.inputs) {
      if (--uses[in] == 0) {  // last use: free it and its copies
        outputs[in] = Tensor();
        std::vector<std::pair<Allocator*, Tensor>>().swap(copies[in]);  // its memory too, not just its tensors
      }
    }
    if (uses[id] == 0) outputs[id] = Tensor();
  }
  // The run ends when every device's work has (Session::Run returns then).
  for (auto& [queue, node_spans] : spans) {
    TFRUN_ASSIGN_OR_RETURN(std::vector<double> device_ms, queue->Finish());
    for (auto [span, id] : node_spans) {
      if (span < static_cast<int>(device_ms.size())) result->node_ms[id] = device_ms[span];
    }
  }
  if (keep_targets) {
    // Results are read on the host: bring device-memory ones back.
    for (int t : targets) {
      const Tensor& out = outputs[t];
      if (out.is_valid() && !out.allocator()->host_accessible()) {
        TFRUN_ASSIGN_OR_RETURN(Tensor host, out.CopyTo(CpuAllocator(), "/job:localhost/replica:0/task:0/device:CPU:0"));
        result->fetched.push_back(host);
      } else {
        result->fetched.push_back(out);
      }
    }
  }
  return Status::Ok();
}

StatusOr<RunResult> Executor::Run(const std::vector<int>& fetch) {
  RunResult result;
  const std::vector<bool> needed = Needed(fetch);
  bool reads_variable = false;
  std::vector<int> assigns;
  for (const Node& node : graph_.nodes) {
    reads_variable = reads_variable || (needed[node.id] && node.op == "VariableV2");
    if (node.op == "Assign") assigns.push_back(node.id);
  }
  if (reads_variable && variables_.empty()) {
    TFRUN_RETURN_IF_ERROR(RunNodes(assigns, Needed(assigns), &result, false));
  }
  TFRUN_RETURN_IF_ERROR(RunNodes(fetch, needed, &result, true));
  return result;
}

}  // namespace tfrun
