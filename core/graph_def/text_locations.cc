#include "core/graph_def/text_locations.h"

#include <cstddef>

namespace tfrun {
namespace {

// protobuf's tokenizer advances a tab to the next multiple of 8 columns.
constexpr int kTabWidth = 8;
// Deeper than any text the parser accepts (its recursion limit is 100):
// the scan gives up rather than recurse without bound on other text.
constexpr int kMaxDepth = 200;

enum class TokenKind { kEnd, kWord, kString, kSymbol };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  char symbol = 0;        // kSymbol's character
  std::string_view word;  // kWord's text
  size_t offset = 0;      // where it starts in the text
};

// Character classes by table: the scan reads every byte of files of
// hundreds of kilobytes.
enum CharClass : unsigned char { kOther = 0, kSpace = 1, kWordChar = 2 };
struct CharClasses {
  unsigned char of[256] = {};
  constexpr CharClasses() {
    for (char c : {' ', '\n', '\t', '\r', '\v', '\f'}) of[static_cast<unsigned char>(c)] = kSpace;
    for (int c = 'a'; c <= 'z'; ++c) of[c] = kWordChar;
    for (int c = 'A'; c <= 'Z'; ++c) of[c] = kWordChar;
    for (int c = '0'; c <= '9'; ++c) of[c] = kWordChar;
    for (char c : {'_', '.', '+', '-'}) of[static_cast<unsigned char>(c)] = kWordChar;
  }
};
constexpr CharClasses kClasses;
bool IsWordChar(char c) { return kClasses.of[static_cast<unsigned char>(c)] == kWordChar; }
bool IsSpace(char c) { return kClasses.of[static_cast<unsigned char>(c)] == kSpace; }

// Text format's tokens, with one token of lookahead. Words are runs of
// letters, digits and `_ . + -` (field names, numbers, enum values);
// strings are quoted with either quote and backslash escapes; `#` starts a
// comment to the end of the line. Offsets only: lines and columns are
// counted for the few tokens that need them (LineCursor).
class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : text_(text) { Read(); }

  const Token& Peek() const { return next_; }
  Token Next() {
    Token t = next_;
    Read();
    return t;
  }
  bool PeekSymbol(char c) const { return next_.kind == TokenKind::kSymbol && next_.symbol == c; }

 private:
  void Read() {
    const size_t n = text_.size();
    while (at_ < n) {
      const char c = text_[at_];
      if (c == '#') {
        while (at_ < n && text_[at_] != '\n') ++at_;
      } else if (IsSpace(c)) {
        ++at_;
      } else {
        break;
      }
    }
    next_ = Token{};
    next_.offset = at_;
    if (at_ >= n) return;
    const char c = text_[at_];
    if (c == '"' || c == '\'') {
      next_.kind = TokenKind::kString;
      ++at_;
      while (at_ < n && text_[at_] != c && text_[at_] != '\n') at_ += text_[at_] == '\\' && at_ + 1 < n ? 2 : 1;
      if (at_ < n && text_[at_] == c) ++at_;
    } else if (IsWordChar(c)) {
      next_.kind = TokenKind::kWord;
      const size_t start = at_;
      while (at_ < n && IsWordChar(text_[at_])) ++at_;
      next_.word = text_.substr(start, at_ - start);
    } else {
      next_.kind = TokenKind::kSymbol;
      next_.symbol = c;
      ++at_;
    }
  }

  std::string_view text_;
  size_t at_ = 0;
  Token next_;
};

// Offsets to 1-based lines and columns as protobuf's tokenizer counts them
// (a tab to the next multiple of 8 columns), for offsets asked in
// increasing order: one pass over the text however many are asked.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}

  SourceLocation At(size_t offset) {
    while (at_ < offset) {
      const char c = text_[at_++];
      if (c == '\n') {
        ++line_;
        column_ = 0;
      } else {
        column_ += c == '\t' ? kTabWidth - column_ % kTabWidth : 1;
      }
    }
    return {line_ + 1, column_ + 1};
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
  int line_ = 0;
  int column_ = 0;
};

