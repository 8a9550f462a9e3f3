#include "core/base/status.h"

#include <fmt/format.h>

namespace tfrun {

// RFC 3629: no overlongs, surrogates or code points past U+10FFFF.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  return n;
}

namespace {

// Control characters and bytes that are not UTF-8 as Python's repr writes
// them, so that quoted text never breaks a one-line message or a terminal;
// `keep_lines`: newlines and tabs stay.
std::string EscapeControls(std::string_view text, bool keep_lines = false) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = Utf8Length(text, i);
    if (keep_lines && (c == '\n' || c == '\t')) {
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f || n == 0) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.append(text, i, n);
      i += n;
      continue;
    }
    ++i;
  }
  return out;
}

}  // namespace

std::string EscapeForTerminal(std::string_view message) { return EscapeControls(message, true); }

std::string ClipForMessage(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return EscapeControls(text);
  // Cut at a UTF-8 character boundary.
  size_t cut = max_chars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... ({} characters)", EscapeControls(text.substr(0, cut)), text.size());
}

int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kMismatch:
      return 1;
    case ErrorKind::kBadInput:
      return 2;
    case ErrorKind::kPlacement:
      return 3;
    case ErrorKind::kRuntime:
      return 4;
  }
  return 4;
}

}  // namespace tfrun
