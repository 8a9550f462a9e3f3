#include "core/graph_def/tf_graph_file.h"

#include "core/graph_def/text_locations.h"

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/tables/tf_tables.h"

namespace tfrun {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Message;
using google::protobuf::TextFormat;

enum class Kind { kGraphDef, kMetaGraphDef, kSavedModel };

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kGraphDef: return "GraphDef";
    case Kind::kMetaGraphDef: return "MetaGraphDef";
    case Kind::kSavedModel: return "SavedModel";
  }
  return "GraphDef";
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Text format when the first 4 KB hold no control bytes but whitespace:
// a binary message's first bytes are tags and lengths, most below 32.
bool LooksLikeText(std::string_view bytes) {
  const std::string_view head = bytes.substr(0, 4096);
  return std::none_of(head.begin(), head.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
  });
}

// A text file's first field name, comments and blanks skipped.
std::string FirstTextField(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
    } else if (text[i] == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else {
      break;
    }
  }
  size_t end = i;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
  return std::string(text.substr(i, end - i));
}

Kind KindOfText(std::string_view text) {
  const std::string field = FirstTextField(text);
  if (field == "saved_model_schema_version" || field == "meta_graphs") return Kind::kSavedModel;
  if (field == "meta_info_def" || field == "graph_def" || field == "saver_def" || field == "collection_def" ||
      field == "signature_def" || field == "asset_file_def" || field == "object_graph_def") {
    return Kind::kMetaGraphDef;
  }
  return Kind::kGraphDef;
}

// A binary message's kind from its first bytes alone: a SavedModel starts
// with its schema version (a varint, field 1); a GraphDef's and a
// MetaGraphDef's field 1 are both messages, told apart by their own first
// field (a NodeDef's is most often its name, field 1).
Kind KindByFirstBytes(std::string_view bytes) {
  if (bytes.empty()) return Kind::kGraphDef;
  const auto tag = static_cast<unsigned char>(bytes[0]);
  if (tag == 0x08) return Kind::kSavedModel;
  if (tag != 0x0a) return Kind::kGraphDef;
  size_t i = 1;
  int shift = 0;
  while (i < bytes.size() && (static_cast<unsigned char>(bytes[i]) & 0x80) != 0 && shift < 63) {
    ++i;
    shift += 7;
  }
  ++i;  // the length's last byte
  if (i < bytes.size() && static_cast<unsigned char>(bytes[i]) != 0x0a) return Kind::kMetaGraphDef;
  return Kind::kGraphDef;
}

// The nodes of `graph` that look like a program's: a name and an op
// TensorFlow defines.
int RealNodes(const tfproto::GraphDef& graph) {
  int real = 0;
  for (const tfproto::NodeDef& node : graph.node()) {
    if (!node.name().empty() && FindTfOp(node.op()) != nullptr) ++real;
  }
  return real;
}

// A binary message's kind, decided by parsing: the bytes of either parse
// as the other, more or less (a MetaInfoDef reads as a NodeDef), so the
// reading with more nodes that look like a program's wins; the first bytes
// only break a tie (a GraphDef whose first node writes its op before its
// name was taken for a MetaGraphDef with no nodes).
Kind KindOfBinary(const std::string& bytes) {
  if (KindByFirstBytes(bytes) == Kind::kSavedModel) return Kind::kSavedModel;
  tfproto::GraphDef graph;
  tfproto::MetaGraphDef meta;
  const int as_graph = graph.ParseFromString(bytes) ? RealNodes(graph) : -1;
  const int as_meta = meta.ParseFromString(bytes) ? RealNodes(meta.graph_def()) : -1;
  if (as_graph != as_meta) return as_graph > as_meta ? Kind::kGraphDef : Kind::kMetaGraphDef;
  return KindByFirstBytes(bytes);
}

Kind KindOfName(const std::string& name, const std::string& bytes, bool text) {
  const std::string base = fs::path(name).filename().string();
  if (base == "saved_model.pb" || base == "saved_model.pbtxt") return Kind::kSavedModel;
  if (EndsWith(base, ".meta")) return Kind::kMetaGraphDef;
  return text ? KindOfText(bytes) : KindOfBinary(bytes);
}

