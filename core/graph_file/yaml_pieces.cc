#include "core/graph_file/yaml_pieces.h"

#include <cstring>

namespace tfrun {
namespace {

// The lines of a text, each without its '\n' (a '\r' before it stays).
class Lines {
 public:
  Lines(std::string_view text, size_t from) : text_(text), begin_(from) { Measure(); }
  bool done() const { return begin_ >= text_.size(); }
  size_t begin() const { return begin_; }
  std::string_view line() const { return text_.substr(begin_, end_ - begin_); }
  void Next() {
    begin_ = end_ < text_.size() ? end_ + 1 : text_.size();
    Measure();
  }

 private:
  void Measure() {
    if (done()) {
      end_ = text_.size();
      return;
    }
    const void* nl = std::memchr(text_.data() + begin_, '\n', text_.size() - begin_);
    end_ = nl ? static_cast<const char*>(nl) - text_.data() : text_.size();
  }
  std::string_view text_;
  size_t begin_;
  size_t end_ = 0;
};

size_t Indent(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

bool IsBlankOrComment(std::string_view line) {
  const size_t i = line.find_first_not_of(" \t\r");
  return i == std::string_view::npos || line[i] == '#';
}

bool EndsLine(std::string_view rest) {
  const size_t i = rest.find_first_not_of(" \t\r");
  return i == std::string_view::npos || rest[i] == '#';
}

// "- " (or a lone "-") at exactly `indent` spaces.
bool IsEntryAt(std::string_view line, size_t indent) {
  return Indent(line) == indent && line.size() > indent && line[indent] == '-' &&
         (line.size() == indent + 1 || line[indent + 1] == ' ' || line[indent + 1] == '\r');
}

bool IsMarkerOrDirective(std::string_view line) {
  return (!line.empty() && line[0] == '%') || line.substr(0, 3) == "---" || line.substr(0, 3) == "...";
}

}  // namespace

std::optional<YamlCuts> FindYamlCuts(std::string_view text, int pieces, size_t min_piece_bytes) {
  if (pieces < 2 || text.size() < 2 * min_piece_bytes) return std::nullopt;
  YamlCuts cuts;
  // The map's `nodes:` key, alone on its line.
  Lines lines(text, 0);
  for (; !lines.done(); lines.Next()) {
    const std::string_view line = lines.line();
    if (IsMarkerOrDirective(line)) return std::nullopt;
    if (line.substr(0, 6) == "nodes:" && EndsLine(line.substr(6))) break;
  }
  if (lines.done()) return std::nullopt;
  for (lines.Next(); !lines.done() && IsBlankOrComment(lines.line()); lines.Next()) {
  }
  if (lines.done()) return std::nullopt;
  const size_t indent = Indent(lines.line());
  if (!IsEntryAt(lines.line(), indent)) return std::nullopt;
  cuts.indent = static_cast<int>(indent);
  cuts.first_entry = lines.begin();

  // Where the list ends: the first line that is neither blank, a comment,
  // deeper than the list, nor one of its entries.
  cuts.list_end = text.size();
  for (lines.Next(); !lines.done(); lines.Next()) {
    const std::string_view line = lines.line();
    if (IsMarkerOrDirective(line)) return std::nullopt;
    if (IsBlankOrComment(line) || Indent(line) > indent || IsEntryAt(line, indent)) continue;
    cuts.list_end = lines.begin();
    break;
  }
  for (Lines rest(text, cuts.list_end); !rest.done(); rest.Next()) {
    if (IsMarkerOrDirective(rest.line())) return std::nullopt;
  }

  // Cut at the first entry past each target whose seam is short: its own
  // entry and the one before it each at most kMaxSeamEntryBytes.
  const size_t span = cuts.list_end - cuts.first_entry;
  const size_t count = std::min<size_t>(pieces, span / min_piece_bytes);
  if (count < 2) return std::nullopt;
  size_t next_target = cuts.first_entry + span / count;
  size_t previous = cuts.first_entry;  // the last entry line seen
  std::optional<YamlCut> pending;      // a cut waiting for the entry after it
  auto settle = [&](size_t next_entry) {
    if (pending && next_entry - pending->at <= kMaxSeamEntryBytes) {
      pending->seam_end = next_entry;
      cuts.cuts.push_back(*pending);
      next_target = cuts.first_entry + span * (cuts.cuts.size() + 1) / count;
    }
    pending.reset();
  };
  for (Lines entry(text, cuts.first_entry); entry.begin() < cuts.list_end; entry.Next()) {
    if (!IsEntryAt(entry.line(), indent) || entry.begin() == cuts.first_entry) continue;
    settle(entry.begin());
    if (cuts.cuts.size() + 1 == count) break;
    if (entry.begin() >= next_target && entry.begin() - previous <= kMaxSeamEntryBytes) {
      pending = YamlCut{entry.begin(), previous, 0};
    }
    previous = entry.begin();
  }
  settle(cuts.list_end);
  if (cuts.cuts.empty()) return std::nullopt;
  return cuts;
}

}  // namespace tfrun
