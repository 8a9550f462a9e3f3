// For the tests that run the tfrun binary: one shell command with its
// standard output, standard error and exit status.
#pragma once

#include <string>
#include <vector>

#include "core/base/atomic_file.h"  // ReadWholeFile

namespace tfrun {

struct CommandResult {
  bool exited = false;  // false: killed by a signal (a crash)
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `command` through /bin/sh, its standard error kept in $TEST_TMPDIR.
CommandResult RunCommand(const std::string& command);

// A table of cases (testdata/golden/cases.txt, cluster_cases.txt): one
// line per case, `fields` fields separated by '|' (the last one may hold
// '|'), trimmed; blank lines and lines starting with '#' skipped. A line
// with fewer fields is a test failure.
std::vector<std::vector<std::string>> ReadCaseTable(const std::string& path, size_t fields);

// $TEST_TMPDIR, or /tmp outside Bazel.
std::string TestTmpDir();


}  // namespace tfrun