// How deep messages may nest in a text file, as the binary parser allows
// (protobuf's default): deeper ones, a few bytes a level, would take the
// stack, and through attr maps memory quadratic in the depth.
constexpr int kMaxMessageNesting = 100;

// Collects the text parser's errors: the first one, located.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (!message_.empty()) return;
    line_ = line + 1;
    column_ = column + 1;
    message_ = message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  std::string Text(const std::string& name) const {
    return fmt::format("{}:{}:{}: {}", name, line_, column_, message_.empty() ? "malformed text" : message_);
  }

 private:
  int line_ = 0, column_ = 0;
  std::string message_;
};

// libprotobuf's own log lines (a string field that is not UTF-8) would
// reach standard error as a second line: each is kept here, for the
// thread's next error message, instead.
thread_local std::string g_protobuf_said;

void KeepProtobufLine(google::protobuf::LogLevel, const char*, int, const std::string& message) {
  g_protobuf_said = message.substr(0, message.find_last_not_of(" \n") + 1);
}

void QuietProtobuf() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(KeepProtobufLine); });
}

// protobuf's text parser as tfrun runs it: fields and extensions tfrun
// does not read skipped, nesting bounded, the first error in `errors`.
bool ParseText(const std::string& text, Message* message, FirstError* errors) {
  TextFormat::Parser parser;
  parser.RecordErrorsTo(errors);
  parser.AllowUnknownField(true);
  parser.AllowUnknownExtension(true);
  parser.SetRecursionLimit(kMaxMessageNesting);
  return parser.ParseFromString(text, message);
}

// Parses text or binary bytes into `message`.
Status ParseMessage(const std::string& bytes, bool text, const std::string& name, Kind kind, Message* message) {
  if (text) {
    FirstError errors;
    if (!ParseText(bytes, message, &errors)) {
      return BadInput(fmt::format("{} (text {})", errors.Text(name), KindName(kind)));
    }
    return Status::Ok();
  }
  g_protobuf_said.clear();
  if (!message->ParseFromString(bytes)) {
    return BadInput(fmt::format("{}: not a binary {} (the protobuf does not parse{})", name, KindName(kind),
                                g_protobuf_said.empty() ? "" : ": " + ClipForMessage(g_protobuf_said, 200)));
  }
  return Status::Ok();
}

// A text GraphDef this large is parsed in pieces, one a core: protobuf's
// text parser was the larger half of loading the 8-tower sample (712 KB).
constexpr size_t kPiecewiseTextBytes = 256 << 10;

// A large text GraphDef cut before `node` fields into one piece a core (at
// most 4), each parsed alone, then joined: the nodes in file order, the
// other fields merged. Cut only where that is the whole file's parse: no
// field but `node` more than once (a scalar twice is the parser's error).
// Any piece's failure parses the whole file again, for the parser's own
// error and location.
// `fields`: the file's top-level fields (MessageNameLocations), none for a
// file too small to cut.
Status ParseGraphDefText(const std::string& bytes, const std::string& name, const std::vector<TextField>& fields,
                         tfproto::GraphDef* graph) {
  const size_t cores = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<size_t> cuts = {0};
  if (!fields.empty() && cores > 1) {
    std::vector<std::string> others;
    for (const TextField& f : fields) {
      if (f.name != "node") others.push_back(f.name);
    }
    std::sort(others.begin(), others.end());
    if (std::adjacent_find(others.begin(), others.end()) == others.end()) {
      for (const TextField& f : fields) {
        if (f.name == "node" && f.offset >= cuts.size() * bytes.size() / cores) cuts.push_back(f.offset);
        if (cuts.size() == cores) break;
      }
    }
  }
  if (cuts.size() == 1) return ParseMessage(bytes, true, name, Kind::kGraphDef, graph);
  cuts.push_back(bytes.size());
  std::vector<tfproto::GraphDef> pieces(cuts.size() - 1);
  std::vector<char> parsed(pieces.size(), 0);
  auto parse = [&](size_t i) {
    FirstError errors;  // the whole file's parse reports them
    parsed[i] = ParseText(bytes.substr(cuts[i], cuts[i + 1] - cuts[i]), &pieces[i], &errors) ? 1 : 0;
  };
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < pieces.size(); ++i) helpers.emplace_back(parse, i);
  parse(0);
  for (std::thread& t : helpers) t.join();
  if (std::find(parsed.begin(), parsed.end(), 0) != parsed.end()) {
    return ParseMessage(bytes, true, name, Kind::kGraphDef, graph);
  }
  *graph = std::move(pieces[0]);
  for (size_t i = 1; i < pieces.size(); ++i) {
    auto* nodes = pieces[i].mutable_node();
    graph->mutable_node()->Reserve(graph->node_size() + nodes->size());
    for (tfproto::NodeDef& node : *nodes) *graph->add_node() = std::move(node);
    pieces[i].clear_node();
    graph->MergeFrom(pieces[i]);
  }
  return Status::Ok();
}

