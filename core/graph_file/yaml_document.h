// A graph file's YAML as tfrun keeps it: one flat array of located nodes
// built from parser events (libyaml's, or yaml-cpp's YAML::Parser with an
// EventHandler where libyaml could read the text differently), never
// yaml-cpp's own node tree (shared_ptr nodes, about 6 KB per graph
// node). A node costs 24 bytes plus its scalar's text.
//
// Large files are parsed in pieces on every core (yaml_pieces.h: yaml-cpp's
// scanner runs at about 6 MB/s, libyaml's at about 16): each piece of the
// `nodes:` list behind a `nodes:` line of its own, so in the file's
// context, then the entries
// around each cut once more together, then the pieces are spliced. Any
// doubt (a piece or seam that fails, reads differently or has an
// unexpected shape) falls back to one parse of the whole text, so a
// document always holds exactly what one yaml-cpp parse gives, and every
// error is the one that parse reports. The fuzzer checks both on every
// input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/graph/graph.h"

namespace tfrun {

class YamlDocument;

namespace yaml_internal {
// One node of a YamlDocument (24 bytes).
struct Item {
  int32_t line;     // 0-based, as yaml-cpp's Mark; -1 unknown
  int32_t column;
  uint32_t next;    // next sibling (a map's keys and values alternate), or kNone
  uint32_t first;   // scalar: offset into the text; collection: first child; alias: target
  uint32_t count;   // scalar: length; collection: children (a map's keys and values)
  uint8_t kind;     // Kind
  uint8_t quoted;   // tag "!"
  uint8_t flow;     // a flow collection ({...} or [...])
};
enum Kind : uint8_t { kNull, kScalar, kSequence, kMap, kAlias };
inline constexpr uint32_t kNone = 0xffffffffu;
}  // namespace yaml_internal

// A handle to one node of a YamlDocument; the document must outlive it.
// It answers what YAML::Node answers for the loader: a missing map key
// gives an undefined node (false in a condition), aliases are the node
// they name (the same location, and cycles are possible), and a map's
// duplicate keys are all kept, in file order.
class YamlNode {
 public:
  YamlNode() = default;  // undefined

  bool defined() const { return doc_ != nullptr; }
  explicit operator bool() const { return defined(); }
  bool IsNull() const;
  bool IsScalar() const;
  bool IsSequence() const;
  bool IsMap() const;

  // The scalar's text ("" for other nodes); NUL-terminated, for strtod.
  std::string_view Scalar() const;
  std::string ScalarString() const { return std::string(Scalar()); }
  // Tag "!": a quoted scalar, which is never a number or a bool.
  bool IsQuoted() const;
  // 1-based; {0, 0} where unknown (an empty document).
  SourceLocation location() const;

  // Elements of a sequence, pairs of a map; 0 otherwise.
  size_t size() const;

  // The value of the first pair whose key is the scalar `key`; undefined
  // when there is none or this is not a map.
  YamlNode operator[](std::string_view key) const;

  // Iterates the elements of a sequence (range-for gives YamlNode) or the
  // keys and values of a map (Pairs()).
  class Iterator;
  class Range;
  struct Pair;
  class PairIterator;
  class PairRange;
  Range Elements() const;
  PairRange Pairs() const;

 private:
  friend class YamlDocument;
  YamlNode(const YamlDocument* doc, uint32_t index) : doc_(doc), index_(index) {}
  const yaml_internal::Item& item() const;

  const YamlDocument* doc_ = nullptr;
  uint32_t index_ = 0;  // always resolved: never an alias
};

struct YamlNode::Pair {
  YamlNode key;
  YamlNode value;
};

class YamlNode::Iterator {
 public:
  YamlNode operator*() const;
  Iterator& operator++();
  bool operator!=(const Iterator& o) const { return index_ != o.index_; }

 private:
  friend class YamlNode;
  Iterator(const YamlDocument* doc, uint32_t index) : doc_(doc), index_(index) {}
  const YamlDocument* doc_;
  uint32_t index_;  // an unresolved link (may be an alias)
};

class YamlNode::Range {
 public:
  Iterator begin() const { return begin_; }
  Iterator end() const { return end_; }

 private:
  friend class YamlNode;
  Range(Iterator b, Iterator e) : begin_(b), end_(e) {}
  Iterator begin_, end_;
};

class YamlNode::PairIterator {
 public:
  Pair operator*() const;
  PairIterator& operator++();
  bool operator!=(const PairIterator& o) const { return key_.index_ != o.key_.index_; }

 private:
  friend class YamlNode;
  explicit PairIterator(Iterator key) : key_(key) {}
  Iterator key_;
};

class YamlNode::PairRange {
 public:
  PairIterator begin() const { return begin_; }
  PairIterator end() const { return end_; }

 private:
  friend class YamlNode;
  PairRange(PairIterator b, PairIterator e) : begin_(b), end_(e) {}
  PairIterator begin_, end_;
};

// Which parser reads the text. Both give the same document and the same
// errors (yaml-cpp's); libyaml is about three times faster, and hands any
// text it might read differently to yaml-cpp (yaml_document.cc).
enum class YamlReader { kLibyamlFirst, kYamlCppOnly };

struct YamlParseOptions {
  int max_threads = 0;  // 0: one per core
  // Files smaller than this are parsed in one piece; each piece is at
  // least this long.
  size_t min_piece_bytes = size_t{256} << 10;
  YamlReader reader = YamlReader::kLibyamlFirst;  // kYamlCppOnly: for tests and the fuzzer
};

class YamlDocument {
 public:
  // The document's root: a null node without location for a file with no
  // document (empty, or only comments).
  YamlNode root() const { return YamlNode(this, Resolve(root_)); }

  // How many pieces were parsed at once (1: the whole text in one).
  int pieces() const { return pieces_; }
  // How many of those libyaml read (the others yaml-cpp read).
  int pieces_read_by_libyaml() const { return pieces_read_by_libyaml_; }

  // The tree from the root, one line per node in document order (kind,
  // location, text), stopping after `max_nodes` lines or below `max_depth`
  // (aliases can make trees exponential or cyclic): two parses read the
  // same when their strings are equal. For tests and the fuzzer.
  std::string TreeString(size_t max_nodes = 200000, int max_depth = 64) const;

 private:
  friend class YamlNode;
  friend class YamlDocumentParser;
  uint32_t Resolve(uint32_t index) const;

  std::vector<yaml_internal::Item> items_;
  std::string text_;  // scalar texts, each followed by a NUL
  uint32_t root_ = 0;
  int pieces_ = 1;
  int pieces_read_by_libyaml_ = 0;
};

// Parses the first YAML document of `text`. Errors carry yaml-cpp's
// message and location, prefixed with `path` (exit 2).
StatusOr<YamlDocument> ParseYaml(std::string_view text, const std::string& path,
                                 const YamlParseOptions& options = YamlParseOptions());

}  // namespace tfrun
