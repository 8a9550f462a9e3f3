#include "core/loader.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/npy.h"
#include "core/op_registry.h"
#include "core/parallel.h"
#include "core/random.h"

namespace tfrun {
namespace {

const std::vector<std::string> kTopKeys = {"version", "config", "nodes", "fetch"};
const std::vector<std::string> kScopeKeys = {"device", "name_scope", "nodes"};
const std::vector<std::string> kCommonNodeKeys = {"name", "op", "inputs", "device"};
const std::vector<std::string> kConfigKeys = {"log_device_placement",
                                              "allow_soft_placement",
                                              "visible_device_list",
                                              "allow_growth",
                                              "per_process_gpu_memory_fraction",
                                              "virtual_devices",
                                              "tensor_float_32",
                                              "intra_op_parallelism_threads",
                                              "inter_op_parallelism_threads"};
const std::vector<std::string> kRandomKeys = {"distribution", "min", "max", "mean", "stddev", "seed"};

SourceLocation LocationOf(const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  if (m.line < 0) return {};
  return {m.line + 1, m.column + 1};
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] =
          std::min({row[j] + 1, row[j - 1] + 1, prev + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

// Tensorflow's op name rule (tensorflow/core/framework/node_def_util.cc).
bool IsValidNodeName(const std::string& s, bool allow_leading_underscore) {
  if (s.empty()) return false;
  char c0 = s[0];
  if (!(std::isalnum(static_cast<unsigned char>(c0)) || c0 == '.' || (allow_leading_underscore && c0 == '_'))) {
    return false;
  }
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/' || c == '>')) {
      return false;
    }
  }
  return true;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Graph.unique_name from tensorflow/python/framework/ops.py: case-insensitive
// bookkeeping, "_N" suffixes that skip names already taken.
class UniqueNamer {
 public:
  std::string Unique(const std::string& name) {
    std::string key = Lower(name);
    int i = names_in_use_[key];
    names_in_use_[key] = i + 1;
    if (i == 0) return name;
    const std::string base_key = key;
    while (names_in_use_.count(key) != 0) {
      key = fmt::format("{}_{}", base_key, i);
      ++i;
    }
    names_in_use_[key] = 1;
    return fmt::format("{}_{}", name, i - 1);
  }

 private:
  std::unordered_map<std::string, int> names_in_use_;
};

struct Scope {
  DeviceSpec device;
  std::string device_text;
  std::string name_prefix;  // "tower_1/" or ""
};

bool IsValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || i + n >= s.size() + (n == 0 ? 1 : 0)) {
      if (n != 0) return false;
    }
    for (int k = 1; k <= n; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n + 1;
  }
  return true;
}

class Loader {
 public:
  Loader(std::string path, const LoadLimits& limits) : limits_(limits), dir_(DirectoryOf(path)) {
    graph_.path = std::move(path);
  }

  StatusOr<Graph> Load(const std::string& text) {
    if (!IsValidUtf8(text)) {
      return BadInput(fmt::format("{}: not a text file (invalid UTF-8)", graph_.path));
    }
    if (size_t nul = text.find('\0'); nul != std::string::npos) {
      const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n'));
      const size_t line_start = text.rfind('\n', nul);
      const int column = static_cast<int>(nul - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
      return BadInput(fmt::format("{}:{}:{}: not a text file (a NUL byte)", graph_.path, line, column));
    }
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::DeepRecursion& e) {
      return BadInput(fmt::format("{}:{}:{}: YAML nested deeper than {} levels", graph_.path, e.mark.line + 1,
                                  e.mark.column + 1, e.depth()));
    } catch (const YAML::ParserException& e) {
      return BadInput(
          fmt::format("{}:{}:{}: YAML syntax error: {}", graph_.path, e.mark.line + 1, e.mark.column + 1, e.msg));
    } catch (const std::exception& e) {
      return BadInput(fmt::format("{}: cannot parse YAML: {}", graph_.path, e.what()));
    }
    try {
      TFRUN_RETURN_IF_ERROR(LoadRoot(root));
    } catch (const YAML::Exception& e) {
      return BadInput(fmt::format("{}:{}:{}: {}", graph_.path, e.mark.line + 1, e.mark.column + 1, e.msg));
    }
    return std::move(graph_);
  }

 private:
  static std::string DirectoryOf(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? "" : path.substr(0, slash + 1);
  }

  Status ErrorAt(const YAML::Node& n, const std::string& message) const {
    return BadInput(fmt::format("{}: {}", graph_.Where(LocationOf(n)), message));
  }
  Status NodeError(const YAML::Node& n, const std::string& node_name, const std::string& message) const {
    return BadInput(fmt::format("{}: node '{}': {}", graph_.Where(LocationOf(n)), node_name, message));
  }