// Where each NodeDef's name is in a text file (0 where it has none):
// `path` leads from the file's message to the GraphDef's nodes.
std::vector<SourceLocation> NodeLocations(const std::string& bytes, std::vector<TextPathStep> path,
                                          std::vector<TextField>* top_level = nullptr) {
  path.push_back({"node", -1});
  return MessageNameLocations(bytes, path, top_level);
}

// The node-list collections, and the queue runners (each a serialized
// QueueRunnerDef; one that does not parse is an error naming it).
// A TF2 SavedModel's object graph as Graph::SavedObjects. A child or a
// bound input naming no object is the file's error, as the loader's.
Status TakeObjectGraph(const tfproto::SavedObjectGraph& proto, const std::string& name,
                       Graph::SavedObjects* objects) {
  const int count = proto.nodes_size();
  auto check = [&](int id, std::string_view what) -> Status {
    if (id < 0 || id >= count) {
      return BadInput(fmt::format("{}: the object graph's {} names object {}, of {}", name, what, id, count));
    }
    return Status::Ok();
  };
  for (int i = 0; i < count; ++i) {
    const tfproto::SavedObject& node = proto.nodes(i);
    Graph::SavedObject object;
    for (const auto& child : node.children()) {
      TFRUN_RETURN_IF_ERROR(check(child.node_id(), fmt::format("object {}'s child '{}'", i, child.local_name())));
      object.children.emplace_back(child.local_name(), child.node_id());
    }
    using Kind = Graph::SavedObject::Kind;
    switch (node.kind_case()) {
      case tfproto::SavedObject::kVariable: {
        const tfproto::SavedVariable& v = node.variable();
        object.kind = Kind::kVariable;
        object.name = v.name();
        const std::string type = tfproto::DataType_Name(v.dtype());
        const std::optional<DType> dtype = DTypeOfTableType(type.size() > 3 ? type.substr(3) : type);
        if (!dtype) {
          return BadInput(fmt::format("{}: variable '{}' (object {}) has dtype {}, which tfrun does not hold", name,
                                      v.name(), i, type));
        }
        object.dtype = *dtype;
        object.unknown_rank = v.shape().unknown_rank();
        for (const auto& d : v.shape().dim()) object.shape.push_back(d.size() < 0 ? -1 : d.size());
        break;
      }
      case tfproto::SavedObject::kConstant:
        object.kind = Kind::kConstant;
        object.name = node.constant().operation();
        break;
      case tfproto::SavedObject::kResource:
        object.kind = Kind::kResource;
        break;
      case tfproto::SavedObject::kCapturedTensor:
        object.kind = Kind::kCapturedTensor;
        break;
      default:
        break;
    }
    objects->objects.push_back(std::move(object));
  }
  for (const auto& [function, concrete] : proto.concrete_functions()) {
    std::vector<int> bound(concrete.bound_inputs().begin(), concrete.bound_inputs().end());
    for (int id : bound) TFRUN_RETURN_IF_ERROR(check(id, fmt::format("function '{}' bound input", function)));
    objects->bound_inputs.emplace_back(function, std::move(bound));
  }
  std::sort(objects->bound_inputs.begin(), objects->bound_inputs.end());
  return Status::Ok();
}

