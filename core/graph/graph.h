// A graph as read from a graph file: nodes in program order, with their
// inferred dtypes and shapes, requested devices and source locations. The
// graph keeps each node's consumers as nodes are added (TensorFlow's
// out_edges), so no pass has to rescan it to find them.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/flat_string_map.h"
#include "core/base/shape.h"
#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/graph/cluster_spec.h"
#include "core/graph/device_name.h"
#include "core/graph/node_class.h"
#include "core/tables/tf_tables.h"

namespace tfrun {

class FunctionLibrary;  // function_library.h

struct SourceLocation {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;
};

// "graph.yaml:12:5" for messages, or just the path where the location is
// unknown.
std::string FormatLocation(const std::string& path, const SourceLocation& loc);

// An error in a graph file: its message FormatLocation's text, ": ", then
// `text`; its site the path, line, column and `node` ("" when the text is
// not about one node).
Status LocatedError(ErrorKind kind, const std::string& path, const SourceLocation& loc, std::string_view text,
                    std::string node = "");

// How a Const's data was written, which decides what TF2 eager executes
// for the tf.constant(...) a graph file's Const stands for
// (constant_op.py, pywrap_tensor.cc): Python literals are converted on the
// host (bfloat16 through a Cast), then reshaped or filled to `shape`;
// Python scalars are cached by (type, value, dtype, device scope). Small:
// every node carries one.
struct ConstLiteral {
  enum class Form : uint8_t {
    kArray,   // npy or random: a NumPy array, converted as it is
    kNested,  // a list with the node's own shape
    kFlat,    // a flat list for another shape (Reshape)
    kScalar,  // one number: the value itself, or filling the shape (Fill)
  };
  // A scalar's Python type, the cache's key with its value; kNone: not
  // cached (lists, non-finite floats, ints beyond int64).
  enum class Python : uint8_t { kNone, kInt, kFloat, kBool };
  Form form = Form::kArray;
  Python python = Python::kNone;
  int64_t int_value = 0;  // kInt, kBool
  double float_value = 0;  // kFloat (-0.0 stored as 0.0: equal in Python)
};

// One output of a node, TensorFlow's "name:index": what an edge carries,
// what is fetched and what is fed.
struct NodeOutput {
  int node = 0;
  int index = 0;
  bool operator==(const NodeOutput& other) const { return node == other.node && index == other.index; }
};

// The producers' node ids of `outputs`, in order.
inline std::vector<int> NodesOf(const std::vector<NodeOutput>& outputs) {
  std::vector<int> ids;
  ids.reserve(outputs.size());
  for (const NodeOutput& o : outputs) ids.push_back(o.node);
  return ids;
}

// "split:1" as (split, 1), "x" and "x:0" as (x, 0); nullopt for an index
// that is not a number. Node names never hold ':'.
struct TensorName {
  std::string node;
  int index = 0;
};
std::optional<TensorName> ParseTensorName(std::string_view text);

struct Node {
  int id = 0;  // index in Graph::nodes, which is program (file) order
  std::string name;
  std::string op;  // TensorFlow op type: Const, MatMul, VariableV2, ...
  NodeClass cls = NodeClass::kOther;  // of `op`, set by Graph::Add
  // Producers' node ids. Earlier ids, except a while loop's back edge (a
  // NextIteration feeding its Merge, Graph::IsBackEdge), which names a
  // later node.
  std::vector<int> inputs;
  // The output of each input's producer that it reads ("split:1" reads 1);
  // empty when every input reads output 0, as for all single-output ops.
  std::vector<int> input_index;
  std::vector<int> control_inputs;
  // Nodes that read this one (data or control), in id order, once per
  // edge; kept by Graph::Add.
  std::vector<int> consumers;

  // Outputs: NoOp has none, Split `num_split`, every other op one. All of
  // a node's outputs share its dtype and shape (true of every op here).
  int num_outputs = 1;
  bool has_output() const { return num_outputs > 0; }
  DType dtype = DType::kFloat32;
  // Dimensions may be kUnknownDim (a Placeholder's None, and what follows
  // from it); a Placeholder without a shape has no known rank at all.
  Shape shape;
  bool unknown_rank = false;
  // Index into Graph::properties: its NodeDef's attrs and argument types.
  // Every node has them (the GraphDef importer reads them, the graph-file
  // builder and the passes build them with node_builder.h); -1 only for a
  // node of an op without an OpDef, which nothing can run or place.
  int32_t properties = -1;

  NodeOutput input(size_t i) const {
    return {inputs[i], i < input_index.size() ? input_index[i] : 0};
  }

