#include "core/graph_file/loader.h"
#include "core/base/device_types.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/base/did_you_mean.h"
#include "core/graph_file/fetch.h"
#include "core/graph_file/graph_builder.h"
#include "core/graph_file/graph_config.h"
#include "core/graph_file/keras_program.h"
#include "core/graph_file/names_and_scopes.h"
#include "core/graph_file/op_attributes.h"
#include "core/graph_file/split_concat.h"
#include "core/graph_file/tensor_literal.h"
#include "core/graph_file/variables.h"
#include "core/graph_file/yaml_document.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {
namespace {

// A TensorFlow op's later version (AddV2, what tf.add builds in TensorFlow
// 2) names the op a graph file writes (Add); a near miss gets "did you
// mean"; anything else, where the ops are listed.
std::string UnknownOpHint(const std::string& op, const std::vector<std::string>& ops) {
  const size_t v = op.rfind('V');
  if (v != std::string::npos && v > 0 && v + 1 < op.size() &&
      op.find_first_not_of("0123456789", v + 1) == std::string::npos &&
      std::find(ops.begin(), ops.end(), op.substr(0, v)) != ops.end()) {
    return fmt::format(" (graph files write TensorFlow's {} as '{}')", op, op.substr(0, v));
  }
  const std::string hint = DidYouMean(op, ops);
  return hint.empty() ? " (tfrun ops lists the ops a graph file can use)" : hint;
}

}  // namespace
namespace {

const std::vector<std::string> kTopKeys = {"version", "config", "nodes", "fetch", "targets", "keras"};
const std::vector<std::string> kCommonNodeKeys = {"name", "op", "inputs", "device", "colocate_with"};

bool IsValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    // Graph files are mostly ASCII: step over it eight bytes at a time.
    uint64_t eight;
    while (i + 8 <= s.size() && (std::memcpy(&eight, s.data() + i, 8), (eight & 0x8080808080808080ull) == 0)) i += 8;
    if (i == s.size()) break;
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

// A graph file is UTF-8 text without NUL bytes.
Status CheckIsText(const std::string& text, const std::string& path) {
  if (!IsValidUtf8(text)) return BadInput(fmt::format("{}: not a text file (invalid UTF-8)", path));
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n'));
    const size_t line_start = text.rfind('\n', nul);
    const int column = static_cast<int>(nul - (line_start == std::string::npos ? 0 : line_start + 1)) + 1;
    return BadInput(fmt::format("{}:{}:{}: not a text file (a NUL byte)", path, line, column));
  }
  return Status::Ok();
}

