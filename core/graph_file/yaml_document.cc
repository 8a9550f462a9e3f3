#include "core/graph_file/yaml_document.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <functional>
#include <istream>
#include <limits>
#include <optional>
#include <streambuf>

#include "core/graph_file/yaml_pieces.h"
#include "core/parallel.h"

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
  size_t max_depth = 0;
};

// Builds a Piece from yaml-cpp's events, as YAML::NodeBuilder builds its tree.
class PieceBuilder final : public YAML::EventHandler {
 public:
  PieceBuilder(Piece* piece, int line_offset) : piece_(piece), line_offset_(line_offset) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Add(mark, Kind::kNull, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const uint32_t index = Add(mark, Kind::kAlias, YAML::NullAnchor);
    piece_->items[index].first = anchors_[anchor];
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    const uint32_t index = Add(mark, Kind::kScalar, anchor);
    Item& item = piece_->items[index];
    item.quoted = tag == "!";
    item.first = static_cast<uint32_t>(piece_->text.size());
    item.count = static_cast<uint32_t>(value.size());
    piece_->text.append(value);
    piece_->text.push_back('\0');
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    Open(Add(mark, Kind::kSequence, anchor), style);
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    Open(Add(mark, Kind::kMap, anchor), style);
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  struct OpenCollection {
    uint32_t index;
    uint32_t last_child;
  };

  uint32_t Add(const YAML::Mark& mark, Kind kind, YAML::anchor_t anchor) {
    const uint32_t index = static_cast<uint32_t>(piece_->items.size());
    piece_->items.push_back(Item{mark.line + line_offset_, mark.column, kNone, kNone, 0, kind, 0, 0});
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, kNone);
      anchors_[anchor] = index;
    }
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

  void Open(uint32_t index, YAML::EmitterStyle::value style) {
    piece_->items[index].flow = style == YAML::EmitterStyle::Flow;
    open_.push_back({index, kNone});
    piece_->max_depth = std::max(piece_->max_depth, open_.size());
  }

  Piece* piece_;
  int line_offset_;
  std::vector<OpenCollection> open_;
  std::vector<uint32_t> anchors_;  // by yaml-cpp's anchor id (from 1)
};

// Parses the first document of [begin, end); yaml-cpp's exceptions pass
// through. An empty piece (no document) has no root.
Piece ParsePiece(const char* begin, const char* end, int line_offset) {
  Piece piece;
  // Graph files hold about one node per 6 bytes and half their bytes in
  // scalars: reserving that spares most of the arrays' regrowth.
  const size_t bytes = static_cast<size_t>(end - begin);
  piece.items.reserve(bytes / 6 + 16);
  piece.text.reserve(bytes / 2 + 16);
  MemoryBuffer buffer(begin, end);
  std::istream in(&buffer);
  YAML::Parser parser(in);
  PieceBuilder builder(&piece, line_offset);
  parser.HandleNextDocument(builder);
  return piece;
}

// Whether the piece's last scalar is a quoted one whose closing quote is
// not in `text` (the piece's text, whose first line is `first_line`). A
// scalar whose mark is not at its quote (a tag or anchor before it) counts
// as open: it cannot be checked, and the caller parses the whole text.
bool EndsInOpenQuote(const Piece& piece, std::string_view text, int first_line) {
  auto last = std::find_if(piece.items.rbegin(), piece.items.rend(),
                           [](const Item& item) { return item.kind != Kind::kNull; });
  if (last == piece.items.rend() || last->kind != Kind::kScalar || !last->quoted) return false;
  size_t pos = 0;
  for (int line = first_line; line < last->line && pos != std::string_view::npos; ++line) {
    pos = text.find('\n', pos);
    if (pos != std::string_view::npos) ++pos;
  }
  if (pos == std::string_view::npos) return true;
  pos += static_cast<size_t>(last->column);
  if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"')) return true;
  const char quote = text[pos];
  for (size_t k = pos + 1; k < text.size(); ++k) {
    if (quote == '"' && text[k] == '\\') {
      ++k;  // an escaped character, a quote included
    } else if (text[k] == quote) {
      if (quote == '\'' && k + 1 < text.size() && text[k + 1] == '\'') {
        ++k;  // '' is a single quote inside single quotes
      } else {
        return false;
      }
    }
  }
  return true;
}

