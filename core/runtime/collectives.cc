#include "core/runtime/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <queue>
#include <tuple>

namespace tfrun {
namespace {

// RingAlg's bounds (ring_alg.cc): a chunk of at most 4 MiB before a second
// subdivision, at most 2 subdivisions per device.
constexpr int64_t kMaxChunkBytes = 4 * 1024 * 1024;
constexpr int kMaxSubdivsPerDevice = 2;
// EIGEN_MAX_ALIGN_BYTES of TensorFlow's x86 wheels: chunks start on
// 64-byte boundaries (CollectiveAdapter::AlignedChunkElts).
constexpr int64_t kChunkAlignBytes = 64;

int64_t AlignedChunkElements(int64_t element_bytes, int64_t total, int64_t chunks) {
  const int64_t base = (total + chunks - 1) / chunks;
  if (kChunkAlignBytes <= element_bytes) return base;
  // As TensorFlow rounds up: a chunk already aligned still gains a whole
  // alignment (its diff is then kChunkAlignBytes).
  const int64_t bytes = base * element_bytes;
  const int64_t diff =
      bytes < kChunkAlignBytes ? kChunkAlignBytes - bytes : kChunkAlignBytes - bytes % kChunkAlignBytes;
  return base + diff / element_bytes;
}

// The device order of each subdivision's ring (RingAlg::InitializeCollectiveParams
// for one task): subdivision s starts at offset 0, -stride, ... (a negative
// offset reverses the order).
std::vector<std::vector<int>> SubdivPermutations(int64_t group_size, int64_t bytes) {
  int subdivs = 0;
  int64_t chunk = 0;
  const int max_subdivs = kMaxSubdivsPerDevice * static_cast<int>(group_size);
  do {
    ++subdivs;
    chunk = bytes / (group_size * subdivs);
  } while (chunk > kMaxChunkBytes && subdivs < max_subdivs);
  int stride = static_cast<int>(group_size) / subdivs;
  if (stride == 0) stride = 1;
  std::vector<std::vector<int>> perms(subdivs);
  for (int s = 0; s < subdivs; ++s) {
    const int offset = stride * s;
    const bool reverse = s % 2 == 1;  // TensorFlow's offset is -offset there
    for (int di = 0; di < group_size; ++di) {
      const int shifted = (di + offset) % static_cast<int>(group_size);
      perms[s].push_back(reverse ? static_cast<int>(group_size) - (shifted + 1) : shifted);
    }
  }
  return perms;
}

enum class MergeOp { kAdd, kMul, kMin, kMax };

std::optional<MergeOp> MergeOpNamed(std::string_view name) {
  if (name == "Add") return MergeOp::kAdd;
  if (name == "Mul") return MergeOp::kMul;
  if (name == "Min") return MergeOp::kMin;
  if (name == "Max") return MergeOp::kMax;
  return std::nullopt;
}

template <typename T, MergeOp Op>
T Merge(T own, T received) {
  if constexpr (Op == MergeOp::kAdd) return own + received;
  if constexpr (Op == MergeOp::kMul) return own * received;
  if constexpr (Op == MergeOp::kMin) return std::min(own, received);
  if constexpr (Op == MergeOp::kMax) return std::max(own, received);
}

template <typename T, MergeOp Op>
void ReduceTyped(const std::vector<Tensor>& inputs, bool divide, Tensor* out) {
  const int64_t n = static_cast<int64_t>(inputs.size());
  const int64_t total = out->num_elements();
  if (total == 0) return;
  const auto perms = SubdivPermutations(n, total * static_cast<int64_t>(sizeof(T)));
  const int64_t subdivs = static_cast<int64_t>(perms.size());
  const int64_t fields = n * subdivs;
  const int64_t chunk = AlignedChunkElements(sizeof(T), total, fields);
  T* result = out->data<T>();
  for (int64_t field = 0; field < fields; ++field) {
    const int64_t begin = std::min(total, field * chunk);
    const int64_t end = std::min(total, begin + chunk);
    const int64_t c = field / subdivs;  // its chunk index: the rank it starts at
    const std::vector<int>& perm = perms[field % subdivs];
    for (int64_t e = begin; e < end; ++e) {
      T acc = inputs[perm[c]].data<T>()[e];
      for (int64_t k = 1; k < n; ++k) acc = Merge<T, Op>(inputs[perm[(c + k) % n]].data<T>()[e], acc);
      if (divide) acc = acc / static_cast<T>(n);
      result[e] = acc;
    }
  }
}

template <typename T>
void ReduceAs(const std::vector<Tensor>& inputs, MergeOp op, bool divide, Tensor* out) {
  switch (op) {
    case MergeOp::kAdd:
      return ReduceTyped<T, MergeOp::kAdd>(inputs, divide, out);
    case MergeOp::kMul:
      return ReduceTyped<T, MergeOp::kMul>(inputs, divide, out);
    case MergeOp::kMin:
      return ReduceTyped<T, MergeOp::kMin>(inputs, divide, out);
    case MergeOp::kMax:
      return ReduceTyped<T, MergeOp::kMax>(inputs, divide, out);
  }
}

// The members of a group read tensors of another dtype or shape.
Status Mismatch(const std::string& node, const Tensor& first, const Tensor& other) {
  return RuntimeError(
      fmt::format("InternalError: Shape mismatch in the collective instance: the members of {}'s "
                  "group read {} {} and {} {}",
                  node, Name(first.dtype()), ShapeDebugString(first.shape()), Name(other.dtype()),
                  ShapeDebugString(other.shape())));
}

}  // namespace

bool IsCollective(const Node& node) {
  return node.op == "CollectiveReduceV2" || node.op == "CollectiveGatherV2" || node.op == "NcclAllReduce";
}

StatusOr<std::vector<CollectiveGroup>> ResolveCollectiveGroups(const Graph& graph, const std::vector<bool>& needed,
                                                               const KnownScalar& known,
                                                               const std::function<std::string(int)>& device_name,
                                                               const CollectiveError& fail) {
  // By (an NcclAllReduce's shared_name, group key, instance key): the
  // keyed groups have no name, the named ones no keys.
  std::map<std::tuple<std::string, int64_t, int64_t>, CollectiveGroup> groups;
  for (const Node& node : graph.nodes) {
    if (!needed[node.id] || !IsCollective(node)) continue;
    if (node.op == "NcclAllReduce") {
      const std::string name = graph.AttrText(node, "shared_name");
      const int64_t size = std::strtoll(graph.AttrText(node, "num_devices").c_str(), nullptr, 10);
      CollectiveGroup& group = groups[{name, 0, 0}];
      if (!group.members.empty() && group.group_size != size) {
        return fail(node, fmt::format("InternalError: NcclAllReduce {} has num_devices {} and {} has {} in the "
                                      "group '{}'",
                                      graph.nodes[group.members[0]].name, group.group_size, node.name, size, name));
      }
      group.group_size = size;
      group.members.push_back(node.id);
      continue;
    }
    if (node.inputs.size() < 4) {
      return fail(node, fmt::format("{} ({}) has {} inputs; it reads a tensor, group_size, group_key and "
                                    "instance_key",
                                    node.name, node.op, node.inputs.size()));
    }
    int64_t values[3];
    static constexpr const char* kNames[3] = {"group_size", "group_key", "instance_key"};
    for (int k = 0; k < 3; ++k) {
      const std::optional<int64_t> value = known(node.input(k + 1));
      if (!value) {
        return fail(node, fmt::format("{} ({}): its {} is computed by the run; tfrun groups collectives before a "
                                      "run starts, from keys that are constants or fed arguments",
                                      node.name, node.op, kNames[k]));
      }
      values[k] = *value;
    }
    if (values[0] < 1) {
      return fail(node, fmt::format("InvalidArgumentError: group_size must be positive integer but got {}\n\t "
                                    "[[{{{{node {}}}}}]]",
                                    values[0], node.name));
    }
    CollectiveGroup& group = groups[{"", values[1], values[2]}];
    if (!group.members.empty() && group.group_size != values[0]) {
      return fail(node, fmt::format("InternalError: Inconsistent group sizes: {} has group_size {} and {} has {} "
                                    "in group {} instance {}",
                                    graph.nodes[group.members[0]].name, group.group_size, node.name, values[0],
                                    values[1], values[2]));
    }
    group.group_key = values[1];
    group.instance_key = values[2];
    group.group_size = values[0];
    group.members.push_back(node.id);
  }
  std::vector<CollectiveGroup> result;
  for (auto& [keys, group] : groups) {
    std::sort(group.members.begin(), group.members.end(),
              [&](int a, int b) { return device_name(a) < device_name(b); });
    for (size_t i = 1; i < group.members.size(); ++i) {
      if (device_name(group.members[i]) == device_name(group.members[i - 1])) {
        return fail(graph.nodes[group.members[i]],
                    fmt::format("InternalError: {} and {} are members of collective group {} instance {} on "
                                "the same device {}; each member needs a device of its own",
                                graph.nodes[group.members[i - 1]].name, graph.nodes[group.members[i]].name,
                                group.group_key, group.instance_key, device_name(group.members[i])));
      }
    }
    if (static_cast<int64_t>(group.members.size()) != group.group_size) {
      const Node& first = graph.nodes[group.members[0]];
      const std::string which =
          first.op == "NcclAllReduce"
              ? fmt::format("NcclAllReduce group '{}'", graph.AttrText(first, "shared_name"))
              : fmt::format("collective group {} instance {}", group.group_key, group.instance_key);
      return fail(first, fmt::format("DeadlineExceededError: {} has group_size {} but this run holds {} of its "
                                     "members ({}); TensorFlow would wait for the others until its timeout",
                                     which, group.group_size, group.members.size(), first.name));
    }
    result.push_back(std::move(group));
  }
  return result;
}

std::vector<int> CollectiveRunOrder(const Graph& graph, const std::vector<int>& base, const std::vector<bool>& needed,
                                    const std::vector<CollectiveGroup>& groups) {
  const size_t n = graph.nodes.size();
  std::vector<int> position(n, 0);
  for (size_t i = 0; i < base.size(); ++i) position[base[i]] = static_cast<int>(i);
  // Each node's predecessors among the needed: its producers, then for a
  // member the producers of every other member.
  std::vector<std::vector<int>> successors(n);
  std::vector<int> waiting(n, 0);
  auto edge = [&](int from, int to) {
    if (!needed[from] || from == to) return;
    successors[from].push_back(to);
    ++waiting[to];
  };
  for (size_t id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    const Node& node = graph.nodes[id];
    for (int in : node.inputs) edge(in, static_cast<int>(id));
    for (int in : node.control_inputs) edge(in, static_cast<int>(id));
  }
  for (const CollectiveGroup& group : groups) {
    for (int member : group.members) {
      for (int peer : group.members) {
        if (peer == member) continue;
        const Node& p = graph.nodes[peer];
        for (int in : p.inputs) edge(in, member);
        for (int in : p.control_inputs) edge(in, member);
      }
    }
  }
  // Kahn's order, ties broken by the base order (it stays where it can).
  using Entry = std::pair<int, int>;  // (position, id)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t id = 0; id < n; ++id) {
    if (needed[id] && waiting[id] == 0) ready.emplace(position[id], static_cast<int>(id));
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int id = ready.top().second;
    ready.pop();
    order.push_back(id);
    for (int next : successors[id]) {
      if (--waiting[next] == 0) ready.emplace(position[next], next);
    }
  }
  return order;
}