  // The merged device annotation, and its text as written (TF 0.x echoes it).
  DeviceSpec requested_device;
  std::string requested_device_text;
  // TensorFlow's `_class` attribute: the names of the colocation groups
  // ("loc:@NAME" without the prefix) the node joins, sorted, each once
  // (colocate_with; a Variable's Assign and read join the Variable's).
  std::vector<std::string> colocation;

  // Attributes.
  bool transpose_a = false;
  bool transpose_b = false;
  Tensor value;           // Const: its data
  std::string variable;   // VariableV2 expansion: the variable's name
  ConstLiteral literal;    // Const: how its data was written

  // `name:` was given (tf.add_n([x], name='s') runs an Identity in eager).
  bool explicit_name = false;
  // Built by tf.global_variables_initializer(): nothing runs it in eager.
  bool graph_mode_only = false;

  // VariableV2: the name eager TF prints ('tower/v:0'): name scopes as
  // written, never made unique.
  std::string eager_name;

  SourceLocation location;

  // A function's _Arg or _Retval pinned before placement, as TensorFlow's
  // PinArgsAndRets pins them when a TF2 call instantiates the function
  // (--call): the placer takes the device `pinned_device` names (an
  // _Arg's: exactly that device; "" for the call's), or, for a _Retval
  // that only asks, the one device it matches (the call's when none does,
  // under soft placement; the placer's choice when several do).
  enum class Pin : uint8_t { kNone, kExact, kMatch };
  Pin pin = Pin::kNone;
  std::string pinned_device;

