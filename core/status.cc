#include "core/status.h"

#include <fmt/format.h>

namespace tfrun {

std::string ClipForMessage(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  // Cut at a UTF-8 character boundary.
  size_t cut = max_chars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... ({} characters)", text.substr(0, cut), text.size());
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
