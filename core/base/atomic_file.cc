#include "core/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tfrun {
namespace {

std::string Strerror(int e) { return std::strerror(e); }

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A symlink's final target, also when that target does not exist yet.
std::string FollowLinks(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
    if (n < 0) return p;
    std::string target(buf, n);
    p = target[0] == '/' ? target : DirOf(p) + "/" + target;
  }
  return p;
}

Status CannotWrite(const std::string& path, int e) { return RuntimeError("cannot write " + path + ": " + Strerror(e)); }

}  // namespace

StatusOr<OutputTarget> CheckOutputTarget(const std::string& path, std::string_view option, bool allow_stdout) {
  OutputTarget t;
  t.path = path;
  const std::string what = option.empty() ? path : std::string(option) + " " + path;
  if (path == "-") {
    if (!allow_stdout) return BadInput(what + ": standard output cannot take this output; give a path");
    t.kind = OutputTarget::Kind::kStdout;
    return t;
  }
  if (path.empty()) return BadInput(std::string(option) + ": needs a path");
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return BadInput(what + ": is a directory");
    if (!S_ISREG(st.st_mode)) {
      if (access(path.c_str(), W_OK) != 0) return BadInput(what + ": " + Strerror(errno));
      t.kind = OutputTarget::Kind::kInPlace;
      return t;
    }
  }
  t.kind = OutputTarget::Kind::kReplace;
  t.real_path = FollowLinks(path);
  const std::string dir = DirOf(t.real_path);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return BadInput(what + ": no folder " + dir + " to write it in");
  }
  if (access(dir.c_str(), W_OK) != 0) return BadInput(what + ": cannot write in " + dir + ": " + Strerror(errno));
  return t;
}

Status WriteOutput(const OutputTarget& target, const std::function<bool(FILE*)>& write) {
  if (target.kind == OutputTarget::Kind::kStdout) {
    errno = 0;
    const bool ok = write(stdout) && std::fflush(stdout) == 0;
    return ok ? Status::Ok() : CannotWrite("standard output", errno ? errno : EIO);
  }
  if (target.kind == OutputTarget::Kind::kInPlace) {
    FILE* f = std::fopen(target.path.c_str(), "wb");
    if (f == nullptr) return CannotWrite(target.path, errno);
    errno = 0;
    bool ok = write(f);
    ok = std::fflush(f) == 0 && ok;
    const int e = errno ? errno : EIO;
    ok = std::fclose(f) == 0 && ok;
    return ok ? Status::Ok() : CannotWrite(target.path, e);
  }
  FileBatch batch;
  TFRUN_RETURN_IF_ERROR(batch.Stage(target, write));
  return batch.Commit();
}

FileBatch::~FileBatch() {
  for (const Staged& s : staged_) unlink(s.tmp.c_str());
}

Status FileBatch::Stage(const OutputTarget& target, const std::function<bool(FILE*)>& write) {
  // A temporary beside the real file, renamed over it by Commit.
  std::string tmp = DirOf(target.real_path) + "/.tfrun-XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return CannotWrite(target.path, errno);
  // mkstemp makes it 0600; an output file gets the usual 0666 & ~umask.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  FILE* f = fdopen(fd, "wb");
  if (f == nullptr) {
    const int e = errno;
    close(fd);
    unlink(tmp.c_str());
    return CannotWrite(target.path, e);
  }
  errno = 0;
  bool ok = write(f);
  ok = std::fflush(f) == 0 && ok;
  const int e = errno ? errno : EIO;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    unlink(tmp.c_str());
    return CannotWrite(target.path, e);
  }
  staged_.push_back({tmp, target.real_path, target.path});
  return Status::Ok();
}

Status FileBatch::Stage(const std::string& path, const std::function<bool(FILE*)>& write) {
  // No option to name: a destination that cannot be written is a failure
  // of the run that writes it (exit 4), as a failed write is.
  StatusOr<OutputTarget> target = CheckOutputTarget(path == "-" ? "./-" : path, "", false);
  if (!target.ok()) return RuntimeError(target.status().message());
  if (target->kind != OutputTarget::Kind::kReplace) return WriteOutput(*target, write);
  return Stage(*target, write);
}

Status FileBatch::Commit() {
  Status status = Status::Ok();
  for (const Staged& s : staged_) {
    if (status.ok() && std::rename(s.tmp.c_str(), s.real_path.c_str()) != 0) status = CannotWrite(s.path, errno);
    if (!status.ok()) unlink(s.tmp.c_str());  // this one and those after it: none half-written
  }
  staged_.clear();
  return status;
}

Status WriteOutput(const OutputTarget& target, const std::string& text) {
  return WriteOutput(target, [&](FILE* f) { return std::fwrite(text.data(), 1, text.size(), f) == text.size(); });
}

Status WriteFileAtomically(const std::string& path, const std::function<bool(FILE*)>& write) {
  FileBatch batch;
  TFRUN_RETURN_IF_ERROR(batch.Stage(path, write));
  return batch.Commit();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, [&](FILE* f) { return std::fwrite(text.data(), 1, text.size(), f) == text.size(); });
}

bool ReadWholeFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return true;
}

Status WriteStdout(const std::string& text) {
  OutputTarget out;
  out.kind = OutputTarget::Kind::kStdout;
  return WriteOutput(out, text);
}

}  // namespace tfrun
