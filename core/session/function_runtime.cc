#include "core/session/function_runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "core/graph/function_library.h"
#include "core/passes/pass_registry.h"
#include "core/passes/pin_args_and_rets.h"

namespace tfrun {
namespace {

// Calls nested deeper than this are refused: a function that calls itself
// would instantiate forever (TensorFlow's own recursion ends in a crash).
constexpr int kMaxCallDepth = 64;

int64_t IndexOf(const Graph& graph, const Node& node) {
  return std::strtoll(graph.AttrText(node, "index").c_str(), nullptr, 10);
}

}  // namespace

StatusOr<SessionFunctionRuntime::Instance*> SessionFunctionRuntime::Instantiate(const Graph& graph,
                                                                               const Node& call_node,
                                                                               const std::string& function,
                                                                               const std::string& device, bool native) {
  auto& slot = instances_[{function, device, native ? reinterpret_cast<uintptr_t>(&call_node) : 0}];
  if (slot != nullptr) return slot.get();
  auto instance = std::make_unique<Instance>();
  Graph::Call call;
  call.function = function;
  call.device = device;
  const NodeAttrs* attrs =
      native && call_node.properties >= 0 ? &graph.properties[call_node.properties].attrs : nullptr;
  TFRUN_ASSIGN_OR_RETURN(instance->body, CallGraph(graph, call, attrs));
  TFRUN_RETURN_IF_ERROR(RunPrePlacementPasses(&instance->body, &devices_, /*do_function_inlining=*/true));
  TFRUN_RETURN_IF_ERROR(
      PlaceGraph(instance->body, devices_, /*allow_soft_placement=*/true, profile_, &instance->placement, {}, device));
  std::vector<std::pair<int64_t, int>> args;
  std::vector<std::pair<int64_t, NodeOutput>> results;
  for (const Node& node : instance->body.nodes) {
    if (node.op == "_Arg" || node.op == "_DeviceArg") args.emplace_back(IndexOf(instance->body, node), node.id);
    if ((node.op == "_Retval" || node.op == "_DeviceRetval") && !node.inputs.empty()) {
      results.emplace_back(IndexOf(instance->body, node), node.input(0));
    }
  }
  std::sort(args.begin(), args.end());
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [index, id] : args) instance->args.push_back(id);
  for (const auto& [index, output] : results) instance->results.push_back(output);
  instance->executor = std::make_unique<Executor>(instance->body, devices_, instance->placement, kernels_);
  instance->executor->set_function_runtime(this);
  slot = std::move(instance);
  return slot.get();
}

StatusOr<std::vector<Tensor>> SessionFunctionRuntime::Call(const Graph& graph, const Node& call,
                                                           const std::string& device, const std::vector<Tensor>& args,
                                                           VariableStore* variables) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const std::string function = CalledFunction(graph, call);
  if (function.empty()) return BadInput(fmt::format("{} '{}' names no library function", call.op, call.name));
  if (depth_ >= kMaxCallDepth) {
    return BadInput(fmt::format("{} '{}': calls nested more than {} deep (does '{}' call itself?)", call.op,
                                call.name, kMaxCallDepth, function));
  }
  ++depth_;
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{depth_};
  const bool native = call.op != "PartitionedCall" && call.op != "StatefulPartitionedCall";
  StatusOr<Instance*> instance = Instantiate(graph, call, function, device, native);
  if (!instance.ok()) {
    return Status(instance.status().kind(),
                  fmt::format("function '{}' for {} '{}': {}", function, call.op, call.name, instance.status().message()));
  }
  Instance& it = **instance;
  if (args.size() != it.args.size()) {
    return BadInput(fmt::format("{} '{}': function '{}' takes {} arguments, given {}", call.op, call.name, function,
                                it.args.size(), args.size()));
  }
  std::vector<Feed> feeds;
  for (size_t i = 0; i < args.size(); ++i) feeds.push_back(Feed{NodeOutput{it.args[i], 0}, args[i]});
  it.executor->set_variables(variables);
  StatusOr<RunResult> result = it.executor->Run(it.results, feeds);
  if (!result.ok()) return result.status();
  return std::move(result->fetched);
}

}  // namespace tfrun