class Scan {
 public:
  Scan(std::string_view text, const std::vector<TextPathStep>& path, std::vector<TextField>* top_level)
      : tokens_(text), lines_(text), path_(path), top_level_(top_level) {}

  std::vector<SourceLocation> Run() {
    Fields(path_.empty() ? -1 : 0, -1, 0);
    return std::move(found_);
  }

 private:
  // The fields of one message, up to its closing `}` or `>` (or the end).
  // `step`: the path step its fields may match (-1: none); `target`: this
  // message's entry in found_ (-1: not one the path reaches).
  void Fields(int step, int target, int depth) {
    if (depth > kMaxDepth) return;
    int occurrences = 0;  // of path_[step].field in this message
    bool named = false;
    while (true) {
      const Token field = tokens_.Next();
      if (field.kind == TokenKind::kEnd) return;
      if (depth == 0 && top_level_ != nullptr && !top_level_bad_) {
        if (field.kind == TokenKind::kWord) {
          top_level_->push_back({std::string(field.word), field.offset});
        } else if (field.kind != TokenKind::kSymbol || (field.symbol != ',' && field.symbol != ';')) {
          top_level_->clear();  // an extension, or not text format: no field list
          top_level_bad_ = true;
        }
      }
      if (field.kind == TokenKind::kSymbol) {
        if (field.symbol == '}' || field.symbol == '>') return;
        if (field.symbol == ',' || field.symbol == ';') continue;
        if (field.symbol != '[') return;  // not text format
        while (tokens_.Peek().kind != TokenKind::kEnd && !tokens_.PeekSymbol(']')) tokens_.Next();
        tokens_.Next();  // an extension's or Any's [name]: never on the path
      }
      const bool is_name = field.kind == TokenKind::kWord && field.word == "name";
      const bool on_path = field.kind == TokenKind::kWord && step >= 0 && field.word == path_[step].field;
      if (tokens_.PeekSymbol(':')) tokens_.Next();
      // Where a message of this field leads: the next step, or a result
      // (located at `at`: the field, or a list element's brace).
      auto descend = [&](size_t at) {
        int child_step = -1, child_target = -1;
        if (on_path && (path_[step].index < 0 || path_[step].index == occurrences)) {
          if (static_cast<size_t>(step) + 1 == path_.size()) {
            child_target = static_cast<int>(found_.size());
            found_.push_back(lines_.At(at));
          } else {
            child_step = step + 1;
          }
        }
        if (on_path) ++occurrences;
        Fields(child_step, child_target, depth + 1);
      };
      if (tokens_.PeekSymbol('{') || tokens_.PeekSymbol('<')) {
        tokens_.Next();
        descend(field.offset);
      } else if (tokens_.PeekSymbol('[')) {  // a list: scalars, or messages
        tokens_.Next();
        while (tokens_.Peek().kind != TokenKind::kEnd && !tokens_.PeekSymbol(']')) {
          if (tokens_.PeekSymbol('{') || tokens_.PeekSymbol('<')) {
            descend(tokens_.Next().offset);
          } else {
            tokens_.Next();  // a value, a sign or a comma
          }
        }
        tokens_.Next();
      } else {
        if (is_name && target >= 0 && !named) {
          found_[target] = lines_.At(field.offset);
          named = true;
        }
        Scalar();
      }
    }
  }

  // One value: a word (with its sign), or adjacent strings.
  void Scalar() {
    Token t = tokens_.Next();
    if (t.kind == TokenKind::kSymbol && t.symbol == '-') t = tokens_.Next();
    if (t.kind != TokenKind::kString) return;
    while (tokens_.Peek().kind == TokenKind::kString) tokens_.Next();
  }

  Tokenizer tokens_;
  LineCursor lines_;
  const std::vector<TextPathStep>& path_;
  std::vector<TextField>* top_level_;
  bool top_level_bad_ = false;
  std::vector<SourceLocation> found_;
};

}  // namespace

std::vector<SourceLocation> MessageNameLocations(std::string_view text, const std::vector<TextPathStep>& path,
                                                 std::vector<TextField>* top_level) {
  if (top_level != nullptr) top_level->clear();
  return Scan(text, path, top_level).Run();
}

}  // namespace tfrun
