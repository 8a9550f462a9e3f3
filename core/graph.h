// A graph as read from a graph file: nodes in program order, with their
// inferred dtypes and shapes, requested devices and source locations. The
// graph keeps each node's consumers as nodes are added (TensorFlow's
// out_edges), so no pass has to rescan it to find them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/device_name.h"
#include "core/flat_string_map.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace tfrun {

struct SourceLocation {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;
};

// "graph.yaml:12:5" for messages, or just the path where the location is
// unknown.
std::string FormatLocation(const std::string& path, const SourceLocation& loc);

struct Node {
  int id = 0;  // index in Graph::nodes, which is program (file) order
  std::string name;
  std::string op;  // TensorFlow op type: Const, MatMul, VariableV2, ...
  std::vector<int> inputs;
  std::vector<int> control_inputs;
  // Nodes that read this one (data or control), in id order, once per
  // edge; kept by Graph::Add.
  std::vector<int> consumers;

  bool has_output = true;  // NoOp has none
  DType dtype = DType::kFloat32;
  Shape shape;

  // The merged device annotation, and its text as written (TF 0.x echoes it).
  DeviceSpec requested_device;
  std::string requested_device_text;

  // Attributes.
  bool transpose_a = false;
  bool transpose_b = false;
  Tensor value;           // Const: its data
  std::string variable;   // VariableV2 expansion: the variable's name

  SourceLocation location;
};

// tf.ConfigProto fields a graph file may set (graph-format.md "config").
struct GraphConfig {
  bool log_device_placement = false;
  bool allow_soft_placement = false;
  std::string visible_device_list;
  bool allow_growth = false;
  double per_process_gpu_memory_fraction = 0.0;
  std::vector<std::vector<double>> virtual_devices;  // MB per logical GPU
  bool tensor_float_32 = true;
  int intra_op_parallelism_threads = 0;
  int inter_op_parallelism_threads = 0;
};

struct Graph {
  std::string path;  // as given on the command line
  std::vector<Node> nodes;
  std::vector<int> fetch;
  GraphConfig config;
  FlatStringMap<int> by_name;  // node name -> id

  // Appends `node` (its inputs must be earlier nodes): sets its id, its
  // name's entry and its producers' consumers. Returns the id.
  int Add(Node node);

  std::vector<std::string> NodeNames() const {
    std::vector<std::string> names;
    for (const Node& n : nodes) names.push_back(n.name);
    return names;
  }

  const Node* Find(const std::string& name) const {
    const int* id = by_name.Find(name);
    return id == nullptr ? nullptr : &nodes[*id];
  }
  // "graph.yaml:12:5" for messages.
  std::string Where(const SourceLocation& loc) const;
};

}  // namespace tfrun
