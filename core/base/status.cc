#include "core/base/status.h"

#include <fmt/format.h>

namespace tfrun {

namespace {

// Control characters as Python's repr writes them, so that quoted text
// never breaks a one-line message.
std::string EscapeControls(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

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
