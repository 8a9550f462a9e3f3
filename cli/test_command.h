// `tfrun test PATH...` (graph-format.md, "Additions"): every graph with an
// expected-output file beside it is a case; run them in parallel, print a
// verdict per case and `N passed, M failed`, optionally write JUnit XML and
// rewrite the expected files of failing cases (--update).
//
// A case is NAME.yaml with NAME.expected, or (an extension) with
// NAME.VARIANT.expected, one graph run several ways. The expected file may
// start with `# args: FLAGS` (leading VAR=value words set the environment;
// paths are relative to the file's folder, where the case runs) and then
// `# exit: N`; the rest is the expected standard output. A sibling
// NAME[.VARIANT].expected-stderr, when present, is compared with standard
// error.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace tfrun {

struct TestOptions {
  std::vector<std::string> paths;
  int jobs = 0;  // 0: one per core
  std::string junit_path;
  bool update = false;
  std::string tfrun_path;  // the binary each case runs ("" = this one)
};

// Prints the verdicts and the summary on standard output; returns the
// number of failed cases, or a BadInput status for bad usage (exit 2).
StatusOr<int> RunTestCommand(const TestOptions& options);

}  // namespace tfrun