// Reads to the end, whatever the size the file system reported (files
// under /proc say 0).
std::string ReadAll(std::ifstream& in, size_t expected_size) {
  std::string text(expected_size + 1, '\0');
  size_t size = 0;
  while (in) {
    if (size == text.size()) text.resize(2 * text.size());
    in.read(text.data() + size, static_cast<std::streamsize>(text.size() - size));
    size += static_cast<size_t>(in.gcount());
  }
  text.resize(size);
  return text;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// The name a node gets when the file gives none: the op's, or the name
// its Python function defaults to (tf.split's "split", tf.concat's "concat").
std::string DefaultName(const std::string& op) {
  if (op == "Split") return "split";
  if (op == "ConcatV2") return "concat";
  return op;
}

// Walks a parsed graph file in program order and wires the steps.
class GraphFileLoader {
 public:
  GraphFileLoader(const YamlDocument& doc, const std::string& path, const LoadOptions& limits,
                  const LogicalDeviceLister& devices)
      : doc_(doc),
        limits_(limits),
        devices_(devices),
        fields_(path),
        builder_(fields_, &graph_, [this](const std::string& name) { return DefinedLater(name); },
                 limits.construction_errors),
        scopes_(fields_, &namer_),
        literals_(fields_, DirectoryOf(path), limits.max_tensor_bytes),
        variables_(&builder_, &namer_, &literals_),
        split_concat_(&builder_, &namer_, [this](std::string_view type) { return CountDevices(type); }) {
    graph_.path = path;
  }

  StatusOr<Graph> Load() {
    const YamlNode root = doc_.root();
    if (root.IsNull()) return BadInput(fmt::format("{}: empty graph file", graph_.path));
    if (!root.IsMap()) {
      return fields_.ErrorAt(root, "a graph file is a mapping with 'nodes' (and optionally version, config, fetch)");
    }
    TFRUN_RETURN_IF_ERROR(fields_.CheckKeys(root, kTopKeys, "the graph file"));
    if (const YamlNode v = root["version"]) {
      if (!v.IsScalar() || v.Scalar() != "1") {
        return fields_.ErrorAt(v, fmt::format("unsupported version '{}': this tfrun reads version 1",
                                              v.IsScalar() ? v.Scalar() : "?"));
      }
    }
    if (const YamlNode c = root["config"]) TFRUN_RETURN_IF_ERROR(ReadGraphConfig(fields_, c, &graph_.config));
    if (const YamlNode keras = root["keras"]) {
      // A Keras program is the program: it has no nodes of its own.
      for (const char* key : {"nodes", "fetch", "targets"}) {
        if (const YamlNode other = root[key]) {
          return fields_.ErrorAt(other, fmt::format("a Keras program (keras:) has no '{}'", key));
        }
      }
      TFRUN_RETURN_IF_ERROR(ReadKerasProgram(fields_, keras, &graph_.keras));
      return std::move(graph_);
    }
    const YamlNode nodes = root["nodes"];
    if (!nodes) return BadInput(fmt::format("{}: the graph file has no 'nodes'", graph_.path));
    Reserve(std::min<size_t>(nodes.size(), limits_.max_nodes));
    TFRUN_RETURN_IF_ERROR(ReadNodeList(nodes, Scope{}, 1));
    TFRUN_RETURN_IF_ERROR(variables_.AddInitializer());
    if (graph_.nodes.empty()) return fields_.ErrorAt(nodes, "the graph has no nodes");
    TFRUN_RETURN_IF_ERROR(ReadFetch(fields_, root["fetch"], root["targets"], &graph_));
    return std::move(graph_);
  }

 private:
  Status ReadNodeList(const YamlNode& list, const Scope& scope, int depth) {
    if (depth > limits_.max_depth) {
      return fields_.ErrorAt(
          list, fmt::format("scopes nested deeper than {} levels (the depth limit, --max-depth)", limits_.max_depth));
    }
    if (!list.IsSequence()) return fields_.ErrorAt(list, "'nodes' must be a list");
    for (const YamlNode& entry : list.Elements()) {
      if (!entry.IsMap()) return fields_.ErrorAt(entry, "each entry of 'nodes' must be a mapping (a node or a scope)");
      if (++entries_read_ > EntryBudget()) {
        return fields_.ErrorAt(entry, fmt::format("more than {} nodes and scopes (twice the node-count limit, "
                                                  "--max-nodes)",
                                                  EntryBudget()));
      }
      if (const YamlNode each = entry["for_each_device"]) {
        TFRUN_RETURN_IF_ERROR(ReadReplicated(entry, each, scope, depth));
      } else if (const YamlNode nested = entry["nodes"]) {
        TFRUN_ASSIGN_OR_RETURN(const Scope inner, scopes_.Enter(entry, scope, graph_));
        TFRUN_RETURN_IF_ERROR(ReadNodeList(nested, inner, depth + 1));
      } else {
        TFRUN_RETURN_IF_ERROR(ReadNode(entry, scope));
      }
    }
    return Status::Ok();
  }

  // `for_each_device: GPU`: the scope's nodes once per logical device of
  // that type, each copy under `with tf.device(device.name)` (the TF2 GPU
  // guide's manual replication, the TF 1.x tower loop). Names are made
  // unique as for any repeated node; inside the scope a name as written
  // means the current copy, after it the list of all copies.
  Status ReadReplicated(const YamlNode& entry, const YamlNode& each, const Scope& scope, int depth) {
    const YamlNode nested = entry["nodes"];
    if (!nested) return fields_.ErrorAt(entry, "a for_each_device scope needs 'nodes'");
    std::string type = each.IsScalar() ? each.ScalarString() : "";
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::toupper(c); });
    if (type != kGpu && type != kCpu) {
      return fields_.ErrorAt(each, fmt::format("for_each_device must be GPU or CPU (got '{}')",
                                               each.IsScalar() ? each.Scalar() : "a collection"));
    }
    TFRUN_ASSIGN_OR_RETURN(const std::vector<int> ids, DeviceIds(type));
    const size_t first = created_.size();
    ++replicating_;
    const std::optional<int> outer_copy = copy_index_;
    for (size_t copy = 0; copy < ids.size(); ++copy) {
      const int id = ids[copy];
      copy_index_ = static_cast<int>(copy);
      builder_.set_copy_index(copy_index_);
      TFRUN_ASSIGN_OR_RETURN(Scope inner, scopes_.Enter(entry, scope, graph_));
      DeviceSpec device;
      device.type = type;
      device.id = id;
      inner.device = device.MergedOver(inner.device);
      inner.device_text = fmt::format("/device:{}:{}", type, id);
      TFRUN_RETURN_IF_ERROR(ReadNodeList(nested, inner, depth + 1));
    }
    copy_index_ = outer_copy;
    builder_.set_copy_index(copy_index_);
    --replicating_;
    std::vector<std::string> keys;  // in order of first appearance
    std::unordered_map<std::string, std::vector<int>> copies;
    for (size_t i = first; i < created_.size(); ++i) {
      auto [it, added] = copies.try_emplace(created_[i].first);
      if (added) keys.push_back(created_[i].first);
      it->second.push_back(created_[i].second);
    }
    for (const std::string& key : keys) builder_.Alias(key, std::move(copies[key]), type);
    // Names the scope writes but that no copy made (no device of the type).
    if (ids.empty()) CollectWrittenNames(nested, scope.eager_prefix, depth + 1, type);
    if (replicating_ == 0) created_.clear();
    return Status::Ok();
  }

  // The logical devices of `type` the run will have (CPU:0 alone without a lister).
  StatusOr<std::vector<int>> DeviceIds(const std::string& type) {
    if (devices_) return devices_(graph_.config, type);
    if (type == kGpu) return std::vector<int>{};
    return std::vector<int>{0};
  }

  StatusOr<int> CountDevices(std::string_view type) {
    TFRUN_ASSIGN_OR_RETURN(const std::vector<int> ids, DeviceIds(std::string(type)));
    return static_cast<int>(ids.size());
  }

  // Binds the name as the file writes it (`scope`'s name scopes as written,
  // then `base`) to the node just made, when it is a loop's copy or
  // rebinds a loop's name. Files without loops build no string for it.
  void Bind(const Scope& scope, const std::string& base, int id) {
    if (replicating_ == 0 && !builder_.HasAliases()) return;
    const std::string written = scope.eager_prefix + base;
    if (replicating_ == 0 && !builder_.HasAlias(written)) return;
    builder_.Alias(written, {id}, "");
    if (replicating_ > 0) created_.emplace_back(written, id);
  }

  // With no device to copy them to, each name the scope writes stands for
  // an empty list; using one is an error that says why.
  void CollectWrittenNames(const YamlNode& list, const std::string& prefix, int depth, const std::string& type) {
    int64_t seen = 0;
    ForEachWrittenNode(list, prefix, depth, &seen, [&](const std::string& scopes, const YamlNode& entry) {
      const YamlNode name = entry["name"];
      const YamlNode op = entry["op"];
      const std::string base = name && name.IsScalar() ? name.ScalarString() : op && op.IsScalar() ? DefaultName(op.ScalarString()) : "";
      if (!base.empty()) builder_.Alias(scopes + base, {}, type);
    });
  }

  // Calls visit(scopes, entry) for each node entry in `list` and the scopes
  // in it, `scopes` being their name_scopes as written. `*seen` counts the
  // entries against the entry budget: scopes repeated through aliases could
  // make 2^60 of them.
  template <typename Visit>
  void ForEachWrittenNode(const YamlNode& list, const std::string& prefix, int depth, int64_t* seen,
                          const Visit& visit) {
    if (!list.IsSequence() || depth > limits_.max_depth) return;
    for (const YamlNode& entry : list.Elements()) {
      if (!entry.IsMap() || ++*seen > EntryBudget()) continue;
      if (const YamlNode nested = entry["nodes"]) {
        const YamlNode ns = entry["name_scope"];
        ForEachWrittenNode(nested, ns && ns.IsScalar() ? prefix + ns.ScalarString() + "/" : prefix, depth + 1, seen,
                           visit);
      } else {
        visit(prefix, entry);
      }
    }
  }

  Status ReadNode(const YamlNode& entry, const Scope& scope) {
    const YamlNode op_node = entry["op"];
    if (!op_node) return fields_.ErrorAt(entry, "a node needs 'op' (or 'nodes', for a scope)");
    if (!op_node.IsScalar()) return fields_.ErrorAt(op_node, "op must be a string");
    const std::string op = op_node.ScalarString();
    const OpDef* def = FindOp(op);
    if (def == nullptr || !def->in_graph_files) {
      std::vector<std::string> ops;
      for (const OpDef& d : AllOps()) {
        if (d.in_graph_files) ops.emplace_back(d.type);
      }
      return fields_.ErrorAt(op_node, fmt::format("unknown op '{}'{}", ClipForMessage(op), UnknownOpHint(op, ops)));
    }
    TFRUN_RETURN_IF_ERROR(fields_.CheckKeys(entry, KeysOf(*def), fmt::format("a {} node", op)));
    const bool is_variable = op == "Variable";
    if (static_cast<int64_t>(graph_.nodes.size()) + (is_variable ? 4 : SplitConcatExpander::Expands(op) ? 2 : 1) >
        limits_.max_nodes) {
      return fields_.ErrorAt(entry,
                             fmt::format("more than {} nodes (the node-count limit, --max-nodes)", limits_.max_nodes));
    }
    std::string base = DefaultName(op);
    if (const YamlNode n = entry["name"]) {
      if (!n.IsScalar()) return fields_.ErrorAt(n, "name must be a string");
      if (!IsValidNodeName(n.Scalar(), false)) {
        return fields_.ErrorAt(n,
                               fmt::format("invalid node name '{}' (letters, digits, '.', '_', '-', '/')",
                                           ClipForMessage(n.Scalar())));
      }
      base = n.ScalarString();
    }
    TFRUN_ASSIGN_OR_RETURN(const Scope node_scope, scopes_.ForNode(entry, scope, scope.name_prefix + base, graph_));
    if (is_variable) {
      TFRUN_ASSIGN_OR_RETURN(const int var_id, variables_.Expand(entry, node_scope, base));
      Bind(scope, base, var_id);
      return Status::Ok();
    }

    Node node;
    node.op = op;
    node.name = namer_.Unique(scope.name_prefix + base);
    node.explicit_name = entry["name"].defined();
    node.location = entry.location();
    node.requested_device = node_scope.device;
    node.requested_device_text = node_scope.device_text;
    ApplyColocation(graph_, node_scope, &node);
    TFRUN_RETURN_IF_ERROR(builder_.ReadInputs(entry, *def, &node));
    TFRUN_RETURN_IF_ERROR(ReadOpAttributes(entry, fields_, &literals_, &node));
    const bool expands = SplitConcatExpander::Expands(op);
    TFRUN_ASSIGN_OR_RETURN(const int id, expands ? split_concat_.Add(entry, std::move(node), base)
                                                 : builder_.Add(std::move(node), *def, entry));
    // Each output is a slot the executor keeps: 300 Splits of 10^6 slices
    // would be 3 * 10^8 of them from a 15 KB file.
    if ((outputs_ += graph_.nodes[id].num_outputs) > limits_.max_nodes) {
      return fields_.ErrorAt(entry, fmt::format("more than {} node outputs (the node-count limit, --max-nodes, "
                                                "bounds the outputs too)",
                                                limits_.max_nodes));
    }
    Bind(scope, base, id);
    return Status::Ok();
  }

  // Room for about `n` nodes (the top-level entries; scopes may hold more),
  // so the node array and name tables grow without rehashing.
  void Reserve(size_t n) {
    graph_.nodes.reserve(n);
    graph_.by_name.Reserve(n);
    namer_.Reserve(n);
  }

  // Entries of 'nodes' lists (nodes and scopes) read at most. Without
  // aliases a file holds each entry once; scopes repeated through aliases
  // (a scope "bomb") could make 2^60 of them, and the node-count limit
  // alone never stops empty scopes.
  int64_t EntryBudget() const { return 2 * static_cast<int64_t>(limits_.max_nodes); }

  // The keys a node of `def`'s op may have, computed once per op.
  const std::vector<std::string>& KeysOf(const OpDef& def) {
    std::vector<std::string>& keys = node_keys_[def.type];
    if (keys.empty()) {
      keys = kCommonNodeKeys;
      keys.insert(keys.end(), def.attributes.begin(), def.attributes.end());
    }
    return keys;
  }

  // Whether the file names `name` explicitly anywhere (scopes by their
  // name_scope as written). Only an error asks, so it is computed then.
  bool DefinedLater(const std::string& name) {
    if (!explicit_names_) {
      explicit_names_.emplace();
      CollectExplicitNames(doc_.root()["nodes"]);
    }
    return explicit_names_->count(name) != 0;
  }

  void CollectExplicitNames(const YamlNode& list) {
    ForEachWrittenNode(list, "", 1, &entries_named_, [&](const std::string& scopes, const YamlNode& entry) {
      if (const YamlNode name = entry["name"]; name && name.IsScalar()) {
        explicit_names_->insert(scopes + name.ScalarString());
      }
    });
  }


  const YamlDocument& doc_;
  LoadOptions limits_;
  const LogicalDeviceLister& devices_;
  Graph graph_;
  FieldReader fields_;
  UniqueNamer namer_;
  GraphBuilder builder_;
  ScopeReader scopes_;
  TensorLiteralReader literals_;
  VariableExpander variables_;
  int64_t outputs_ = 0;  // the nodes' outputs so far, against --max-nodes
  SplitConcatExpander split_concat_;
  std::unordered_map<std::string_view, std::vector<std::string>> node_keys_;
  std::optional<std::unordered_set<std::string>> explicit_names_;
  int64_t entries_read_ = 0;
  int64_t entries_named_ = 0;
  int replicating_ = 0;  // for_each_device scopes open
  std::optional<int> copy_index_;  // the innermost open scope's copy
  std::vector<std::pair<std::string, int>> created_;  // (name as written, id) made in them
};

}  // namespace