  // Graph::Remove dropped it: a pass's tombstone, gone after Graph::Compact.
  bool removed = false;
};

// What a node's NodeDef carries beyond a Node's own fields (TensorFlow's
// NodeProperties): its attributes (defaults filled from the OpDef, as
// TensorFlow fills them before placing) and the types its OpDef binds to
// each input and output, in the tables' spelling ("FLOAT", "FLOAT_REF",
// "RESOURCE"). Read from a TensorFlow graph file's NodeDef, or built by
// node_builder.h for a graph file's node and a pass's.
struct NodeProperties {
  NodeAttrs attrs;
  std::vector<std::string> input_types;
  std::vector<std::string> output_types;
  // What TensorFlow's OpKernel constructor refuses in this NodeDef (a
  // Const whose value does not parse, or is of another dtype), in its
  // words: the node places, and fails with it when it first runs.
  std::string kernel_error;
};

// Whether a type in the tables' spelling is a reference ("FLOAT_REF").
inline bool IsRefType(std::string_view type) {
  return type.size() > 4 && type.substr(type.size() - 4) == "_REF";
}

// A reference or a resource: what joins the ends of an edge into one
// colocation group.
inline bool IsRefOrResourceType(std::string_view type) { return type == "RESOURCE" || IsRefType(type); }

// DataTypeString of a type in the tables' spelling: "float", "int32_ref".
std::string DataTypeString(std::string_view table_type);

// tf.ConfigProto fields a graph file may set (graph-format.md "config").
struct GraphConfig {
  bool log_device_placement = false;
  bool allow_soft_placement = false;
  std::string visible_device_list;
  bool allow_growth = false;
  double per_process_gpu_memory_fraction = 0.0;
  std::vector<std::vector<double>> virtual_devices;  // MB per logical GPU
  // ConfigProto.device_count: CPU devices to make (CPU:0 ... CPU:n-1), and
  // at most this many GPUs; -1: not set (one CPU, every GPU).
  int cpu_device_count = -1;
  int gpu_device_count = -1;
  bool tensor_float_32 = true;
  int intra_op_parallelism_threads = 0;
  int inter_op_parallelism_threads = 0;
  // tf.train.ClusterSpec: empty for a single process.
  ClusterSpec cluster;
  // How long a task waits for another (0: the default, cli/flags.h).
  int64_t operation_timeout_in_ms = 0;
  // GraphOptions.OptimizerOptions.do_function_inlining: a Session inlines
  // every function call before placing (by default only the branches and
  // bodies of lowered v2 control flow).
  bool do_function_inlining = false;
};

enum class GraphSource : uint8_t {
  kGraphFile,   // a graph file (graph-format.md)
  kTensorFlow,  // a GraphDef, MetaGraphDef or SavedModel TensorFlow wrote
};

struct Graph {
  std::string path;  // as given on the command line
  std::vector<Node> nodes;
  std::vector<NodeOutput> fetch;
  std::vector<int> targets;  // run before the fetches, not printed
  // A graph file's variables are initialised before the first run that reads
  // them (its format says so); a TensorFlow graph's wait for the program's
  // own init, as in a Session.
  bool variables_start_initialized = true;
  GraphConfig config;
  FlatStringMap<int> by_name;  // node name -> id
  int name_counter = 0;        // NewName's
  // Who wrote the graph: a graph file's nodes stand for the Python program
  // the format describes (its own import order, tf2 eager); a TensorFlow
  // file's are that program's NodeDefs as written.
  GraphSource source = GraphSource::kGraphFile;
  // The nodes' NodeDef properties (Node::properties indexes it).
  std::vector<NodeProperties> properties;
  // A MetaGraphDef's collections of nodes by key ("train_op": the nodes'
  // names, as written, "name" or "name:0"); `--targets` may name one.
  std::vector<std::pair<std::string, std::vector<std::string>>> collections;
  // A MetaGraphDef's queue runners (its "queue_runners" collection of
  // QueueRunnerDefs): the queue's node, its enqueue ops (one per thread
  // tf.train.start_queue_runners would start) and its close op. A session
  // fills their queues before each run (Session::FillQueues).
  struct QueueRunner {
    std::string queue;
    std::vector<std::string> enqueue_ops;
    std::string close_op;
  };
  std::vector<QueueRunner> queue_runners;
  // A SavedModel's variables, as TensorFlow 1's loader restores them
  // before the first run (loader.cc RestoreSession): its saver's restore op
  // run with the checkpoint tensor fed `<folder>/variables/variables`,
  // then its main op (collection saved_model_main_op, else
  // legacy_init_op). Empty `restore_op`: nothing to restore.
  struct SavedModelRestore {
    std::string restore_op;
    std::string filename_tensor;
    std::string variables;
    std::string main_op;  // a collection's name, or ""
  };
  SavedModelRestore saved_model_restore;
  // A graph_def wrapper's TF2 call (`call:`, `call_device:`,
  // `arg_devices:`, graph-format.md): the library function whose body is
  // placed as eager TensorFlow 2 calls it; `function` "" for none.
  struct Call {
    std::string function;
    std::string device;                    // "": eager's default
    std::vector<std::string> arg_devices;  // "ARG=DEVICE"
  };
  Call call;
  // A Keras program (a graph file's `keras:`, graph-format.md): what
  //   strategy = tf.distribute.MirroredStrategy(
  //       tf.config.list_logical_devices(strategy_device_type))
  //   with strategy.scope():
  //     inputs = tf.keras.layers.Input(shape=input_shape)
  //     ... tf.keras.layers.Dense(units, use_bias=...) per layer ...
  //     model.compile(loss=loss, optimizer=optimizer)
  // builds, which eager TensorFlow 2 runs op by op (the session expands it:
  // core/session/keras_build.h). `present` false: the file is a graph.
  struct KerasProgram {
    bool present = false;
    std::string strategy_device_type;  // "GPU" or "CPU"
    std::vector<int64_t> input_shape;  // without the batch dimension
    struct Dense {
      int64_t units = 0;
      bool use_bias = true;
    };
    std::vector<Dense> layers;
    // As compile() is given them; the build makes the same variables for
    // each (checked against TensorFlow: keras_build.cc).
    std::string loss, optimizer;
  };
  KerasProgram keras;
  // A SavedModel's signatures, by name: the library function its outputs
  // come from ("" where no call node makes them: a TF1 signature), and its
  // output keys sorted, the order of the function's results (it returns
  // its dict flattened, as nest.flatten sorts a dict's keys).
  struct Signature {
    std::string name;
    std::string function;
    std::vector<std::string> output_keys;
  };
  std::vector<Signature> signatures;
  // A TF2 SavedModel's objects (its MetaGraphDef's object_graph_def), as
  // TF2's loader recreates them: the objects by id (0 the root), each with
  // its children by name, and what each concrete function captures (its
  // last arguments, in order: `bound_inputs`, object ids). Empty for other
  // files. `variables`: the bundle its variables are restored from
  // (`<folder>/variables/variables`; "" when the folder has no index).
  struct SavedObject {
    enum class Kind { kOther, kVariable, kConstant, kResource, kCapturedTensor };
    Kind kind = Kind::kOther;
    std::vector<std::pair<std::string, int>> children;  // (local name, object id)
    std::string name;  // a variable's name; a constant's Const node
    DType dtype = DType::kFloat32;  // a variable's
    Shape shape;                    // a variable's; -1 an unknown size
    bool unknown_rank = false;
  };
  struct SavedObjects {
    std::vector<SavedObject> objects;
    std::vector<std::pair<std::string, std::vector<int>>> bound_inputs;  // sorted by function name
    std::string variables;
    const std::vector<int>* BoundInputs(std::string_view function) const {
      auto it = std::lower_bound(bound_inputs.begin(), bound_inputs.end(), function,
                                 [](const auto& entry, std::string_view f) { return entry.first < f; });
      return it != bound_inputs.end() && it->first == function ? &it->second : nullptr;
    }
  };
  SavedObjects saved_objects;
  // The GraphDef's function library: null for a YAML graph and a GraphDef
  // without one. Shared: a function body instantiated from it reads it too.
  std::shared_ptr<const FunctionLibrary> functions;
  // The collection `key`'s node names, or nullptr.
  const std::vector<std::string>* Collection(std::string_view key) const {
    for (const auto& [name, nodes] : collections) {
      if (name == key) return &nodes;
    }
    return nullptr;
  }
  // nullptr only for a node of an op without an OpDef.
  const NodeProperties* PropertiesOf(const Node& node) const {
    return node.properties < 0 ? nullptr : &properties[node.properties];
  }
  // The NodeDef's attr `name`: nullptr if absent.
  const AttrValue* AttrOf(const Node& node, std::string_view name) const {
    const NodeProperties* def = PropertiesOf(node);
    if (def == nullptr) return nullptr;
    auto it = def->attrs.find(name);
    return it == def->attrs.end() ? nullptr : &it->second;
  }
  // Its first item, or "" (a string, a bool, an int as the NodeDef holds it).
  std::string AttrText(const Node& node, std::string_view name) const {
    const AttrValue* value = AttrOf(node, name);
    return value == nullptr || value->items.empty() ? std::string() : value->items[0];
  }

