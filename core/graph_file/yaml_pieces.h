// Where a large graph file can be cut so that yaml-cpp parses the pieces on
// separate cores. Only the shape generated graphs have is cut: a block map
// at column 0 whose `nodes:` key holds a block list. The cuts fall at line
// starts where an entry of that list begins ("- " at the list's column).
// yaml_document.cc parses each piece after the first behind a `nodes:`
// line of its own, so in the same context as in the whole file, and then
// re-parses each seam (the entries on both sides of a cut) to check that
// nothing carried across it. A wrong guess here costs time, never
// correctness: anything doubtful is parsed as one piece.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace tfrun {

struct YamlCut {
  size_t at;          // line start of the entry that begins a piece
  size_t seam_begin;  // line start of the entry before it
  size_t seam_end;    // line start of the entry after it, or where the list ends
};

struct YamlCuts {
  int indent = 0;            // the list's column
  size_t first_entry = 0;    // line start of the list's first entry
  size_t list_end = 0;       // line start of what follows the list; text.size() if nothing
  std::vector<YamlCut> cuts;
};

// The entries on each side of a cut are at most this long (a seam is
// parsed twice).
inline constexpr size_t kMaxSeamEntryBytes = 4096;

// At most `pieces` pieces of at least `min_piece_bytes` each; nullopt when
// the text is not of that shape, is too small, or has directives or
// document markers (%, ---, ... at a line start).
std::optional<YamlCuts> FindYamlCuts(std::string_view text, int pieces, size_t min_piece_bytes);

}  // namespace tfrun
