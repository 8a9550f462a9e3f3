#include "core/graph_file/yaml_document.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/null.h>
#include <yaml-cpp/parser.h>
#include <yaml.h>

#include <algorithm>
#include <array>
#include <functional>
#include <istream>
#include <limits>
#include <optional>
#include <streambuf>

#include "core/base/parallel.h"
#include "core/graph_file/yaml_pieces.h"

namespace tfrun {

using yaml_internal::Item;
using yaml_internal::Kind;
using yaml_internal::kNone;

// --- YamlNode ---------------------------------------------------------------

const Item& YamlNode::item() const { return doc_->items_[index_]; }
bool YamlNode::IsNull() const { return defined() && item().kind == Kind::kNull; }
bool YamlNode::IsScalar() const { return defined() && item().kind == Kind::kScalar; }
bool YamlNode::IsSequence() const { return defined() && item().kind == Kind::kSequence; }
bool YamlNode::IsMap() const { return defined() && item().kind == Kind::kMap; }
bool YamlNode::IsQuoted() const { return IsScalar() && item().quoted; }

std::string_view YamlNode::Scalar() const {
  if (!IsScalar()) return std::string_view("", 0);
  return std::string_view(doc_->text_.data() + item().first, item().count);
}

SourceLocation YamlNode::location() const {
  if (!defined() || item().line < 0) return {};
  return {item().line + 1, item().column + 1};
}

size_t YamlNode::size() const {
  if (IsSequence()) return item().count;
  if (IsMap()) return item().count / 2;
  return 0;
}

YamlNode YamlNode::operator[](std::string_view key) const {
  if (!IsMap()) return YamlNode();
  for (const Pair& pair : Pairs()) {
    if (pair.key.IsScalar() && pair.key.Scalar() == key) return pair.value;
  }
  return YamlNode();
}

YamlNode::Range YamlNode::Elements() const {
  const uint32_t first = IsSequence() ? item().first : kNone;
  return Range(Iterator(doc_, first), Iterator(doc_, kNone));
}

YamlNode::PairRange YamlNode::Pairs() const {
  const uint32_t first = IsMap() ? item().first : kNone;
  return PairRange(PairIterator(Iterator(doc_, first)), PairIterator(Iterator(doc_, kNone)));
}

YamlNode YamlNode::Iterator::operator*() const { return YamlNode(doc_, doc_->Resolve(index_)); }

YamlNode::Iterator& YamlNode::Iterator::operator++() {
  index_ = doc_->items_[index_].next;
  return *this;
}

YamlNode::Pair YamlNode::PairIterator::operator*() const {
  Iterator value = key_;
  ++value;
  return Pair{*key_, *value};
}

YamlNode::PairIterator& YamlNode::PairIterator::operator++() {
  ++key_;
  ++key_;
  return *this;
}

// --- YamlDocument -------------------------------------------------------------

uint32_t YamlDocument::Resolve(uint32_t index) const {
  // An alias's target is never an alias: yaml-cpp anchors only real nodes.
  return items_[index].kind == Kind::kAlias ? items_[index].first : index;
}

std::string YamlDocument::TreeString(size_t max_nodes, int max_depth) const {
  static constexpr const char* kNames[] = {"null", "scalar", "sequence", "map", "alias"};
  std::string out;
  size_t lines = 0;
  std::function<void(const YamlNode&, int)> visit = [&](const YamlNode& n, int depth) {
    if (lines++ >= max_nodes) return;
    const Item& item = n.item();
    out += fmt::format("{:{}}{} {}:{}", "", depth, kNames[item.kind], item.line, item.column);
    if (n.IsScalar()) out += fmt::format(" {}'{}'", item.quoted ? "quoted " : "", n.Scalar());
    out += "\n";
    if (depth >= max_depth) return;
    for (const YamlNode& child : n.Elements()) visit(child, depth + 1);
    for (const YamlNode::Pair& pair : n.Pairs()) {
      visit(pair.key, depth + 1);
      visit(pair.value, depth + 1);
    }
  };
  visit(root(), 0);
  return out;
}

// --- parsing ------------------------------------------------------------------

namespace {

// An istream over memory the caller owns (no copy of the text).
class MemoryBuffer : public std::streambuf {
 public:
  MemoryBuffer(const char* begin, const char* end) {
    char* b = const_cast<char*>(begin);  // read-only: the get area is never written
    setg(b, b, const_cast<char*>(end));
  }
};

// What a parse of one piece of text produced.
struct Piece {
  std::vector<Item> items;
  std::string text;
  uint32_t root = kNone;
  bool read_by_libyaml = false;
};

// Appends a parser's nodes to a Piece in event order: each new node is the
// root or the next child of the innermost open collection. Both parsers'
// builders below feed it.
class PieceTree {
 public:
  PieceTree(Piece* piece, int line_offset) : piece_(piece), line_offset_(line_offset) {}