StatusOr<Tensor> RingAllReduce(const std::vector<Tensor>& inputs, std::string_view merge_op, std::string_view final_op,
                               const std::string& node) {
  const std::optional<MergeOp> op = MergeOpNamed(merge_op);
  if (!op) {
    return RuntimeError(
        fmt::format("InvalidArgumentError: merge_op must be one of Min, Max, Mul, Add; got {}\n\t "
                    "[[{{{{node {}}}}}]]",
                    merge_op, node));
  }
  if (final_op != "Id" && final_op != "Div") {
    return RuntimeError(
        fmt::format("InvalidArgumentError: final_op must be one of Id, Div; got {}\n\t "
                    "[[{{{{node {}}}}}]]",
                    final_op, node));
  }
  const bool divide = final_op == "Div";
  const Tensor& first = inputs.at(0);
  for (const Tensor& t : inputs) {
    if (t.dtype() != first.dtype() || t.shape() != first.shape()) return Mismatch(node, first, t);
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(first.dtype(), first.shape()));
  switch (first.dtype()) {
    case DType::kFloat32:
      ReduceAs<float>(inputs, *op, divide, &out);
      break;
    case DType::kFloat64:
      ReduceAs<double>(inputs, *op, divide, &out);
      break;
    case DType::kInt32:
      ReduceAs<int32_t>(inputs, *op, divide, &out);
      break;
    case DType::kInt64:
      ReduceAs<int64_t>(inputs, *op, divide, &out);
      break;
    default:
      return RuntimeError(
          fmt::format("InternalError: CollectiveImplementation does not support datatype {}\n\t "
                      "[[{{{{node {}}}}}]]",
                      Name(first.dtype()), node));
  }
  return out;
}