Status TakeCollections(const tfproto::MetaGraphDef& meta, const std::string& name, TfGraphFile* file) {
  if (auto runners = meta.collection_def().find("queue_runners"); runners != meta.collection_def().end()) {
    const auto& values = runners->second.bytes_list().value();
    for (int i = 0; i < values.size(); ++i) {
      tfproto::QueueRunnerDef def;
      if (!def.ParseFromString(values[i]) || def.queue_name().empty() || def.enqueue_op_name().empty()) {
        return BadInput(fmt::format("{}: collection 'queue_runners' element {} is not a QueueRunnerDef with a queue "
                                    "and an enqueue op", name, i));
      }
      file->queue_runners.push_back(Graph::QueueRunner{
          def.queue_name(), {def.enqueue_op_name().begin(), def.enqueue_op_name().end()}, def.close_op_name()});
    }
  }
  for (const auto& [signature, def] : meta.signature_def()) {
    if (def.outputs().empty()) continue;
    // Every output of a TF2 signature comes from one call node.
    std::vector<std::string> outputs, keys;
    for (const auto& [key, info] : def.outputs()) {
      outputs.push_back(info.name());
      keys.push_back(key);
    }
    std::sort(outputs.begin(), outputs.end());
    std::sort(keys.begin(), keys.end());
    file->signatures.push_back({signature, outputs[0], std::move(keys)});
  }
  std::sort(file->signatures.begin(), file->signatures.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  TFRUN_RETURN_IF_ERROR(TakeObjectGraph(meta.object_graph_def(), name, &file->saved_objects));
  std::vector<std::string> keys;
  for (const auto& [key, collection] : meta.collection_def()) {
    if (collection.has_node_list()) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) {
    const auto& values = meta.collection_def().at(key).node_list().value();
    file->node_collections.emplace_back(key, std::vector<std::string>(values.begin(), values.end()));
  }
  return Status::Ok();
}

std::string JoinTags(const tfproto::MetaGraphDef& meta) {
  std::vector<std::string> tags(meta.meta_info_def().tags().begin(), meta.meta_info_def().tags().end());
  return fmt::format("{{ {} }}", fmt::join(tags, " "));
}

}  // namespace

bool IsTfGraphPath(const std::string& path, std::string_view head) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return true;
  const std::string base = fs::path(path).filename().string();
  for (std::string_view ext : {".pb", ".pbtxt", ".pbtext", ".meta"}) {
    if (EndsWith(base, ext)) return true;
  }
  if (EndsWith(base, ".yaml") || EndsWith(base, ".yml")) return false;
  // Unknown extension: binary bytes, or text that starts as a GraphDef or
  // MetaGraphDef does ("node {", "meta_info_def {").
  if (!LooksLikeText(head)) return true;
  const std::string field = FirstTextField(head);
  size_t brace = head.find_first_not_of(" \t\r\n", head.find(field) + field.size());
  const bool message_field = brace != std::string_view::npos && head[brace] == '{';
  return message_field && (field == "node" || field == "meta_info_def" || field == "graph_def" ||
                           field == "meta_graphs" || field == "library" || field == "versions");
}

bool IsTfGraphFile(const std::string& path) {
  if (path == "-" || EndsWith(path, ".yaml") || EndsWith(path, ".yml")) return false;  // no read for YAML
  std::error_code ec;
  // A pipe or device is read once, by its loader: judged by its name alone.
  if (!fs::is_regular_file(path, ec)) return IsTfGraphPath(path, "nodes:");
  std::ifstream in(path, std::ios::binary);
  char head[4096];
  in.read(head, sizeof(head));
  return IsTfGraphPath(path, std::string_view(head, static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0))));
}