int CountLines(std::string_view text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

// Parses whole texts, or pieces spliced into one document.
class YamlDocumentParser {
 public:
  static StatusOr<YamlDocument> Parse(std::string_view text, const std::string& path,
                                      const YamlParseOptions& options) {
    if (text.size() >= std::numeric_limits<uint32_t>::max()) {
      return BadInput(fmt::format("{}: graph files of 4 GiB or more are not supported", path));
    }
    const int threads = options.max_threads > 0 ? options.max_threads : ParallelCores();
    if (std::optional<YamlCuts> cuts = FindYamlCuts(text, threads, options.min_piece_bytes)) {
      if (std::optional<YamlDocument> doc = ParseInPieces(text, *cuts)) return std::move(*doc);
    }
    try {
      return FromPieces({ParsePiece(text.data(), text.data() + text.size(), 0)});
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
  // when any piece fails or is not of the shape the cuts expect.
  static std::optional<YamlDocument> ParseInPieces(std::string_view text, const YamlCuts& cuts) {
    std::vector<size_t> starts = {0};
    starts.insert(starts.end(), cuts.cuts.begin(), cuts.cuts.end());
    const bool has_tail = cuts.tail < text.size();
    if (has_tail) starts.push_back(cuts.tail);
    const size_t body = starts.size() - (has_tail ? 1 : 0);
    std::vector<Piece> pieces(starts.size());
    std::vector<bool> failed(starts.size(), false);
    std::vector<int> start_lines;
    for (size_t start : starts) start_lines.push_back(CountLines(text.substr(0, start)));
    auto parse = [&](size_t i) {
      const size_t from = starts[i];
      const size_t to = i + 1 < starts.size() ? starts[i + 1] : text.size();
      try {
        pieces[i] = ParsePiece(text.data() + from, text.data() + to, start_lines[i]);
      } catch (const std::exception&) {
        failed[i] = true;
        return;
      }
      // yaml-cpp ends a quoted scalar that is still open at the end of its
      // input without an error; in the whole text it would run on past the
      // cut.
      if (i + 1 < starts.size() && EndsInOpenQuote(pieces[i], text.substr(from, to - from), start_lines[i])) {
        failed[i] = true;
        return;
      }
      // yaml-cpp marks an empty value, and the end of a collection, with the
      // next token's position. At a cut the whole text's next token is the
      // entry's "-" at the list's column; the piece has its end there, at
      // column 0.
      if (i + 1 < body) {
        for (Item& item : pieces[i].items) {
          if (item.line == start_lines[i + 1] && item.column == 0) item.column = cuts.indent;
        }
      }
    };
    // One task per piece of the list; the last also takes the tail (the
    // root map's remaining keys), which is short.
    ParallelFor(
        static_cast<int64_t>(body),
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            parse(i);
            if (has_tail && static_cast<size_t>(i) + 1 == body) parse(body);
          }
        },
        1, static_cast<int>(body));
    for (bool f : failed) {
      if (f) return std::nullopt;
    }
    return Splice(std::move(pieces), cuts.indent, CountLines(text.substr(0, cuts.first_entry)), has_tail);
  }

  // The head is the root map up to the list's first entries; the middle
  // pieces are block lists of more entries at the list's column; the tail
  // (if any) is the rest of the root map.
  static std::optional<YamlDocument> Splice(std::vector<Piece> pieces, int indent, int first_entry_line,
                                            bool has_tail) {
    const size_t middle_end = pieces.size() - (has_tail ? 1 : 0);
    // The parse of a middle piece starts one level shallower than in the
    // whole file; near yaml-cpp's depth limit that could hide its error.
    for (size_t i = 1; i < pieces.size(); ++i) {
      if (pieces[i].max_depth + 8 >= 500) return std::nullopt;
    }
    const Piece& head = pieces[0];
    if (head.root == kNone || head.items[head.root].kind != Kind::kMap || head.items[head.root].flow) {
      return std::nullopt;
    }
    const Item& head_map = head.items[head.root];
    uint32_t last_key = kNone, last_value = kNone;
    for (uint32_t i = head_map.first; i != kNone; i = head.items[head.items[i].next].next) {
      last_key = i;
      last_value = head.items[i].next;
    }
    if (last_key == kNone || head.items[last_key].kind != Kind::kScalar ||
        std::string_view(head.text.data() + head.items[last_key].first) != "nodes" ||
        head.items[last_value].kind != Kind::kSequence || head.items[last_value].column != indent ||
        head.items[last_value].line != first_entry_line) {
      return std::nullopt;
    }
    for (size_t i = 1; i < middle_end; ++i) {
      const Piece& p = pieces[i];
      if (p.root == kNone || p.items[p.root].kind != Kind::kSequence || p.items[p.root].flow ||
          p.items[p.root].column != indent) {
        return std::nullopt;
      }
    }
    if (has_tail) {
      const Piece& tail = pieces.back();
      // More pairs of the root map: a block map at its column (yaml_pieces
      // only ends the list at a plain key, so no anchor or tag is read as
      // the map's).
      if (tail.root == kNone || tail.items[tail.root].kind != Kind::kMap || tail.items[tail.root].flow ||
          tail.items[tail.root].column != head_map.column) {
        return std::nullopt;
      }
    }
    // Concatenate, moving links by each piece's offsets, then chain the
    // middle pieces' entries after the list's and the tail's pairs after
    // the root map's.
    const uint32_t list = last_value;
    std::vector<uint32_t> item_base, roots;
    YamlDocument doc = Concatenate(std::move(pieces), &item_base, &roots);
    std::vector<Item>& items = doc.items_;
    auto last_child = [&](uint32_t collection) {
      uint32_t last = kNone;
      for (uint32_t i = items[collection].first; i != kNone; i = items[i].next) last = i;
      return last;
    };
    auto append_children = [&](uint32_t to, uint32_t from) {
      if (items[from].first == kNone) return;
      const uint32_t last = last_child(to);
      (last == kNone ? items[to].first : items[last].next) = items[from].first;
      items[to].count += items[from].count;
    };
    const uint32_t root = roots[0];
    for (size_t i = 1; i < middle_end; ++i) append_children(list, roots[i]);
    if (has_tail) append_children(root, roots.back());
    doc.root_ = root;
    doc.pieces_ = static_cast<int>(middle_end);
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
    for (const Piece& p : pieces) {
      items += p.items.size();
      text += p.text.size();
    }
    YamlDocument doc;
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
};

StatusOr<YamlDocument> ParseYaml(std::string_view text, const std::string& path, const YamlParseOptions& options) {
  return YamlDocumentParser::Parse(text, path, options);
}

}  // namespace tfrun