StatusOr<Tensor> GatherAll(const std::vector<Tensor>& inputs, const std::string& node) {
  const Tensor& first = inputs.at(0);
  if (first.shape().empty()) {
    return RuntimeError(
        fmt::format("InvalidArgumentError: input should have rank > 0, received rank 0\n\t "
                    "[[{{{{node {}}}}}]]",
                    node));
  }
  Shape shape = first.shape();
  shape[0] = 0;
  for (const Tensor& t : inputs) {
    Shape rest = t.shape();
    if (t.dtype() != first.dtype() || rest.size() != first.shape().size() ||
        !std::equal(rest.begin() + 1, rest.end(), first.shape().begin() + 1)) {
      return Mismatch(node, first, t);
    }
    shape[0] += t.shape()[0];
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(first.dtype(), shape));
  char* at = static_cast<char*>(out.raw());
  for (const Tensor& t : inputs) {
    const size_t bytes = static_cast<size_t>(t.num_elements()) * Info(t.dtype()).size;
    if (bytes > 0) std::memcpy(at, t.raw(), bytes);
    at += bytes;
  }
  return out;
}

namespace {

Status CollectiveKernel(KernelContext& c) {
  if (c.collective_result == nullptr) {
    return RuntimeError(fmt::format("{} runs only as a member of its group, which the executor forms", c.node.op));
  }
  if (!c.collective_result->is_valid()) {
    const std::vector<Tensor>& inputs = *c.collective_inputs;
    if (c.node.op == "CollectiveGatherV2") {
      TFRUN_ASSIGN_OR_RETURN(*c.collective_result, GatherAll(inputs, c.node.name));
    } else if (c.node.op == "NcclAllReduce") {
      // NCCL's own order of sums is its library's; tfrun's is the ring's.
      static const std::map<std::string, std::string, std::less<>> kMergeOf = {
          {"sum", "Add"}, {"prod", "Mul"}, {"min", "Min"}, {"max", "Max"}};
      const std::string reduction = c.StringAttr("reduction", "sum");
      const auto merge = kMergeOf.find(reduction);
      if (merge == kMergeOf.end()) {
        return c.Fail(fmt::format("reduction must be one of min, max, prod, sum; got {}", reduction));
      }
      TFRUN_ASSIGN_OR_RETURN(*c.collective_result, RingAllReduce(inputs, merge->second, "Id", c.node.name));
    } else {
      TFRUN_ASSIGN_OR_RETURN(*c.collective_result, RingAllReduce(inputs, c.StringAttr("merge_op", "Add"),
                                                                 c.StringAttr("final_op", "Id"), c.node.name));
    }
  }
  // Each member's own copy: a consumer may write into its input.
  TFRUN_ASSIGN_OR_RETURN(c.output, c.collective_result->CopyTo(c.allocator, c.device_name));
  return Status::Ok();
}

}  // namespace

void BindCollectiveKernels(KernelRegistry* registry, std::string_view device_type) {
  const DTypeSet types{DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
  registry->Bind("CollectiveReduceV2", device_type, types, CollectiveKernel);
  registry->Bind("CollectiveGatherV2", device_type, types, CollectiveKernel);
  // TensorFlow has only a GPU kernel; the CPU's serves simulated GPUs.
  registry->Bind("NcclAllReduce", device_type, types, CollectiveKernel);
}

}  // namespace tfrun