StatusOr<Graph> LoadGraphDocument(const YamlDocument& doc, const std::string& path, const LoadOptions& limits,
                                  const LogicalDeviceLister& devices) {
  return GraphFileLoader(doc, path, limits, devices).Load();
}

StatusOr<Graph> LoadGraphText(const std::string& text, const std::string& path, const LoadOptions& limits,
                              const LogicalDeviceLister& devices) {
  TFRUN_RETURN_IF_ERROR(CheckIsText(text, path));
  TFRUN_ASSIGN_OR_RETURN(const YamlDocument doc, ParseYaml(text, path));
  return LoadGraphDocument(doc, path, limits, devices);
}

StatusOr<std::string> ReadGraphStream(int fd, const std::string& label, const LoadOptions& limits) {
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return BadInput(fmt::format("{}: cannot read graph file: {}", label, std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > limits.max_file_bytes) {
      return BadInput(fmt::format("{}: more than the {}-byte limit for graph files (--max-file-bytes)", label,
                                  limits.max_file_bytes));
    }
  }
  return text;
}

namespace {

// A graph from standard input ("-"), a FIFO, /dev/stdin or a process
// substitution: read as it comes, up to the size limit.
StatusOr<Graph> LoadGraphStream(int fd, const std::string& label, const LoadOptions& limits,
                                const LogicalDeviceLister& devices) {
  TFRUN_ASSIGN_OR_RETURN(const std::string text, ReadGraphStream(fd, label, limits));
  return LoadGraphText(text, label, limits, devices);
}

}  // namespace

