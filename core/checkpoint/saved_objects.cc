#include "core/checkpoint/saved_objects.h"

#include <fmt/format.h>

#include <deque>

#include "core/graph_def/tf_graph.pb.h"

namespace tfrun {
namespace {

constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";

std::string Describe(const Graph::SavedObjects& objects, int id) {
  const Graph::SavedObject& object = objects.objects[id];
  return object.name.empty() ? fmt::format("object {}", id) : fmt::format("'{}' (object {})", object.name, id);
}

}  // namespace

StatusOr<std::vector<std::string>> VariableCheckpointKeys(const TensorBundleReader& bundle,
                                                          const Graph::SavedObjects& objects,
                                                          const std::vector<int>& ids) {
  StatusOr<Tensor> read = bundle.Read(kObjectGraphKey, DType::kString);
  if (!read.ok()) {
    return Status(read.status().kind(), fmt::format("{}: reading its object graph ({}): {}", objects.variables,
                                                    kObjectGraphKey, read.status().message()));
  }
  const Tensor& serialized = *read;
  tfproto::TrackableObjectGraph checkpoint;
  if (serialized.num_elements() != 1 || !checkpoint.ParseFromString(std::string(serialized.StringAt(0)))) {
    return RuntimeError(fmt::format("DataLossError: {}: its {} is not a TrackableObjectGraph", objects.variables,
                                    kObjectGraphKey));
  }
  // Each saved object's node in the checkpoint's graph (-1: not reached),
  // walked from both roots, a child matched by its name.
  std::vector<int> node_of(objects.objects.size(), -1);
  std::deque<int> pending;
  if (!objects.objects.empty() && checkpoint.nodes_size() > 0) {
    node_of[0] = 0;
    pending.push_back(0);
  }
  while (!pending.empty()) {
    const int saved = pending.front();
    pending.pop_front();
    const auto& node = checkpoint.nodes(node_of[saved]);
    for (const auto& [name, child] : objects.objects[saved].children) {
      if (node_of[child] >= 0) continue;
      for (const auto& reference : node.children()) {
        if (reference.local_name() == name && reference.node_id() >= 0 &&
            reference.node_id() < checkpoint.nodes_size()) {
          node_of[child] = reference.node_id();
          pending.push_back(child);
          break;
        }
      }
    }
  }
  std::vector<std::string> keys;
  for (int id : ids) {
    keys.emplace_back();
    if (objects.objects[id].kind != Graph::SavedObject::Kind::kVariable) continue;
    if (node_of[id] >= 0) {
      for (const auto& attribute : checkpoint.nodes(node_of[id]).attributes()) {
        if (attribute.name() == "VARIABLE_VALUE") keys.back() = attribute.checkpoint_key();
      }
    }
    if (keys.back().empty()) {
      return BadInput(fmt::format("{}: variable {} has no value in the checkpoint (its object graph does not reach "
                                  "it)",
                                  objects.variables, Describe(objects, id)));
    }
  }
  return keys;
}

StatusOr<std::vector<CapturedValue>> RestoreCaptures(const Graph::SavedObjects& objects, const std::string& function,
                                                     const std::function<const Tensor*(const std::string&)>& constant) {
  const std::vector<int>* bound = objects.BoundInputs(function);
  std::vector<CapturedValue> captures;
  if (bound == nullptr || bound->empty()) return captures;
  using Kind = Graph::SavedObject::Kind;
  bool any_variable = false;
  for (int id : *bound) {
    const Graph::SavedObject& object = objects.objects[id];
    CapturedValue capture;
    capture.object = id;
    switch (object.kind) {
      case Kind::kVariable:
        capture.variable = true;
        any_variable = true;
        break;
      case Kind::kConstant: {
        const Tensor* value = constant(object.name);
        if (value == nullptr) {
          return BadInput(fmt::format("function '{}' captures constant '{}' (object {}), which is no Const node of "
                                      "the graph",
                                      function, object.name, id));
        }
        capture.value = *value;
        break;
      }
      default:
        return BadInput(fmt::format("function '{}' captures object {}, a {}: tfrun gives a call its variables and "
                                    "constants only",
                                    function, id,
                                    object.kind == Kind::kResource         ? "resource (a lookup table, a dataset)"
                                    : object.kind == Kind::kCapturedTensor ? "tensor captured from another function"
                                                                           : "Python object"));
    }
    captures.push_back(std::move(capture));
  }
  if (!any_variable) return captures;
  if (objects.variables.empty()) {
    return BadInput(fmt::format("function '{}' reads variables, and the SavedModel's folder has no "
                                "variables/variables.index to restore them from",
                                function));
  }
  TFRUN_ASSIGN_OR_RETURN(const TensorBundleReader bundle, TensorBundleReader::Open(objects.variables));
  TFRUN_ASSIGN_OR_RETURN(const std::vector<std::string> keys, VariableCheckpointKeys(bundle, objects, *bound));
  for (size_t i = 0; i < captures.size(); ++i) {
    CapturedValue& capture = captures[i];
    if (!capture.variable) continue;
    const Graph::SavedObject& object = objects.objects[capture.object];
    capture.checkpoint_key = keys[i];
    StatusOr<Tensor> value = bundle.Read(keys[i], object.dtype);
    if (!value.ok()) {  // RestoreV2's text, with what was being restored
      return Status(value.status().kind(), fmt::format("{}: restoring variable {}: {}", objects.variables,
                                                       Describe(objects, capture.object), value.status().message()));
    }
    capture.value = std::move(*value);
    // The restore's assign (shape_safe_assign_variable_handle): the
    // value's shape must be compatible with the variable's.
    bool compatible = object.unknown_rank || object.shape.size() == capture.value.shape().size();
    for (size_t d = 0; compatible && !object.unknown_rank && d < object.shape.size(); ++d) {
      compatible = object.shape[d] < 0 || object.shape[d] == capture.value.shape()[d];
    }
    if (!compatible) {
      return BadInput(fmt::format("{}: variable {}: ValueError: Shapes {} and {} are incompatible", objects.variables,
                                  Describe(objects, capture.object), ShapeTupleString(object.shape),
                                  ShapeTupleString(capture.value.shape())));
    }
  }
  return captures;
}

}  // namespace tfrun