  // The new node's index. `line` is the parser's 0-based line in its text.
  uint32_t Add(int line, int column, Kind kind) {
    const uint32_t index = static_cast<uint32_t>(piece_->items.size());
    piece_->items.push_back(Item{line + line_offset_, column, kNone, kNone, 0, kind, 0, 0});
    if (open_.empty()) {
      if (piece_->root == kNone) piece_->root = index;
      return index;
    }
    OpenCollection& parent = open_.back();
    if (parent.last_child == kNone) {
      piece_->items[parent.index].first = index;
    } else {
      piece_->items[parent.last_child].next = index;
    }
    parent.last_child = index;
    ++piece_->items[parent.index].count;
    return index;
  }

  // A scalar's text, NUL-terminated in the piece's text.
  void SetText(uint32_t index, std::string_view value, bool quoted) {
    Item& item = piece_->items[index];
    item.quoted = quoted;
    item.first = static_cast<uint32_t>(piece_->text.size());
    item.count = static_cast<uint32_t>(value.size());
    piece_->text.append(value);
    piece_->text.push_back('\0');
  }

  // Later nodes are the collection's children until Close.
  void Open(uint32_t collection, bool flow) {
    piece_->items[collection].flow = flow;
    open_.push_back({collection, kNone});
  }
  void Close() { open_.pop_back(); }
  size_t depth() const { return open_.size(); }
  Item& item(uint32_t index) { return piece_->items[index]; }

 private:
  struct OpenCollection {
    uint32_t index;
    uint32_t last_child;
  };

  Piece* piece_;
  int line_offset_;
  std::vector<OpenCollection> open_;
};

// Builds a Piece from yaml-cpp's events, as YAML::NodeBuilder builds its tree.
class PieceBuilder final : public YAML::EventHandler {
 public:
  PieceBuilder(Piece* piece, int line_offset) : tree_(piece, line_offset) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Add(mark, Kind::kNull, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const uint32_t index = Add(mark, Kind::kAlias, YAML::NullAnchor);
    tree_.item(index).first = anchors_[anchor];
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    tree_.SetText(Add(mark, Kind::kScalar, anchor), value, tag == "!");
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    tree_.Open(Add(mark, Kind::kSequence, anchor), style == YAML::EmitterStyle::Flow);
  }
  void OnSequenceEnd() override { tree_.Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    tree_.Open(Add(mark, Kind::kMap, anchor), style == YAML::EmitterStyle::Flow);
  }
  void OnMapEnd() override { tree_.Close(); }

 private:
  uint32_t Add(const YAML::Mark& mark, Kind kind, YAML::anchor_t anchor) {
    const uint32_t index = tree_.Add(mark.line, mark.column, kind);
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, kNone);
      anchors_[anchor] = index;
    }
    return index;
  }

  PieceTree tree_;
  std::vector<uint32_t> anchors_;  // by yaml-cpp's anchor id (from 1)
};

Piece ReservedPiece(size_t bytes) {
  Piece piece;
  // Graph files hold about one node per 6 bytes and half their bytes in
  // scalars: reserving that spares most of the arrays' regrowth.
  piece.items.reserve(bytes / 6 + 16);
  piece.text.reserve(bytes / 2 + 16);
  return piece;
}