StatusOr<TfGraphFile> ParseTfGraphBytes(const std::string& bytes, const std::string& name, const std::string& tag) {
  QuietProtobuf();
  TfGraphFile file;
  file.text = LooksLikeText(bytes);
  const Kind kind = KindOfName(name, bytes, file.text);
  file.kind = KindName(kind);
  std::vector<TextPathStep> path;  // from the file's message to its GraphDef
  switch (kind) {
    case Kind::kGraphDef:
      if (file.text) {
        // One scan finds the nodes' locations and, in a file large enough
        // to parse in pieces, where it may be cut.
        std::vector<TextField> fields;
        file.node_locations =
            NodeLocations(bytes, {}, bytes.size() >= kPiecewiseTextBytes ? &fields : nullptr);
        TFRUN_RETURN_IF_ERROR(ParseGraphDefText(bytes, name, fields, &file.graph_def));
      } else {
        TFRUN_RETURN_IF_ERROR(ParseMessage(bytes, false, name, kind, &file.graph_def));
      }
      break;
    case Kind::kMetaGraphDef: {
      tfproto::MetaGraphDef meta;
      TFRUN_RETURN_IF_ERROR(ParseMessage(bytes, file.text, name, kind, &meta));
      path = {{"graph_def", -1}};
      TFRUN_RETURN_IF_ERROR(TakeCollections(meta, name, &file));
      file.graph_def = std::move(*meta.mutable_graph_def());
      break;
    }
    case Kind::kSavedModel: {
      tfproto::SavedModel saved;
      TFRUN_RETURN_IF_ERROR(ParseMessage(bytes, file.text, name, kind, &saved));
      int chosen = -1;
      for (int i = 0; i < saved.meta_graphs_size() && chosen < 0; ++i) {
        const auto& tags = saved.meta_graphs(i).meta_info_def().tags();
        if (tag.empty() || std::find(tags.begin(), tags.end(), tag) != tags.end()) chosen = i;
      }
      if (chosen < 0) {
        std::vector<std::string> sets;
        for (const auto& meta : saved.meta_graphs()) sets.push_back(JoinTags(meta));
        return BadInput(fmt::format(
            "{}: Could not find meta graph def matching supplied tags: {{ {} }}. Available tag-sets: [{}]", name,
            tag, fmt::join(sets, ", ")));
      }
      path = {{"meta_graphs", chosen}, {"graph_def", -1}};
      TFRUN_RETURN_IF_ERROR(TakeCollections(saved.meta_graphs(chosen), name, &file));
      const tfproto::SaverDef& saver = saved.meta_graphs(chosen).saver_def();
      const fs::path variables = fs::path(name).parent_path() / "variables" / "variables";
      std::error_code ec;
      if (fs::exists(variables.string() + ".index", ec)) file.saved_objects.variables = variables.string();
      if (!saver.restore_op_name().empty() && fs::exists(variables.string() + ".index", ec)) {
        file.saved_model_restore.restore_op = saver.restore_op_name();
        file.saved_model_restore.filename_tensor = saver.filename_tensor_name();
        file.saved_model_restore.variables = variables.string();
        for (const char* main_op : {"saved_model_main_op", "legacy_init_op"}) {
          const auto& collections = saved.meta_graphs(chosen).collection_def();
          if (collections.count(main_op) > 0) {
            file.saved_model_restore.main_op = main_op;
            break;
          }
        }
      }
      file.graph_def = std::move(*saved.mutable_meta_graphs(chosen)->mutable_graph_def());
      break;
    }
  }
  if (file.text && kind != Kind::kGraphDef) file.node_locations = NodeLocations(bytes, std::move(path));
  // The scan and the parser agree on text the parser accepted; if they
  // ever did not, no location beats a wrong one.
  if (file.node_locations.size() != static_cast<size_t>(file.graph_def.node_size())) {
    file.node_locations.assign(file.graph_def.node_size(), SourceLocation{});
  }
  return file;
}

StatusOr<TfGraphFile> ReadTfGraphFile(const std::string& path, const std::string& tag, int64_t max_file_bytes) {
  std::error_code ec;
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    // A SavedModel folder: its saved_model.pb, or the text form.
    file = (fs::path(path) / "saved_model.pb").string();
    if (!fs::exists(file, ec)) file = (fs::path(path) / "saved_model.pbtxt").string();
    if (!fs::exists(file, ec)) {
      return BadInput(fmt::format("{}: is a directory without saved_model.pb or saved_model.pbtxt (not a SavedModel folder)", path));
    }
  }
  const auto size = fs::file_size(file, ec);
  if (ec) return BadInput(fmt::format("{}: cannot read: {}", file, ec.message()));
  if (static_cast<int64_t>(size) > max_file_bytes) {
    return BadInput(fmt::format("{}: the file has {} bytes; --max-file-bytes allows {}", file, size, max_file_bytes));
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in && !in.eof()) return BadInput(fmt::format("{}: cannot read", file));
  return ParseTfGraphBytes(bytes.str(), file, tag);
}

}  // namespace tfrun
