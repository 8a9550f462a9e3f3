#include "core/base/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
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

// The temporaries staged and not yet renamed or removed, for
// RemoveTemporaryFiles. Slots are claimed (free -> writing -> live) with a
// compare-and-swap and never freed, so a signal handler can walk them at
// any moment: it unlinks the live ones. A slot's path buffer is allocated
// the first time the slot is used and kept, so an idle run touches 64 KB
// of slots, not a buffer each. A run stages as many at once as --out has
// fetches; past kSlots they are still removed on every path but a signal's.
struct TemporarySlot {
  enum : int { kFree, kWriting, kLive };
  std::atomic<int> state{kFree};
  std::atomic<char*> path{nullptr};
};
constexpr int kSlots = 4096;
TemporarySlot* Slots() {
  static TemporarySlot* slots = new TemporarySlot[kSlots];  // never freed: handlers may run at exit
  return slots;
}

// The slot now holding `path`, or -1 when none is free (or it is too long).
int RememberTemporary(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  TemporarySlot* slots = Slots();
  for (int i = 0; i < kSlots; ++i) {
    int expected = TemporarySlot::kFree;
    if (!slots[i].state.compare_exchange_strong(expected, TemporarySlot::kWriting)) continue;
    char* buffer = slots[i].path.load();
    if (buffer == nullptr) {
      buffer = new char[PATH_MAX];  // kept for the slot's next use
      slots[i].path.store(buffer);
    }
    std::memcpy(buffer, path.c_str(), path.size() + 1);
    slots[i].state.store(TemporarySlot::kLive);
    return i;
  }
  return -1;
}

void ForgetTemporary(int slot) {
  if (slot >= 0) Slots()[slot].state.store(TemporarySlot::kFree);
}

}  // namespace

void RemoveTemporaryFiles() {
  TemporarySlot* slots = Slots();
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i].state.load() == TemporarySlot::kLive) unlink(slots[i].path.load());
  }
}

namespace {

constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2};

void RemoveTemporariesAndEnd(int signal) {
  const int saved = errno;
  RemoveTemporaryFiles();
  // The default action, now: the process ends by the signal it got.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signal, &dfl, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signal);
  pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  raise(signal);
  errno = saved;  // (not reached for these signals)
}

}  // namespace

void RemoveTemporariesOnSignals() {
  (void)Slots();  // allocated now, never in a handler
  for (int sig : kEndingSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction act {};
    act.sa_handler = RemoveTemporariesAndEnd;
    sigemptyset(&act.sa_mask);
    act.sa_flags = 0;
    sigaction(sig, &act, nullptr);
  }
}

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
  for (const Staged& s : staged_) {
    unlink(s.tmp.c_str());
    ForgetTemporary(s.slot);
  }
}

Status FileBatch::Stage(const OutputTarget& target, const std::function<bool(FILE*)>& write) {
  // A temporary beside the real file, renamed over it by Commit.
  std::string tmp = DirOf(target.real_path) + "/.tfrun-XXXXXX";
  // Signals stay out while the name is made and remembered, so no handler
  // can run between the two and leave it behind.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  const int fd = mkstemp(tmp.data());
  const int made = errno;
  const int slot = fd >= 0 ? RememberTemporary(tmp) : -1;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (fd < 0) return CannotWrite(target.path, made);
  // Unlinked and forgotten on every failure below; Commit or the
  // destructor does both once it is staged.
  auto discard = [&] {
    unlink(tmp.c_str());
    ForgetTemporary(slot);
  };
  // mkstemp makes it 0600; an output file gets the usual 0666 & ~umask.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  FILE* f = fdopen(fd, "wb");
  if (f == nullptr) {
    const int e = errno;
    close(fd);
    discard();
    return CannotWrite(target.path, e);
  }
  errno = 0;
  bool ok = write(f);
  ok = std::fflush(f) == 0 && ok;
  const int e = errno ? errno : EIO;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    discard();
    return CannotWrite(target.path, e);
  }
  staged_.push_back({tmp, target.real_path, target.path, slot});
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
    ForgetTemporary(s.slot);
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

bool IsSameFile(const std::string& output, const std::string& input) {
  struct stat a, b;
  return stat(output.c_str(), &a) == 0 && stat(input.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

Status ReadFileAtMost(const std::string& path, int64_t max_bytes, std::string* text) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return BadInput(fmt::format("{}: cannot read the file: {}", path, Strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return BadInput(fmt::format("{}: is a directory, not a file", path));
  }
  text->clear();
  char buf[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      close(fd);
      return BadInput(fmt::format("{}: cannot read the file: {}", path, Strerror(e)));
    }
    if (n == 0) break;
    if (static_cast<int64_t>(text->size()) + n > max_bytes) {
      close(fd);
      text->clear();
      return BadInput(fmt::format("{}: the file has more than {} bytes, the most tfrun reads of it", path, max_bytes));
    }
    text->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return Status::Ok();
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