StatusOr<Graph> LoadGraphFile(const std::string& path, const LoadOptions& limits, const LogicalDeviceLister& devices) {
  if (path == "-") return LoadGraphStream(STDIN_FILENO, "<stdin>", limits, devices);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return BadInput(fmt::format("{}: cannot read graph file: {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) return BadInput(fmt::format("{}: is a directory, not a graph file", path));
  if (!S_ISREG(st.st_mode)) {
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return BadInput(fmt::format("{}: cannot read graph file: {}", path, std::strerror(errno)));
    StatusOr<Graph> graph = LoadGraphStream(fd, path, limits, devices);
    close(fd);
    return graph;
  }
  TFRUN_ASSIGN_OR_RETURN(const YamlDocument doc, ReadGraphYaml(path, limits));
  return LoadGraphDocument(doc, path, limits, devices);
}

StatusOr<YamlDocument> ReadGraphYaml(const std::string& path, const LoadOptions& limits) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return BadInput(fmt::format("{}: cannot read graph file: {}", path, std::strerror(errno)));
  }
  if (st.st_size > limits.max_file_bytes) {
    return BadInput(fmt::format("{}: file is {} bytes, over the {}-byte limit for graph files (--max-file-bytes)", path,
                                st.st_size, limits.max_file_bytes));
  }
  // The text is dropped once parsed: the document holds what is needed.
  std::ifstream in(path, std::ios::binary);
  if (!in) return BadInput(fmt::format("{}: cannot read graph file: {}", path, std::strerror(errno)));
  const std::string text = ReadAll(in, static_cast<size_t>(st.st_size));
  TFRUN_RETURN_IF_ERROR(CheckIsText(text, path));
  return ParseYaml(text, path);
}

}  // namespace tfrun
