// `tfrun ops --coverage GRAPH...`: per graph, which of its ops tfrun cannot
// run where TensorFlow's placer puts them (the device options describe the
// machine; a simulated GPU counts as the real one it stands for), so a
// user knows before a run whether a program runs in tfrun, and where not.
#pragma once

#include <string>
#include <vector>

#include "cli/flags.h"

namespace tfrun {

// The text for every graph of `graphs`, each placed under `options` (its
// device flags, --soft-placement, --compat). A graph that does not load or
// place gets its error as its line, and the listing goes on; `first_error`
// is the first such error (its exit code is the command's).
struct Coverage {
  std::string text;
  Status first_error;
};
Coverage CoverageListing(const std::vector<std::string>& graphs, const RunOptions& options);

}  // namespace tfrun