  // Unknown keys (with a "did you mean") and repeated keys, which yaml-cpp
  // would otherwise resolve silently.
  Status CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& what) const {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) return ErrorAt(it->first, fmt::format("{} keys must be strings", what));
      const std::string key = it->first.Scalar();
      if (!seen.insert(key).second) return ErrorAt(it->first, fmt::format("key '{}' appears twice in {}", key, what));
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      return ErrorAt(it->first, fmt::format("unknown key '{}' in {}{}", key, what, DidYouMean(key, allowed)));
    }
    return Status::Ok();
  }

  Status LoadRoot(const YAML::Node& root) {
    if (root.IsNull()) return BadInput(fmt::format("{}: empty graph file", graph_.path));
    if (!root.IsMap()) {
      return ErrorAt(root, "a graph file is a mapping with 'nodes' (and optionally version, config, fetch)");
    }
    TFRUN_RETURN_IF_ERROR(CheckKeys(root, kTopKeys, "the graph file"));
    if (const YAML::Node v = root["version"]) {
      if (!v.IsScalar() || v.Scalar() != "1") {
        return ErrorAt(
            v, fmt::format("unsupported version '{}': this tfrun reads version 1", v.IsScalar() ? v.Scalar() : "?"));
      }
    }
    if (const YAML::Node c = root["config"]) TFRUN_RETURN_IF_ERROR(LoadConfig(c));
    const YAML::Node nodes = root["nodes"];
    if (!nodes) return BadInput(fmt::format("{}: the graph file has no 'nodes'", graph_.path));
    PrescanNames(nodes, "", 1);
    TFRUN_RETURN_IF_ERROR(LoadNodeList(nodes, Scope{}, 1));
    AddVariableInitializer();
    if (graph_.nodes.empty()) return ErrorAt(nodes, "the graph has no nodes");
    return LoadFetch(root["fetch"]);
  }

  // Names the file gives explicitly, to tell "defined later" from "missing".
  void PrescanNames(const YAML::Node& list, const std::string& prefix, int depth) {
    if (!list.IsSequence() || depth > limits_.max_depth) return;
    for (const YAML::Node& entry : list) {
      if (!entry.IsMap()) continue;
      if (const YAML::Node nested = entry["nodes"]) {
        const YAML::Node ns = entry["name_scope"];
        PrescanNames(nested, ns && ns.IsScalar() ? prefix + ns.Scalar() + "/" : prefix, depth + 1);
      } else if (const YAML::Node name = entry["name"]) {
        if (name.IsScalar()) later_names_.insert(prefix + name.Scalar());
      }
    }
  }

  // --- config ---------------------------------------------------------------

  // Errors of a field that belongs to a node name the node; config fields
  // pass no node name.
  Status FieldError(const YAML::Node& n, const std::string& node_name, const std::string& message) const {
    return node_name.empty() ? ErrorAt(n, message) : NodeError(n, node_name, message);
  }

  Status ReadBool(const YAML::Node& n, const std::string& what, bool* out, const std::string& node_name = "") const {
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& s = n.Scalar();
      if (s == "true" || s == "True" || s == "TRUE") {
        *out = true;
        return Status::Ok();
      }
      if (s == "false" || s == "False" || s == "FALSE") {
        *out = false;
        return Status::Ok();
      }
    }
    return FieldError(n, node_name, fmt::format("{} must be true or false", what));
  }

  Status ReadInt(const YAML::Node& n, const std::string& what, int64_t lo, int64_t hi, int64_t* out,
                 const std::string& node_name = "") const {
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& s = n.Scalar();
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && *end == '\0' && errno == 0 && v >= lo && v <= hi) {
        *out = v;
        return Status::Ok();
      }
    }
    return FieldError(n, node_name, fmt::format("{} must be an integer from {} to {}", what, lo, hi));
  }

  Status ReadDouble(const YAML::Node& n, const std::string& what, double* out) const {
    if (n.IsScalar() && n.Tag() != "!") {
      const std::string& s = n.Scalar();
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(s.c_str(), &end);
      if (!s.empty() && *end == '\0' && errno == 0 && std::isfinite(v)) {
        *out = v;
        return Status::Ok();
      }
    }
    return ErrorAt(n, fmt::format("{} must be a finite number", what));
  }

  Status LoadConfig(const YAML::Node& c) {
    if (c.IsNull()) return Status::Ok();
    if (!c.IsMap()) return ErrorAt(c, "config must be a mapping");
    TFRUN_RETURN_IF_ERROR(CheckKeys(c, kConfigKeys, "config"));
    GraphConfig& cfg = graph_.config;
    for (auto it = c.begin(); it != c.end(); ++it) {
      const std::string key = it->first.Scalar();
      const YAML::Node v = it->second;  // a copy: yaml-cpp iterators hand out temporaries
      int64_t i = 0;
      if (key == "log_device_placement") {
        TFRUN_RETURN_IF_ERROR(ReadBool(v, key, &cfg.log_device_placement));
      } else if (key == "allow_soft_placement") {
        TFRUN_RETURN_IF_ERROR(ReadBool(v, key, &cfg.allow_soft_placement));
      } else if (key == "allow_growth") {
        TFRUN_RETURN_IF_ERROR(ReadBool(v, key, &cfg.allow_growth));
      } else if (key == "tensor_float_32") {
        TFRUN_RETURN_IF_ERROR(ReadBool(v, key, &cfg.tensor_float_32));
      } else if (key == "visible_device_list") {
        if (!v.IsScalar()) return ErrorAt(v, "visible_device_list must be a string such as \"1,2\"");
        cfg.visible_device_list = v.Scalar();
      } else if (key == "per_process_gpu_memory_fraction") {
        TFRUN_RETURN_IF_ERROR(ReadDouble(v, key, &cfg.per_process_gpu_memory_fraction));
        if (cfg.per_process_gpu_memory_fraction < 0) {
          return ErrorAt(v, "per_process_gpu_memory_fraction must not be negative");
        }
      } else if (key == "intra_op_parallelism_threads") {
        TFRUN_RETURN_IF_ERROR(ReadInt(v, key, 0, 1024, &i));
        cfg.intra_op_parallelism_threads = static_cast<int>(i);
      } else if (key == "inter_op_parallelism_threads") {
        TFRUN_RETURN_IF_ERROR(ReadInt(v, key, 0, 1024, &i));
        cfg.inter_op_parallelism_threads = static_cast<int>(i);
      } else if (key == "virtual_devices") {
        if (!v.IsSequence()) return ErrorAt(v, "virtual_devices must be a list of lists of memory limits in MB");
        for (const YAML::Node& gpu : v) {
          if (!gpu.IsSequence())
            return ErrorAt(gpu, "each virtual_devices entry must be a list of memory limits in MB");
          std::vector<double> limits;
          for (const YAML::Node& mb : gpu) {
            double x = 0;
            TFRUN_RETURN_IF_ERROR(ReadDouble(mb, "a virtual device memory limit", &x));
            if (x <= 0) return ErrorAt(mb, "a virtual device memory limit must be positive");
            limits.push_back(x);
          }
          cfg.virtual_devices.push_back(std::move(limits));
        }
      }
    }
    return Status::Ok();
  }

  // --- nodes and scopes --------------------------------------------------------

  Status LoadNodeList(const YAML::Node& list, const Scope& scope, int depth) {
    if (depth > limits_.max_depth) {
      return ErrorAt(
          list, fmt::format("scopes nested deeper than {} levels (the depth limit, --max-depth)", limits_.max_depth));
    }
    if (!list.IsSequence()) return ErrorAt(list, "'nodes' must be a list");
    for (const YAML::Node& entry : list) {
      if (!entry.IsMap()) return ErrorAt(entry, "each entry of 'nodes' must be a mapping (a node or a scope)");
      if (entry["nodes"]) {
        TFRUN_RETURN_IF_ERROR(LoadScope(entry, scope, depth));
      } else {
        TFRUN_RETURN_IF_ERROR(LoadNode(entry, scope));
      }
    }
    return Status::Ok();
  }

  // `node_name` is empty for a scope's device.
  Status MergeDevice(const YAML::Node& d, const Scope& outer, Scope* inner, const std::string& node_name = "") const {
    auto error = [&](const std::string& message) {
      return node_name.empty() ? ErrorAt(d, message) : NodeError(d, node_name, message);
    };
    if (!d.IsScalar()) return error("device must be a string such as /gpu:0");
    const std::string text = d.Scalar();
    if (text.empty()) {  // tf.device(None): clears the annotation
      inner->device = DeviceSpec();
      inner->device_text.clear();
      return Status::Ok();
    }
    StatusOr<DeviceSpec> spec = DeviceSpec::Parse(text);
    if (!spec.ok()) return error(spec.status().message());
    inner->device = spec->MergedOver(outer.device);
    inner->device_text = text;
    return Status::Ok();
  }

  Status LoadScope(const YAML::Node& entry, const Scope& outer, int depth) {
    TFRUN_RETURN_IF_ERROR(CheckKeys(entry, kScopeKeys, "a scope"));
    Scope scope = outer;
    if (const YAML::Node d = entry["device"]) TFRUN_RETURN_IF_ERROR(MergeDevice(d, outer, &scope));
    if (const YAML::Node ns = entry["name_scope"]) {
      if (!ns.IsScalar()) return ErrorAt(ns, "name_scope must be a string");
      if (!IsValidNodeName(ns.Scalar(), false)) {
        return ErrorAt(ns, fmt::format("invalid name_scope '{}' (letters, digits, '.', '_', '-', '/')", ns.Scalar()));
      }
      // tf.name_scope makes the scope name itself unique.
      scope.name_prefix = namer_.Unique(outer.name_prefix + ns.Scalar()) + "/";
    }
    return LoadNodeList(entry["nodes"], scope, depth + 1);
  }

  StatusOr<DType> ReadDType(const YAML::Node& n, const std::string& node_name) const {
    std::vector<std::string> names;
    for (DType d : kAllDTypes) names.emplace_back(Name(d));
    if (!n.IsScalar()) {
      return FieldError(n, node_name, fmt::format("a dtype must be one of {}", fmt::join(names, ", ")));
    }
    if (std::optional<DType> d = ParseDType(n.Scalar())) return *d;
    const std::string hint = ClosestMatch(n.Scalar(), names);
    return FieldError(
        n, node_name,
        fmt::format("unknown dtype '{}'{} (one of {})", n.Scalar(),
                    hint.empty() ? "" : fmt::format(", did you mean '{}'?", hint), fmt::join(names, ", ")));
  }

  Status LoadNode(const YAML::Node& entry, const Scope& scope) {
    const YAML::Node op_node = entry["op"];
    if (!op_node) return ErrorAt(entry, "a node needs 'op' (or 'nodes', for a scope)");
    if (!op_node.IsScalar()) return ErrorAt(op_node, "op must be a string");
    const std::string op = op_node.Scalar();
    const OpDef* def = FindOp(op);
    if (def == nullptr || !def->in_graph_files) {
      std::vector<std::string> ops;
      for (const OpDef& d : AllOps()) {
        if (d.in_graph_files) ops.emplace_back(d.type);
      }
      return ErrorAt(op_node, fmt::format("unknown op '{}'{}", op, DidYouMean(op, ops)));
    }
    std::vector<std::string> allowed = kCommonNodeKeys;
    allowed.insert(allowed.end(), def->attributes.begin(), def->attributes.end());
    TFRUN_RETURN_IF_ERROR(CheckKeys(entry, allowed, fmt::format("a {} node", op)));
    if (static_cast<int>(graph_.nodes.size()) + (op == "Variable" ? 4 : 1) > limits_.max_nodes) {
      return ErrorAt(entry, fmt::format("more than {} nodes (the node-count limit, --max-nodes)", limits_.max_nodes));
    }

    std::string base = op;
    if (const YAML::Node n = entry["name"]) {
      if (!n.IsScalar()) return ErrorAt(n, "name must be a string");
      if (!IsValidNodeName(n.Scalar(), false)) {
        return ErrorAt(n, fmt::format("invalid node name '{}' (letters, digits, '.', '_', '-', '/')", n.Scalar()));
      }
      base = n.Scalar();
    }
    Scope node_scope = scope;
    if (const YAML::Node d = entry["device"]) {
      TFRUN_RETURN_IF_ERROR(MergeDevice(d, scope, &node_scope, scope.name_prefix + base));
    }

    if (op == "Variable") return LoadVariable(entry, node_scope, base);

    Node node;
    node.op = op;
    node.name = namer_.Unique(scope.name_prefix + base);
    node.location = LocationOf(entry);
    node.requested_device = node_scope.device;
    node.requested_device_text = node_scope.device_text;
    TFRUN_RETURN_IF_ERROR(ReadInputs(entry, *def, &node));
    if (op == "Const") {
      TFRUN_RETURN_IF_ERROR(ReadTensorData(entry, node.name, &node));
    }
    if (op == "MatMul") {
      if (const YAML::Node t = entry["transpose_a"]) {
        TFRUN_RETURN_IF_ERROR(ReadBool(t, "transpose_a", &node.transpose_a, node.name));
      }
      if (const YAML::Node t = entry["transpose_b"]) {
        TFRUN_RETURN_IF_ERROR(ReadBool(t, "transpose_b", &node.transpose_b, node.name));
      }
    }
    if (op == "Cast") {
      const YAML::Node dst = entry["DstT"];
      if (!dst) return NodeError(entry, node.name, "Cast needs DstT, the dtype to cast to");
      TFRUN_ASSIGN_OR_RETURN(node.dtype, ReadDType(dst, node.name));
    }
    return AddNode(std::move(node), *def, entry);
  }

  // Resolves `inputs` to earlier nodes; a Variable's name means its read.
  Status ReadInputs(const YAML::Node& entry, const OpDef& def, Node* node) const {
    std::vector<int> ids;
    if (const YAML::Node inputs = entry["inputs"]) {
      if (!inputs.IsSequence()) return NodeError(inputs, node->name, "inputs must be a list of node names");
      for (const YAML::Node& in : inputs) {
        if (!in.IsScalar()) return NodeError(in, node->name, "each input must be a node name");
        std::string name = in.Scalar();
        if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) {
          name.resize(name.size() - 2);
        }
        auto it = graph_.by_name.find(name);
        if (it == graph_.by_name.end() && name == node->name) {
          return NodeError(in, node->name, "a node cannot consume its own output (a cycle)");
        }
        if (it == graph_.by_name.end()) {
          bool later = later_names_.count(name) != 0;
          return NodeError(
              in, node->name,
              fmt::format("input '{}' {}{}", in.Scalar(),
                          later ? "is defined later; inputs must name earlier nodes" : "names no earlier node",
                          DidYouMean(name, graph_.NodeNames())));
        }
        int id = it->second;
        auto var = variable_reads_.find(id);
        if (var != variable_reads_.end()) id = var->second;
        ids.push_back(id);
      }
    }
    const int n = static_cast<int>(ids.size());
    if (n < def.min_inputs || (def.max_inputs >= 0 && n > def.max_inputs)) {
      std::string want = def.max_inputs < 0                 ? fmt::format("at least {}", def.min_inputs)
                         : def.min_inputs == def.max_inputs ? std::to_string(def.min_inputs)
                                                            : fmt::format("{} to {}", def.min_inputs, def.max_inputs);
      return NodeError(entry, node->name,
                       fmt::format("{} takes {} input{}, got {}", def.type, want, want == "1" ? "" : "s", n));
    }
    if (def.type == "NoOp") {
      node->control_inputs = ids;
    } else {
      node->inputs = ids;
    }
    return Status::Ok();
  }

  Status AddNode(Node node, const OpDef& def, const YAML::Node& where) {
    std::vector<const Node*> inputs;
    for (int id : node.inputs) inputs.push_back(&graph_.nodes[id]);
    Status s = def.infer(node, inputs);
    if (!s.ok()) return NodeError(where, node.name, s.message());
    node.id = static_cast<int>(graph_.nodes.size());
    graph_.by_name[node.name] = node.id;
    graph_.nodes.push_back(std::move(node));
    return Status::Ok();
  }

  // tf.Variable in TF1: name/initial_value (Const), name (VariableV2),
  // name/Assign, name/read (Identity); Assign and read colocate with it.
  Status LoadVariable(const YAML::Node& entry, const Scope& scope, const std::string& base) {
    const std::string var = namer_.Unique(scope.name_prefix + base);
    auto make = [&](const std::string& name, const std::string& op) {
      Node n;
      n.name = name;
      n.op = op;
      n.location = LocationOf(entry);
      n.requested_device = scope.device;
      n.requested_device_text = scope.device_text;
      return n;
    };
    Node init_value = make(namer_.Unique(var + "/initial_value"), "Const");
    TFRUN_RETURN_IF_ERROR(ReadTensorData(entry, var, &init_value));
    const int init_id = static_cast<int>(graph_.nodes.size());
    TFRUN_RETURN_IF_ERROR(AddNode(init_value, *FindOp("Const"), entry));

    Node variable = make(var, "VariableV2");
    variable.dtype = graph_.nodes[init_id].dtype;
    variable.shape = graph_.nodes[init_id].shape;
    variable.variable = var;
    const int var_id = static_cast<int>(graph_.nodes.size());
    TFRUN_RETURN_IF_ERROR(AddNode(variable, *FindOp("VariableV2"), entry));

    Node assign = make(namer_.Unique(var + "/Assign"), "Assign");
    assign.inputs = {var_id, init_id};
    assign.variable = var;
    assign_ids_.push_back(static_cast<int>(graph_.nodes.size()));
    TFRUN_RETURN_IF_ERROR(AddNode(assign, *FindOp("Assign"), entry));

    Node read = make(namer_.Unique(var + "/read"), "Identity");
    read.inputs = {var_id};
    read.variable = var;
    variable_reads_[var_id] = static_cast<int>(graph_.nodes.size());
    return AddNode(read, *FindOp("Identity"), entry);
  }

  // tf.global_variables_initializer(): one NoOp "init" after all nodes.
  // control_flow_ops.group() creates it under the initialisers' device when
  // they all request the same one.
  void AddVariableInitializer() {
    if (assign_ids_.empty()) return;
    Node init;
    const Node& first = graph_.nodes[assign_ids_[0]];
    bool same = true;
    for (int id : assign_ids_) same = same && graph_.nodes[id].requested_device == first.requested_device;
    if (same) {
      init.requested_device = first.requested_device;
      init.requested_device_text = first.requested_device_text;
    }
    init.name = namer_.Unique("init");
    init.op = "NoOp";
    init.has_output = false;
    init.control_inputs = assign_ids_;
    init.id = static_cast<int>(graph_.nodes.size());
    graph_.by_name[init.name] = init.id;
    graph_.nodes.push_back(std::move(init));
  }

  // --- tensor data -------------------------------------------------------------

  Status ReadShape(const YAML::Node& n, const std::string& node_name, Shape* shape) const {
    if (!n.IsSequence()) return NodeError(n, node_name, "shape must be a list of dimensions, e.g. [2, 3]");
    if (n.size() > static_cast<size_t>(kMaxRank)) {
      return NodeError(n, node_name, fmt::format("rank {} exceeds the maximum rank {}", n.size(), kMaxRank));
    }
    for (const YAML::Node& d : n) {
      int64_t v = 0;
      Status s = ReadInt(d, "a dimension", 0, std::numeric_limits<int64_t>::max(), &v);
      if (!s.ok()) {
        return NodeError(
            d, node_name,
            fmt::format("dimension '{}' is not a non-negative 64-bit integer", d.IsScalar() ? d.Scalar() : "(a list)"));
      }
      shape->push_back(v);
    }
    std::optional<int64_t> count = NumElements(*shape);
    if (!count)
      return NodeError(n, node_name,
                       fmt::format("shape {} has more elements than fit in 64 bits", ShapeDebugString(*shape)));
    return Status::Ok();
  }

  Status ReadTensorData(const YAML::Node& entry, const std::string& node_name, Node* node) {
    DType dtype = DType::kFloat32;
    if (const YAML::Node d = entry["dtype"]) {
      TFRUN_ASSIGN_OR_RETURN(dtype, ReadDType(d, node_name));
    }
    std::optional<Shape> shape;
    if (const YAML::Node s = entry["shape"]) {
      shape.emplace();
      TFRUN_RETURN_IF_ERROR(ReadShape(s, node_name, &*shape));
    }
    std::vector<std::string> sources;
    for (const char* key : {"value", "fill", "random", "npy"}) {
      if (entry[key]) sources.emplace_back(key);
    }
    if (sources.size() != 1) {
      return NodeError(entry, node_name,
                       sources.empty() ? "needs its data: one of value, fill, random or npy"
                                       : fmt::format("give only one of value, fill, random or npy (got {})",
                                                     fmt::join(sources, ", ")));
    }
    const YAML::Node src = entry[sources[0]];
    if (sources[0] == "npy") return ReadNpyData(src, node_name, dtype, entry["dtype"].IsDefined(), shape, node);

    if (sources[0] == "value" && src.IsSequence()) {
      std::vector<Scalar> leaves;
      Shape nested;
      int leaf_depth = -1;
      TFRUN_RETURN_IF_ERROR(
          Flatten(src, node_name, dtype, 0, shape ? NumElements(*shape).value() : -1, &leaves, &nested, &leaf_depth));
      if (leaf_depth >= 0 && static_cast<int>(nested.size()) != leaf_depth + 1) {
        return NodeError(src, node_name, "value is ragged: numbers and lists mixed at one level");
      }
      if (!shape) {
        shape = nested;
      } else if (nested != *shape && !(nested.size() == 1 && nested[0] == NumElements(*shape).value())) {
        return NodeError(
            src, node_name,
            fmt::format("value has shape {} ({} elements) but shape is {} ({} elements)", ShapeDebugString(nested),
                        leaves.size(), ShapeDebugString(*shape), NumElements(*shape).value()));
      }
      TFRUN_RETURN_IF_ERROR(AllocateData(src, node_name, dtype, *shape, node));
      for (size_t i = 0; i < leaves.size(); ++i) Store(leaves[i], node->value, i);
      return Status::Ok();
    }
    if (sources[0] == "value" || sources[0] == "fill") {
      if (!src.IsScalar())
        return NodeError(src, node_name,
                         fmt::format("{} must be a number{}", sources[0], sources[0] == "value" ? " or a list" : ""));
      if (!shape) shape = Shape{};
      Scalar v;
      TFRUN_RETURN_IF_ERROR(ParseElement(src, node_name, dtype, &v.f, &v.i, &v.b));
      TFRUN_RETURN_IF_ERROR(AllocateData(src, node_name, dtype, *shape, node));
      if (node->value.num_elements() == 0) return Status::Ok();
      Store(v, node->value, 0);
      const size_t elem = Info(dtype).size;
      char* base = static_cast<char*>(node->value.raw());
      ParallelFor(node->value.num_elements(), [&](int64_t begin, int64_t end) {
        for (int64_t i = std::max<int64_t>(begin, 1); i < end; ++i) std::memcpy(base + i * elem, base, elem);
      });
      return Status::Ok();
    }
    if (!shape) shape = Shape{};
    return ReadRandom(src, node_name, dtype, *shape, node);
  }

  // One parsed element of a value list.
  struct Scalar {
    double f = 0;
    int64_t i = 0;
    bool b = false;
  };

  // A literal value list longer than this is refused: YAML lists that long
  // only come from alias bombs (npy, fill and random have no such limit).
  static constexpr int64_t kMaxLiteralElements = int64_t{1} << 20;

  // Flattens a nested value list, parsing each element as `dtype` and
  // inferring the shape. Rectangular means: every list at one depth has the
  // same length and every number sits at the same depth.
  Status Flatten(const YAML::Node& n, const std::string& node_name, DType dtype, int depth, int64_t expected,
                 std::vector<Scalar>* leaves, Shape* shape, int* leaf_depth) const {
    if (depth >= kMaxRank) {
      return NodeError(n, node_name, fmt::format("value nests deeper than the maximum rank {}", kMaxRank));
    }
    const int64_t size = static_cast<int64_t>(n.size());
    if (static_cast<int>(shape->size()) == depth) {
      shape->push_back(size);
    } else if ((*shape)[depth] != size) {
      return NodeError(
          n, node_name,
          fmt::format("value is ragged: a list of {} where lists of {} came before", size, (*shape)[depth]));
    }
    for (const YAML::Node& child : n) {
      if (child.IsSequence()) {
        TFRUN_RETURN_IF_ERROR(Flatten(child, node_name, dtype, depth + 1, expected, leaves, shape, leaf_depth));
        continue;
      }
      if (*leaf_depth < 0) *leaf_depth = depth;
      if (*leaf_depth != depth || static_cast<int>(shape->size()) != depth + 1) {
        return NodeError(child, node_name, "value is ragged: numbers and lists mixed at one level");
      }
      if (expected >= 0 && static_cast<int64_t>(leaves->size()) == expected) {
        return NodeError(child, node_name,
                         fmt::format("value has more than the {} elements its shape holds", expected));
      }
      if (static_cast<int64_t>(leaves->size()) == kMaxLiteralElements) {
        return NodeError(
            child, node_name,
            fmt::format("value lists more than {} elements; use npy, fill or random", kMaxLiteralElements));
      }
      Scalar v;
      TFRUN_RETURN_IF_ERROR(ParseElement(child, node_name, dtype, &v.f, &v.i, &v.b));
      leaves->push_back(v);
    }
    return Status::Ok();
  }

  Status AllocateData(const YAML::Node& where, const std::string& node_name, DType dtype, const Shape& shape,
                      Node* node) {
    const int64_t n = NumElements(shape).value();
    int64_t bytes = 0;
    if (__builtin_mul_overflow(n, static_cast<int64_t>(Info(dtype).size), &bytes)) {
      return NodeError(
          where, node_name,
          fmt::format("shape {} of {} needs more bytes than fit in 64 bits", ShapeDebugString(shape), Name(dtype)));
    }
    if (total_bytes_ + bytes > limits_.max_tensor_bytes) {
      return NodeError(where, node_name,
                       fmt::format("constants would need more than {} bytes (the tensor-bytes limit, "
                                   "--max-tensor-bytes)",
                                   limits_.max_tensor_bytes));
    }
    total_bytes_ += bytes;
    StatusOr<Tensor> t = Tensor::AllocateHost(dtype, shape);
    if (!t.ok()) return NodeError(where, node_name, t.status().message());
    node->value = std::move(*t);
    node->dtype = dtype;
    node->shape = shape;
    return Status::Ok();
  }

  // Parses one YAML scalar as a value of `dtype`.
  Status ParseElement(const YAML::Node& n, const std::string& node_name, DType dtype, double* f, int64_t* i,
                      bool* b) const {
    if (!n.IsScalar()) return NodeError(n, node_name, "each value must be a number");
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return NodeError(n, node_name, fmt::format("value '{}' is a string, not a number", s));
    if (dtype == DType::kBool) {
      if (s == "true" || s == "True" || s == "TRUE") {
        *b = true;
        return Status::Ok();
      }
      if (s == "false" || s == "False" || s == "FALSE") {
        *b = false;
        return Status::Ok();
      }
      return NodeError(n, node_name, fmt::format("value '{}' is not a bool (true or false)", s));
    }
    if (Info(dtype).is_integer) {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0') {
        return NodeError(n, node_name, fmt::format("value '{}' is not an integer, as {} needs", s, Name(dtype)));
      }
      const bool is32 = dtype == DType::kInt32;
      if (errno == ERANGE || (is32 && (v < INT32_MIN || v > INT32_MAX))) {
        return NodeError(n, node_name, fmt::format("value {} does not fit {}", s, Name(dtype)));
      }
      *i = v;
      return Status::Ok();
    }
    static const std::set<std::string> kNan = {"nan", "NaN", "NAN", ".nan", ".NaN", ".NAN"};
    static const std::set<std::string> kInf = {"inf", "Inf", "INF", ".inf", ".Inf", ".INF", "infinity", "Infinity"};
    std::string body = s;
    double sign = 1;
    if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
      sign = body[0] == '-' ? -1 : 1;
      body = body.substr(1);
    }
    if (kNan.count(body)) {
      *f = std::numeric_limits<double>::quiet_NaN();
      return Status::Ok();
    }
    if (kInf.count(body)) {
      *f = sign * std::numeric_limits<double>::infinity();
      return Status::Ok();
    }
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || std::isnan(v) || std::isinf(v) || s.find_first_of("xX") != std::string::npos) {
      if (errno == ERANGE || std::isinf(v)) {
        return NodeError(n, node_name, fmt::format("value {} does not fit {}", s, Name(dtype)));
      }
      return NodeError(n, node_name, fmt::format("value '{}' is not a number", s));
    }
    const double max = dtype == DType::kFloat32    ? std::numeric_limits<float>::max()
                       : dtype == DType::kFloat16  ? 65504.0
                       : dtype == DType::kBFloat16 ? 3.3895313892515355e38
                                                   : std::numeric_limits<double>::max();
    // Values that round to the largest finite value still fit.
    double rounded = dtype == DType::kFloat32   ? static_cast<double>(static_cast<float>(v))
                     : dtype == DType::kFloat16 ? static_cast<double>(static_cast<float>(Eigen::half(v)))
                     : dtype == DType::kBFloat16
                         ? static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(v))))
                         : v;
    if (std::isinf(rounded) || std::fabs(rounded) > max) {
      return NodeError(n, node_name, fmt::format("value {} does not fit {}", s, Name(dtype)));
    }
    *f = v;
    return Status::Ok();
  }

  static void Store(const Scalar& v, Tensor& t, int64_t index) {
    DispatchDType(t.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        t.data<T>()[index] = v.b;
      } else if constexpr (std::is_integral_v<T>) {
        t.data<T>()[index] = static_cast<T>(v.i);
      } else if constexpr (std::is_same_v<T, double>) {
        t.data<T>()[index] = v.f;
      } else {
        t.data<T>()[index] = T(static_cast<float>(v.f));  // float32, and via float for 16-bit types
      }
    });
  }

  Status ReadRandom(const YAML::Node& r, const std::string& node_name, DType dtype, const Shape& shape, Node* node) {
    if (!r.IsMap())
      return NodeError(r, node_name,
                       "random must be a mapping such as {distribution: uniform, min: 0, max: 1, seed: 7}");
    TFRUN_RETURN_IF_ERROR(CheckKeys(r, kRandomKeys, "random"));
    std::string dist = "uniform";
    if (const YAML::Node d = r["distribution"]) {
      if (!d.IsScalar() || (d.Scalar() != "uniform" && d.Scalar() != "normal")) {
        return NodeError(d, node_name, "distribution must be uniform or normal");
      }
      dist = d.Scalar();
    }
    if (dist == "uniform" && (r["mean"] || r["stddev"]))
      return NodeError(r, node_name, "uniform takes min and max, not mean or stddev");
    if (dist == "normal" && (r["min"] || r["max"]))
      return NodeError(r, node_name, "normal takes mean and stddev, not min or max");
    if (dtype == DType::kBool) return NodeError(r, node_name, "random needs a numeric dtype");
    if (dist == "normal" && Info(dtype).is_integer)
      return NodeError(r, node_name, "a normal distribution needs a float dtype");
    double a = 0, b = 1;  // min/max or mean/stddev
    int64_t seed = 0;
    auto read = [&](const char* key, double* out) -> Status {
      if (const YAML::Node v = r[key]) {
        Status s = ReadDouble(v, key, out);
        if (!s.ok()) return NodeError(v, node_name, fmt::format("{} must be a finite number", key));
      }
      return Status::Ok();
    };
    TFRUN_RETURN_IF_ERROR(read(dist == "uniform" ? "min" : "mean", &a));
    TFRUN_RETURN_IF_ERROR(read(dist == "uniform" ? "max" : "stddev", &b));
    if (const YAML::Node s = r["seed"]) {
      TFRUN_RETURN_IF_ERROR(ReadInt(s, "seed", 0, std::numeric_limits<int64_t>::max(), &seed, node_name));
    }
    if (dist == "uniform" && !(a < b)) return NodeError(r, node_name, "uniform needs min < max");
    if (dist == "normal" && b < 0) return NodeError(r, node_name, "stddev must not be negative");
    TFRUN_RETURN_IF_ERROR(AllocateData(r, node_name, dtype, shape, node));
    const uint64_t useed = static_cast<uint64_t>(seed);
    const bool uniform = dist == "uniform";
    DispatchDType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = node->value.data<T>();
      ParallelFor(node->value.num_elements(), [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          if constexpr (std::is_integral_v<T>) {
            // [min, max) like tf.random.uniform for integers.
            const double lo = std::ceil(a), span = std::ceil(b) - lo;
            out[k] = static_cast<T>(lo + std::floor(UniformUnit(useed, k) * span));
          } else {
            double x = uniform ? a + (b - a) * UniformUnit(useed, k) : a + b * StandardNormal(useed, k);
            if constexpr (std::is_same_v<T, double>) {
              out[k] = x;
            } else {
              out[k] = T(static_cast<float>(x));
            }
          }
        }
      });
    });
    return Status::Ok();
  }

  Status ReadNpyData(const YAML::Node& src, const std::string& node_name, DType dtype, bool dtype_given,
                     const std::optional<Shape>& shape, Node* node) {
    if (!src.IsScalar()) return NodeError(src, node_name, "npy must be a file path");
    const std::string path = !src.Scalar().empty() && src.Scalar()[0] == '/' ? src.Scalar() : dir_ + src.Scalar();
    StatusOr<Tensor> t = ReadNpy(path);
    if (!t.ok()) return NodeError(src, node_name, t.status().message());
    if (dtype_given && t->dtype() != dtype) {
      return NodeError(src, node_name,
                       fmt::format("{} holds {} but dtype is {}", src.Scalar(), Name(t->dtype()), Name(dtype)));
    }
    if (shape && t->shape() != *shape) {
      return NodeError(src, node_name,
                       fmt::format("{} has shape {} but shape is {}", src.Scalar(), ShapeDebugString(t->shape()),
                                   ShapeDebugString(*shape)));
    }
    total_bytes_ += static_cast<int64_t>(t->num_bytes());
    if (total_bytes_ > limits_.max_tensor_bytes) {
      return NodeError(src, node_name,
                       fmt::format("constants would need more than {} bytes (the tensor-bytes limit, "
                                   "--max-tensor-bytes)",
                                   limits_.max_tensor_bytes));
    }
    node->dtype = t->dtype();
    node->shape = t->shape();
    node->value = std::move(*t);
    return Status::Ok();
  }

  // --- fetch ---------------------------------------------------------------------

  Status LoadFetch(const YAML::Node& fetch) {
    if (!fetch) {
      // Every node no other node consumes, in file order; NoOps have no
      // value to print, so they are left out.
      std::vector<bool> consumed(graph_.nodes.size(), false);
      for (const Node& n : graph_.nodes) {
        for (int id : n.inputs) consumed[id] = true;
        for (int id : n.control_inputs) consumed[id] = true;
      }
      for (const Node& n : graph_.nodes) {
        if (!consumed[n.id] && n.has_output) graph_.fetch.push_back(n.id);
      }
      return Status::Ok();
    }
    if (!fetch.IsSequence()) return ErrorAt(fetch, "fetch must be a list of node names");
    for (const YAML::Node& f : fetch) {
      if (!f.IsScalar()) return ErrorAt(f, "each fetch must be a node name");
      const Node* n = graph_.Find(f.Scalar());
      if (n == nullptr) {
        return ErrorAt(
            f, fmt::format("fetch '{}' names no node{}", f.Scalar(), DidYouMean(f.Scalar(), graph_.NodeNames())));
      }
      if (std::find(graph_.fetch.begin(), graph_.fetch.end(), n->id) != graph_.fetch.end()) {
        return ErrorAt(f, fmt::format("'{}' is fetched twice", f.Scalar()));
      }
      graph_.fetch.push_back(n->id);
    }
    if (graph_.fetch.empty()) return ErrorAt(fetch, "fetch is empty");
    return Status::Ok();
  }

  LoadLimits limits_;
  std::string dir_;
  Graph graph_;
  UniqueNamer namer_;
  std::set<std::string> later_names_;
  std::unordered_map<int, int> variable_reads_;  // VariableV2 id -> read id
  std::vector<int> assign_ids_;
  int64_t total_bytes_ = 0;
};

}  // namespace

std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string hint = ClosestMatch(word, candidates);
  return hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint);
}

StatusOr<Graph> LoadGraphText(const std::string& text, const std::string& path, const LoadLimits& limits) {
  Loader loader(path, limits);
  return loader.Load(text);
}

StatusOr<Graph> LoadGraphFile(const std::string& path, const LoadLimits& limits) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return BadInput(fmt::format("{}: cannot read graph file: {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) return BadInput(fmt::format("{}: is a directory, not a graph file", path));
  if (!S_ISREG(st.st_mode)) return BadInput(fmt::format("{}: not a regular file", path));
  if (st.st_size > limits.max_file_bytes) {
    return BadInput(fmt::format("{}: file is {} bytes, over the {}-byte limit for graph files (--max-file-bytes)", path,
                                st.st_size, limits.max_file_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadInput(fmt::format("{}: cannot read graph file: {}", path, std::strerror(errno)));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return LoadGraphText(buffer.str(), path, limits);
}

}  // namespace tfrun