  // Appends `node` (its inputs must be earlier nodes): sets its id, its
  // class, its name's entry and its producers' consumers. Returns the id.
  int Add(Node node);
  // Whether input `i` of `node` is a back edge: a NextIteration feeding a
  // Merge, the only edge a dataflow cycle may run through.
  bool IsBackEdge(const Node& node, size_t i) const {
    return node.cls == NodeClass::kMerge && nodes[node.inputs[i]].cls == NodeClass::kNextIteration;
  }
  // Graph rewrites (the passes before placement). Node ids stay stable
  // while passes run: a pass appends nodes (Add, or AddNode in
  // node_builder.h) and removes them (Remove leaves a tombstone); Compact,
  // after the last pass, drops the tombstones and renumbers the rest in
  // order, as TensorFlow's op_nodes() skips freed ids.
  //
  // TensorFlow's Graph::NewName: "<prefix>/_N", N counting up across the
  // whole graph from 0.
  std::string NewName(std::string_view prefix);
  // Input `input` of `consumer` now reads `producer` (TensorFlow's
  // Graph::AddEdge after the old edge went with its node; also a while
  // loop's back edge, whose input was -1 until its NextIteration existed).
  void SetInput(int consumer, size_t input, NodeOutput producer);
  void AddControlEdge(int producer, int consumer);
  // Every edge out of `from` (output 0, and control) leaves `to` instead:
  // what a pass does before it removes the node `to` stands for.
  void ReplaceUses(int from, int to);
  // Drops the node and the edges into it; its consumers must read
  // something else first.
  void Remove(int id);
  void Compact();

  // Whether any node is a control-flow node (Switch, Merge, Enter, ...):
  // such a graph runs on the frame-aware propagator.
  bool HasControlFlow() const;

  std::vector<std::string> NodeNames() const {
    std::vector<std::string> names;
    for (const Node& n : nodes) names.push_back(n.name);
    return names;
  }

  const Node* Find(const std::string& name) const {
    const int* id = by_name.Find(name);
    return id == nullptr ? nullptr : &nodes[*id];
  }
  // The output a tensor name ("split:1") names, or an error in
  // TensorFlow's words ("... does not exist in the graph.", "... only has 1
  // outputs."); `what` starts it ("fetch 'q:0'").
  StatusOr<NodeOutput> FindOutput(std::string_view text, std::string_view what) const;
  // The dtype output `output` carries: a graph file's node's own; for a
  // NodeDef, the type its OpDef declares, nullopt where tfrun stores no
  // such tensor (a resource handle, a variant, complex numbers).
  std::optional<DType> OutputDType(NodeOutput output) const;
  // That type as TensorFlow writes it ("float", "resource").
  std::string OutputTypeString(NodeOutput output) const;
  // "split:1" (or "x" for output 0 when `short_zero`), TensorFlow's
  // tensor name as feeds and fetches write it.
  std::string OutputName(NodeOutput output, bool short_zero = true) const;
  // "graph.yaml:12:5" for messages.
  std::string Where(const SourceLocation& loc) const;
  // An error at `node`: its message "graph.yaml:12:5: " + `text`, and the
  // file, line, column and node as the Status's site. `names_node`: whether
  // `text` is about this node (false where it leads with another's name,
  // so the site carries the location only).
  Status ErrorAt(ErrorKind kind, const Node& node, std::string_view text, bool names_node = true) const;
};

}  // namespace tfrun