// Parses the first document of [begin, end) with yaml-cpp; its exceptions
// pass through. An empty piece (no document) has no root.
Piece ParsePieceWithYamlCpp(const char* begin, const char* end, int line_offset) {
  Piece piece = ReservedPiece(static_cast<size_t>(end - begin));
  MemoryBuffer buffer(begin, end);
  std::istream in(&buffer);
  YAML::Parser parser(in);
  PieceBuilder builder(&piece, line_offset);
  parser.HandleNextDocument(builder);
  return piece;
}

// libyaml (C, about 3x yaml-cpp's speed) reads first; yaml-cpp stays the
// authority. Each libyaml event maps to the yaml-cpp event that
// YAML::SingleDocParser emits for the same node (the same kinds, marks,
// styles and null rule), so both builders give the same Piece; the fuzzer
// compares the two on every input. Where the two could differ, Build
// gives up and yaml-cpp parses the text: any libyaml error (so every error
// text and mark is yaml-cpp's); YAML's rarer syntax (Readable); empty
// nodes (marked differently); anything but a new document after the
// first; nesting near yaml-cpp's depth limit; bytes outside printable
// ASCII (libyaml counts columns in characters, yaml-cpp in bytes; a lone
// carriage return breaks a line for libyaml only). Graph files rarely
// have any of these.
class LibyamlPieceBuilder {
 public:
  LibyamlPieceBuilder(Piece* piece, int line_offset) : tree_(piece, line_offset) {}

  // False where yaml-cpp must parse instead.
  bool Build(std::string_view text) {
    if (!Readable(text)) return false;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return false;
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    bool ok = true, done = false, document_ended = false;
    while (ok && !done) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser, &event)) break;
      switch (event.type) {
        case YAML_STREAM_END_EVENT:
          done = true;
          break;
        case YAML_DOCUMENT_END_EVENT:
          // Only the first document is read, as by yaml-cpp's
          // HandleNextDocument, but libyaml ends a document implicitly
          // where yaml-cpp may read on: what follows must start a document.
          document_ended = true;
          break;
        case YAML_DOCUMENT_START_EVENT:
          done = document_ended;
          break;
        case YAML_SCALAR_EVENT:
          ok = OnScalar(event);
          break;
        case YAML_SEQUENCE_START_EVENT:
          ok = event.data.sequence_start.anchor == nullptr && event.data.sequence_start.tag == nullptr &&
               Open(event, Kind::kSequence, event.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE);
          break;
        case YAML_MAPPING_START_EVENT:
          ok = event.data.mapping_start.anchor == nullptr && event.data.mapping_start.tag == nullptr &&
               Open(event, Kind::kMap, event.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE);
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          tree_.Close();
          break;
        case YAML_ALIAS_EVENT:
          ok = false;
          break;
        default:  // stream start
          break;
      }
      yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return done;
  }

 private:
  // yaml-cpp's DepthGuard<500> counts nested nodes; well below it, yaml-cpp
  // cannot fail on depth, above it yaml-cpp decides.
  static constexpr size_t kMaxDepth = 400;

  // Printable ASCII and newlines, without the indicators of YAML's rarer
  // syntax, where the two scanners part ways: explicit keys (`?`: libyaml
  // takes `?a` in a flow map as one, yaml-cpp refuses it), properties
  // (`&`, `*`, `!`), directives (`%`), block scalars (`|`, `>`), reserved
  // characters and tabs. Anywhere in the text, comments and quotes
  // included: a cheap test, and generated graphs have none of them.
  static bool Readable(std::string_view text) {
    static const std::array<bool, 256> kReadable = [] {
      std::array<bool, 256> readable{};
      for (int c = 0x20; c < 0x7f; ++c) readable[c] = true;
      for (unsigned char c : std::string_view("?&*!%|>@`")) readable[c] = false;
      readable['\n'] = true;
      return readable;
    }();
    for (unsigned char c : text) {
      if (!kReadable[c]) return false;
    }
    return true;
  }

  bool OnScalar(const yaml_event_t& event) {
    const auto& scalar = event.data.scalar;
    if (scalar.anchor != nullptr || scalar.tag != nullptr) return false;
    if (event.start_mark.index == event.end_mark.index) return false;  // an empty node
    const std::string_view value(reinterpret_cast<const char*>(scalar.value), scalar.length);
    // yaml-cpp: an untagged plain scalar is null when IsNullString; an
    // untagged quoted one has tag "!", which tfrun calls quoted.
    const bool plain = scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (plain && value.size() <= 4 && YAML::IsNullString(std::string(value))) {
      Add(event.start_mark, Kind::kNull);
      return true;
    }
    tree_.SetText(Add(event.start_mark, Kind::kScalar), value, !plain);
    return true;
  }

  bool Open(const yaml_event_t& event, Kind kind, bool flow) {
    if (tree_.depth() >= kMaxDepth) return false;
    tree_.Open(Add(event.start_mark, kind), flow);
    return true;
  }

  uint32_t Add(const yaml_mark_t& mark, Kind kind) {
    return tree_.Add(static_cast<int>(mark.line), static_cast<int>(mark.column), kind);
  }

  PieceTree tree_;
};

