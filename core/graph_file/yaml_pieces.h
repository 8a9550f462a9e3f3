// Where a large graph file can be cut so that yaml-cpp parses the pieces on
// separate cores. Only the shape generated graphs have is cut: a block map
// at column 0 whose `nodes:` key holds a block list. The cuts fall at line
// starts where an entry of that list begins ("- " at the list's column);
// in block context such a line means the same alone as in the whole file.
// What follows the list must start with a plain key at column 0.
// A cut inside a quoted or flow scalar leaves a piece that fails to parse,
// and the caller then parses the whole text at once (yaml_document.cc also
// checks each piece's shape), so a wrong guess here costs time, never
// correctness.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace tfrun {

struct YamlCuts {
  int indent = 0;             // the list's column
  size_t first_entry = 0;     // line start of the list's first entry
  std::vector<size_t> cuts;   // line starts of later entries where pieces begin
  size_t tail = 0;            // line start of what follows the list; text.size() if nothing
};

// At most `pieces` pieces of at least `min_piece_bytes` each; nullopt when
// the text is not of that shape, is too small, or has directives or
// document markers (%, ---, ... at a line start).
std::optional<YamlCuts> FindYamlCuts(std::string_view text, int pieces, size_t min_piece_bytes);

}  // namespace tfrun
