// Where tfrun's output files go, and writing them safely. A regular file (or
// a path that does not exist yet) is written to a temporary file in the same
// folder and renamed into place, following a symlink to its target, so a
// failure leaves no partial file and an existing one as it was. Anything
// else (a character device such as /dev/null, a FIFO, /dev/stdout,
// /dev/fd/N from a process substitution) is opened and written in place.
// "-" is standard output where the option allows it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace tfrun {

struct OutputTarget {
  enum class Kind { kStdout, kReplace, kInPlace };
  Kind kind = Kind::kReplace;
  std::string path;       // as given, for messages
  std::string real_path;  // kReplace: the file the rename replaces (a symlink's target)
};

// Checks, before anything runs, that `path` can be written (exit 2
// otherwise, the message naming `option` when there is one). `allow_stdout`: "-" is standard
// output; else "-" is refused.
StatusOr<OutputTarget> CheckOutputTarget(const std::string& path, std::string_view option, bool allow_stdout);

// `write` fills the open file and returns false on failure; a failure is
// the path and strerror (exit 4), and leaves no partial replacement.
Status WriteOutput(const OutputTarget& target, const std::function<bool(FILE*)>& write);
Status WriteOutput(const OutputTarget& target, const std::string& text);

// A file written by tfrun itself (an .npy in --out's folder, an expected
// file, JUnit XML): as above, "-" being a file name.
Status WriteFileAtomically(const std::string& path, const std::function<bool(FILE*)>& write);
Status WriteFileAtomically(const std::string& path, const std::string& text);

// Files that a run writes together (--out's .npy files): each is staged in
// a temporary beside its target, and Commit renames them all into place, so
// a failure while writing any of them, or a batch dropped before Commit,
// leaves none of them and the old files as they were. (A rename that fails
// part way leaves the files renamed before it.) A target that is not a
// regular file (a FIFO, /dev/null) is written in place when staged.
class FileBatch {
 public:
  FileBatch() = default;
  FileBatch(const FileBatch&) = delete;
  FileBatch& operator=(const FileBatch&) = delete;
  ~FileBatch();  // removes what was staged and not committed

  // `path` as WriteFileAtomically takes it ("-" is a file name).
  Status Stage(const std::string& path, const std::function<bool(FILE*)>& write);
  Status Stage(const OutputTarget& target, const std::function<bool(FILE*)>& write);
  Status Commit();

 private:
  struct Staged {
    std::string tmp, real_path, path;
    int slot;  // its entry for RemoveTemporaryFiles, or -1
  };
  std::vector<Staged> staged_;
};

// Removes every temporary that a FileBatch has staged and not yet renamed
// into place or removed. Async-signal-safe (a table of fixed slots, no
// allocation, no lock): for signal handlers and std::terminate.
void RemoveTemporaryFiles();

// Handlers for the signals that end a process (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2): each removes the
// temporaries, then ends the process by the same signal with its default
// action, so the parent sees the signal (Ctrl-C's 130 in a shell). A
// signal the process ignores (nohup's SIGHUP) stays ignored.
void RemoveTemporariesOnSignals();

// Whether writing `output` would replace the file `input` names: the same
// file once symlinks are followed (device and inode), as a rename over a
// symlink's target replaces it. False when either does not exist.
bool IsSameFile(const std::string& output, const std::string& input);

// The whole file; false when it cannot be read.
bool ReadWholeFile(const std::string& path, std::string* text);
// The whole file, or FIFO, or device, read up to `max_bytes`: an error
// naming the path when it cannot be read, is a folder, or holds more
// (/dev/zero never ends; a 20 GB file would be read whole).
Status ReadFileAtMost(const std::string& path, int64_t max_bytes, std::string* text);

// Standard output's text, checked: a full disk or a closed descriptor is an
// error naming it (exit 4); a closed pipe ends the process silently
// (SIGPIPE), as for any command-line tool.
Status WriteStdout(const std::string& text);

}  // namespace tfrun