// Parses the first document of [begin, end): with libyaml where it gives
// yaml-cpp's answer, else with yaml-cpp (whose exceptions pass through).
Piece ParsePiece(const char* begin, const char* end, int line_offset, YamlReader reader) {
  if (reader == YamlReader::kLibyamlFirst) {
    const std::string_view text(begin, static_cast<size_t>(end - begin));
    Piece piece = ReservedPiece(text.size());
    if (LibyamlPieceBuilder(&piece, line_offset).Build(text)) {
      piece.read_by_libyaml = true;
      return piece;
    }
  }
  return ParsePieceWithYamlCpp(begin, end, line_offset);
}

int CountLines(std::string_view text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

// Parses whole texts, or pieces spliced into one document.
class YamlDocumentParser {
 public:
  explicit YamlDocumentParser(YamlReader reader) : reader_(reader) {}

  StatusOr<YamlDocument> Parse(std::string_view text, const std::string& path, const YamlParseOptions& options) const {
    if (text.size() >= std::numeric_limits<uint32_t>::max()) {
      return BadInput(fmt::format("{}: graph files of 4 GiB or more are not supported", path));
    }
    const int threads = options.max_threads > 0 ? options.max_threads : ParallelCores();
    if (std::optional<YamlCuts> cuts = FindYamlCuts(text, threads, options.min_piece_bytes)) {
      if (std::optional<YamlDocument> doc = ParseInPieces(text, *cuts)) return std::move(*doc);
    }
    try {
      return FromPieces({ParsePiece(text.data(), text.data() + text.size(), 0, reader_)});
    } catch (const YAML::DeepRecursion& e) {
      return BadInput(fmt::format("{}:{}:{}: YAML nested deeper than {} levels", path, e.mark.line + 1,
                                  e.mark.column + 1, e.depth()));
    } catch (const YAML::ParserException& e) {
      return BadInput(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
    } catch (const std::exception& e) {
      return BadInput(fmt::format("{}: cannot parse YAML: {}", path, e.what()));
    }
  }

 private:
  // Parses the pieces on separate cores; nullopt (parse the whole instead)
  // when any piece or seam fails or is not of the shape the cuts expect.
  std::optional<YamlDocument> ParseInPieces(std::string_view text, const YamlCuts& cuts) const {
    std::vector<size_t> starts = {0};
    for (const YamlCut& cut : cuts.cuts) starts.push_back(cut.at);
    const size_t count = starts.size();
    // Each piece's first line, counting each byte of the text once.
    std::vector<int> start_lines = {0};
    for (size_t i = 1; i < count; ++i) {
      start_lines.push_back(start_lines.back() + CountLines(text.substr(starts[i - 1], starts[i] - starts[i - 1])));
    }
    std::vector<Piece> pieces(count);
    std::vector<char> failed(count, 0);
    ParallelFor(
        static_cast<int64_t>(count),
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const size_t to = i + 1 < static_cast<int64_t>(count) ? starts[i + 1] : text.size();
            const std::string_view piece = text.substr(starts[i], to - starts[i]);
            // The first piece is the file's start; the others are parsed
            // behind a `nodes:` line, in the same context as in the file.
            std::optional<Piece> parsed = i == 0 ? ParseText(piece, 0) : ParseListPiece(piece, start_lines[i]);
            if (!parsed) {
              failed[i] = 1;
              continue;
            }
            pieces[i] = std::move(*parsed);
            if (i + 1 < static_cast<int64_t>(count)) MarkEndAtCut(&pieces[i], start_lines[i + 1], cuts.indent);
          }
        },
        1, static_cast<int>(count));
    if (std::count(failed.begin(), failed.end(), 1) != 0) return std::nullopt;

    const std::optional<uint32_t> head_list =
        HeadList(pieces[0], CountLines(text.substr(0, cuts.first_entry)), cuts.indent);
    if (!head_list) return std::nullopt;
    std::vector<uint32_t> lists = {*head_list};
    for (size_t i = 1; i < count; ++i) {
      const std::optional<uint32_t> list = PieceList(pieces[i], start_lines[i], cuts.indent, i + 1 == count);
      if (!list) return std::nullopt;
      lists.push_back(*list);
    }
    for (size_t j = 0; j < cuts.cuts.size(); ++j) {
      if (!SeamAgrees(text, cuts, cuts.cuts[j], start_lines[j + 1], pieces[j], lists[j], pieces[j + 1],
                      lists[j + 1])) {
        return std::nullopt;
      }
    }
    return Splice(std::move(pieces), lists);
  }

  std::optional<Piece> ParseText(std::string_view text, int line_offset) const {
    try {
      return ParsePiece(text.data(), text.data() + text.size(), line_offset, reader_);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // Entries of the list (from a line start at the list's column), parsed
  // behind a `nodes:` line of their own that takes the line before theirs.
  std::optional<Piece> ParseListPiece(std::string_view entries, int first_line) const {
    std::string text = "nodes:\n";
    text.append(entries);
    return ParseText(text, first_line - 1);
  }

  // yaml-cpp marks an empty value, and the end of a collection, with the
  // next token's position. At a cut the whole text's next token is the
  // entry's "-" at the list's column; the piece has its end there, at
  // column 0.
  static void MarkEndAtCut(Piece* piece, int cut_line, int indent) {
    for (Item& item : piece->items) {
      if (item.line == cut_line && item.column == 0) item.column = indent;
    }
  }

  // The pairs of a block map, as (key, value) item indices.
  static std::vector<std::pair<uint32_t, uint32_t>> PairsOf(const Piece& p, uint32_t map) {
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (uint32_t k = p.items[map].first; k != kNone; k = p.items[p.items[k].next].next) {
      pairs.push_back({k, p.items[k].next});
    }
    return pairs;
  }

  static bool IsKey(const Piece& p, uint32_t item, std::string_view key) {
    return p.items[item].kind == Kind::kScalar && !p.items[item].quoted &&
           std::string_view(p.text.data() + p.items[item].first) == key;
  }

  static bool IsBlock(const Piece& p, uint32_t item, Kind kind) {
    return item != kNone && p.items[item].kind == kind && !p.items[item].flow;
  }

  // The first piece is a block map whose last pair is `nodes:` with the
  // block list that starts at the first entry.
  static std::optional<uint32_t> HeadList(const Piece& head, int first_entry_line, int indent) {
    if (!IsBlock(head, head.root, Kind::kMap)) return std::nullopt;
    const auto pairs = PairsOf(head, head.root);
    if (pairs.empty()) return std::nullopt;
    const auto [key, list] = pairs.back();
    if (!IsKey(head, key, "nodes") || !IsBlock(head, list, Kind::kSequence) || head.items[list].column != indent ||
        head.items[list].line != first_entry_line) {
      return std::nullopt;
    }
    return list;
  }

  // A later piece is the `nodes:` pair it was parsed behind, holding the
  // list of its entries; the last piece may go on with more pairs (keys
  // after the list), the others must not.
  static std::optional<uint32_t> PieceList(const Piece& p, int first_line, int indent, bool last) {
    if (!IsBlock(p, p.root, Kind::kMap)) return std::nullopt;
    const auto pairs = PairsOf(p, p.root);
    if (pairs.empty() || (!last && pairs.size() != 1)) return std::nullopt;
    const auto [key, list] = pairs.front();
    if (!IsKey(p, key, "nodes") || !IsBlock(p, list, Kind::kSequence) || p.items[list].column != indent ||
        p.items[list].line != first_line) {
      return std::nullopt;
    }
    return list;
  }

  // Whether the entries on both sides of a cut, parsed together, read as
  // each side read them alone: yaml-cpp may carry state from the end of one
  // entry into the next (an unclosed quote, a would-be key), and the seam
  // shows it.
  // `cut_line` is the line of cut.at; the seam's lines are counted from it.
  bool SeamAgrees(std::string_view text, const YamlCuts& cuts, const YamlCut& cut, int cut_line, const Piece& before,
                  uint32_t before_list, const Piece& after, uint32_t after_list) const {
    const int seam_line = cut_line - CountLines(text.substr(cut.seam_begin, cut.at - cut.seam_begin));
    std::optional<Piece> seam = ParseListPiece(text.substr(cut.seam_begin, cut.seam_end - cut.seam_begin), seam_line);
    if (!seam) return false;
    if (cut.seam_end < cuts.list_end) {
      MarkEndAtCut(&*seam, cut_line + CountLines(text.substr(cut.at, cut.seam_end - cut.at)), cuts.indent);
    }
    const std::optional<uint32_t> list = PieceList(*seam, seam_line, cuts.indent, false);
    if (!list || seam->items[*list].count != 2) return false;
    const uint32_t seam_first = seam->items[*list].first;
    const uint32_t seam_second = seam->items[seam_first].next;
    uint32_t last_before = kNone;
    for (uint32_t e = before.items[before_list].first; e != kNone; e = before.items[e].next) last_before = e;
    int budget = 100000;
    return last_before != kNone && SameTree(*seam, seam_first, before, last_before, &budget) &&
           SameTree(*seam, seam_second, after, after.items[after_list].first, &budget);
  }

  // The same kinds, locations, styles and texts all the way down (aliases
  // followed, at most `budget` nodes and kMaxSameTreeDepth levels: more
  // counts as different). yaml-cpp lets an alias inside an anchored node
  // name that node, so a followed alias may cycle: the depth bound keeps
  // the recursion off the end of the stack.
  static constexpr int kMaxSameTreeDepth = 512;
  static bool SameTree(const Piece& a, uint32_t ia, const Piece& b, uint32_t ib, int* budget, int depth = 0) {
    if (ia == kNone || ib == kNone) return ia == ib;
    if (--*budget < 0 || depth > kMaxSameTreeDepth) return false;
    if (a.items[ia].kind == Kind::kAlias) ia = a.items[ia].first;
    if (b.items[ib].kind == Kind::kAlias) ib = b.items[ib].first;
    const Item& x = a.items[ia];
    const Item& y = b.items[ib];
    if (x.kind != y.kind || x.line != y.line || x.column != y.column || x.quoted != y.quoted || x.flow != y.flow ||
        x.count != y.count) {
      return false;
    }
    if (x.kind == Kind::kScalar) {
      return std::string_view(a.text.data() + x.first, x.count) == std::string_view(b.text.data() + y.first, y.count);
    }
    if (x.kind != Kind::kSequence && x.kind != Kind::kMap) return true;
    for (uint32_t ca = x.first, cb = y.first; ca != kNone || cb != kNone; ca = a.items[ca].next, cb = b.items[cb].next) {
      if (!SameTree(a, ca, b, cb, budget, depth + 1)) return false;
    }
    return true;
  }

  // Concatenates the pieces, then chains each later piece's entries after
  // the head's list, and the last piece's pairs after its list (keys after
  // the list in the file) after the head's root map's.
  static YamlDocument Splice(std::vector<Piece> pieces, const std::vector<uint32_t>& lists) {
    const size_t count = pieces.size();
    const uint32_t last_root = pieces.back().root;
    std::vector<uint32_t> item_base, roots;
    YamlDocument doc = Concatenate(std::move(pieces), &item_base, &roots);
    std::vector<Item>& items = doc.items_;
    auto last_child = [&](uint32_t collection) {
      uint32_t last = kNone;
      for (uint32_t i = items[collection].first; i != kNone; i = items[i].next) last = i;
      return last;
    };
    // Appends the chain from `first` (`n` children) to `to`'s children.
    auto append = [&](uint32_t to, uint32_t first, uint32_t n) {
      if (first == kNone) return;
      const uint32_t last = last_child(to);
      (last == kNone ? items[to].first : items[last].next) = first;
      items[to].count += n;
    };
    const uint32_t head_root = roots[0];
    const uint32_t head_list = lists[0];
    for (size_t i = 1; i < count; ++i) {
      const uint32_t list = lists[i] + item_base[i];
      append(head_list, items[list].first, items[list].count);
    }
    if (count > 1) {
      const uint32_t root = last_root + item_base[count - 1];
      const uint32_t list = lists[count - 1] + item_base[count - 1];
      append(head_root, items[list].next, items[root].count - 2);  // the pairs after `nodes:`
    }
    doc.root_ = head_root;
    doc.pieces_ = static_cast<int>(count);
    return doc;
  }

  static YamlDocument FromPieces(std::vector<Piece> pieces) {
    std::vector<uint32_t> item_base, roots;
    YamlDocument doc = Concatenate(std::move(pieces), &item_base, &roots);
    if (roots[0] == kNone) {
      // No document: YAML::Load's Node(), null and without location.
      doc.items_.push_back(Item{-1, -1, kNone, kNone, 0, Kind::kNull, 0, 0});
      doc.root_ = static_cast<uint32_t>(doc.items_.size() - 1);
    } else {
      doc.root_ = roots[0];
    }
    return doc;
  }

  static YamlDocument Concatenate(std::vector<Piece> pieces, std::vector<uint32_t>* item_base,
                                  std::vector<uint32_t>* roots) {
    // The first piece's arrays become the document's; the others are
    // appended.
    size_t items = 0, text = 0;
    YamlDocument doc;
    for (const Piece& p : pieces) {
      items += p.items.size();
      text += p.text.size();
      doc.pieces_read_by_libyaml_ += p.read_by_libyaml;
    }
    doc.items_ = std::move(pieces[0].items);
    doc.text_ = std::move(pieces[0].text);
    *item_base = {0};
    *roots = {pieces[0].root};
    doc.items_.reserve(items);
    doc.text_.reserve(text);
    for (size_t i = 1; i < pieces.size(); ++i) {
      Piece& p = pieces[i];
      const uint32_t base = static_cast<uint32_t>(doc.items_.size());
      const uint32_t text_base = static_cast<uint32_t>(doc.text_.size());
      item_base->push_back(base);
      roots->push_back(p.root == kNone ? kNone : p.root + base);
      for (Item item : p.items) {
        if (item.next != kNone) item.next += base;
        if (item.kind == Kind::kScalar) {
          item.first += text_base;
        } else if (item.first != kNone) {
          item.first += base;
        }
        doc.items_.push_back(item);
      }
      doc.text_.append(p.text);
      p = Piece();  // release as we go
    }
    return doc;
  }

  const YamlReader reader_;
};

StatusOr<YamlDocument> ParseYaml(std::string_view text, const std::string& path, const YamlParseOptions& options) {
  return YamlDocumentParser(options.reader).Parse(text, path, options);
}

}  // namespace tfrun
