// For the tests that run the tfrun binary: one shell command with its
// standard output, standard error and exit status.
#pragma once

#include <string>

namespace tfrun {

struct CommandResult {
  bool exited = false;  // false: killed by a signal (a crash)
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `command` through /bin/sh, its standard error kept in $TEST_TMPDIR.
CommandResult RunCommand(const std::string& command);

// $TEST_TMPDIR, or /tmp outside Bazel.
std::string TestTmpDir();

// The whole file; false when it cannot be read.
bool ReadWholeFile(const std::string& path, std::string* text);

}  // namespace tfrun
