#include "cli/test_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <tuple>
#include <optional>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <thread>

#include "cli/expect.h"
#include "core/base/parallel.h"
#include "core/base/atomic_file.h"

extern char** environ;

namespace tfrun {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A case that runs longer is killed and fails: a hang must not stall CI.
constexpr auto kCaseTimeout = std::chrono::minutes(5);

struct TestCase {
  std::string name;           // the expected file's path without ".expected"
  fs::path dir;               // where it runs
  std::string graph;          // NAME.yaml, relative to dir
  fs::path expected_path;
  fs::path stderr_path;       // "" when there is no NAME.expected-stderr
  std::vector<std::string> header;  // the `# args:` / `# exit:` / `# processor:` lines, kept by --update
  std::vector<std::string> env;     // VAR=value
  std::vector<std::string> args;
  int exit_code = 0;
  // `# processor: VENDOR`: the expected output is that processor maker's
  // (TensorFlow's estimates); elsewhere the case is skipped, not failed.
  std::string processor;
  Tolerance tolerance;
  std::string expected_out;
  std::string expected_err;
  std::string problem;  // a malformed expected file: the case fails with it
};

struct Outcome {
  bool passed = false;
  bool skipped = false;  // another processor maker's case
  bool updatable = false;  // failed on its outputs or exit code only: --update can rewrite it
  int exit_code = -1;      // tfrun's, when it exited
  double seconds = 0;
  std::string details;  // why it failed: diffs, exit codes
  std::string actual_out;
  std::string actual_err;
};


// Shell-like words: whitespace separates, quotes group, backslash escapes.
StatusOr<std::vector<std::string>> SplitWords(const std::string& s) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < s.size()) {
        word += s[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < s.size()) {
      word += s[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return BadInput(fmt::format("unterminated {} quote", quote));
  if (in_word) words.push_back(word);
  return words;
}

bool IsEnvAssignment(const std::string& w) {
  const size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return std::all_of(w.begin(), w.begin() + eq, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }) &&
         !std::isdigit(static_cast<unsigned char>(w[0]));
}

// --rtol R / --atol A (or --rtol=R) among the case's flags.
Status ReadTolerance(const std::vector<std::string>& args, Tolerance* t) {
  for (size_t i = 0; i < args.size(); ++i) {
    for (const char* flag : {"--rtol", "--atol"}) {
      std::string value;
      if (args[i] == flag && i + 1 < args.size()) {
        value = args[i + 1];
      } else if (args[i].rfind(std::string(flag) + "=", 0) == 0) {
        value = args[i].substr(std::string(flag).size() + 1);
      } else {
        continue;
      }
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(x >= 0)) return BadInput(fmt::format("{} {}: not a tolerance", flag, value));
      (std::string(flag) == "--rtol" ? t->rtol : t->atol) = x;
      t->enabled = true;
    }
  }
  return Status::Ok();
}

// The most tfrun test reads of an expected file or a case's output (as
// --max-file-bytes's default bounds a graph file): a 20 GB file is a
// failing case, not 20 GB of memory.
constexpr int64_t kMaxCaseFileBytes = int64_t{64} << 20;

// Reads NAME[.VARIANT].expected: the header lines, then the expected output.
void ReadExpected(TestCase* c) {
  std::string text;
  if (Status read = ReadFileAtMost(c->expected_path.string(), kMaxCaseFileBytes, &text); !read.ok()) {
    c->problem = read.message();
    return;
  }
  size_t pos = 0;
  auto next_line = [&](std::string* line) {
    const size_t nl = text.find('\n', pos);
    *line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    return nl == std::string::npos ? text.size() : nl + 1;
  };
  for (int i = 0; i < 3 && pos < text.size(); ++i) {
    std::string line;
    const size_t after = next_line(&line);
    if (line.rfind("# args:", 0) == 0 && c->header.empty()) {
      StatusOr<std::vector<std::string>> words = SplitWords(line.substr(7));
      if (!words.ok()) {
        c->problem = fmt::format("{}: # args: {}", c->expected_path.string(), words.status().message());
        return;
      }
      size_t k = 0;
      while (k < words->size() && IsEnvAssignment((*words)[k])) c->env.push_back((*words)[k++]);
      c->args.assign(words->begin() + k, words->end());
    } else if (line.rfind("# exit:", 0) == 0) {
      char* end = nullptr;
      const std::string n = line.substr(7);
      const long code = std::strtol(n.c_str(), &end, 10);
      if (n.find_first_not_of(' ') == std::string::npos || *end != '\0' || code < 0 || code > 255) {
        c->problem = fmt::format("{}: '# exit:' needs an exit code", c->expected_path.string());
        return;
      }
      c->exit_code = static_cast<int>(code);
    } else if (line.rfind("# processor:", 0) == 0) {
      const size_t first = line.find_first_not_of(' ', 12);
      if (first == std::string::npos) {
        c->problem = fmt::format("{}: '# processor:' needs a processor maker (GenuineIntel, AuthenticAMD)",
                                 c->expected_path.string());
        return;
      }
      c->processor = line.substr(first, line.find_last_not_of(' ') + 1 - first);
    } else {
      break;
    }
    c->header.push_back(line);
    pos = after;
  }
  c->expected_out = text.substr(pos);
  Status tolerance = ReadTolerance(c->args, &c->tolerance);
  if (!tolerance.ok()) c->problem = fmt::format("{}: {}", c->expected_path.string(), tolerance.message());
  if (!c->stderr_path.empty()) {
    if (Status read = ReadFileAtMost(c->stderr_path.string(), kMaxCaseFileBytes, &c->expected_err); !read.ok()) {
      c->problem = read.message();
    }
  }
}

// Graph files a case may run: tfrun's YAML, TensorFlow's GraphDef (text or
// binary) and MetaGraphDef.
constexpr const char* kGraphExtensions[] = {".yaml", ".pbtxt", ".pb", ".meta"};

// NAME plus the first graph extension that exists in `dir`, or NAME itself
// where it is a SavedModel folder; "" if none.
std::string GraphFileFor(const fs::path& dir, const std::string& name) {
  for (const char* ext : kGraphExtensions) {
    std::error_code ec;  // a path that cannot be looked at (a loop, no permission) is no graph
    if (fs::exists(dir / (name + ext), ec)) return name + ext;
  }
  std::error_code ec;
  if (fs::exists(dir / name / "saved_model.pb", ec) || fs::exists(dir / name / "saved_model.pbtxt", ec)) return name;
  return "";
}

// The case an expected file stands for: NAME.expected beside NAME.yaml, or
// NAME.VARIANT.expected beside NAME.yaml (or NAME.pbtxt, NAME.pb,
// NAME.meta, a SavedModel folder NAME). An expected file of no graph (a graph renamed or deleted) is
// a case that fails, not one quietly skipped.
void CaseFor(const fs::path& expected, TestCase* c) {
  const std::string file = expected.filename().string();
  const std::string stem = file.substr(0, file.size() - std::string(".expected").size());
  fs::path dir = expected.parent_path();
  c->name = (dir / stem).lexically_normal().string();
  c->dir = dir.empty() ? fs::path(".") : dir;
  c->expected_path = expected;
  std::string graph = GraphFileFor(c->dir, stem);
  if (graph.empty()) {
    const size_t dot = stem.rfind('.');
    const std::string base = dot == std::string::npos || dot == 0 ? "" : stem.substr(0, dot);
    graph = base.empty() ? "" : GraphFileFor(c->dir, base);
    if (graph.empty()) {
      c->problem = fmt::format("{}: no graph for it: {} is missing{}", expected.string(), (dir / (stem + ".yaml")).string(),
                               base.empty() ? "" : fmt::format(", and so is {}", (dir / (base + ".yaml")).string()));
      return;
    }
  }
  c->graph = graph;
  const fs::path err = dir / (stem + ".expected-stderr");
  std::error_code ec;
  if (fs::exists(err, ec)) c->stderr_path = err;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

StatusOr<std::vector<TestCase>> Discover(const std::vector<std::string>& paths) {
  std::vector<fs::path> expected_files;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::path path(p);
    if (fs::is_directory(path, ec)) {
      // Every call with an error code: a symlink loop or an unreadable
      // entry is a message, not an exception.
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code entry_ec;
        if (it->is_regular_file(entry_ec) && EndsWith(it->path().filename().string(), ".expected")) {
          expected_files.push_back(it->path());
        }
      }
      if (ec) return BadInput(fmt::format("{}: {}", p, ec.message()));
    } else if (fs::is_regular_file(path, ec) && EndsWith(p, ".expected")) {
      expected_files.push_back(path);
    } else if (fs::is_regular_file(path, ec) &&
               std::any_of(std::begin(kGraphExtensions), std::end(kGraphExtensions),
                           [&](const char* ext) { return EndsWith(p, ext); })) {
      // A graph: its NAME.expected and NAME.VARIANT.expected files.
      const std::string stem = path.stem().string();
      const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string f = it->path().filename().string();
        if (EndsWith(f, ".expected") && (f == stem + ".expected" || f.rfind(stem + ".", 0) == 0)) {
          expected_files.push_back(path.parent_path() / f);
        }
      }
      if (ec) return BadInput(fmt::format("{}: {}", dir.string(), ec.message()));
    } else {
      return BadInput(fmt::format("{}: no such graph file, expected file or folder", p));
    }
  }
  std::sort(expected_files.begin(), expected_files.end());
  expected_files.erase(std::unique(expected_files.begin(), expected_files.end()), expected_files.end());
  std::vector<TestCase> cases;
  for (const fs::path& e : expected_files) {
    TestCase c;
    CaseFor(e, &c);
    if (c.problem.empty()) ReadExpected(&c);
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string SelfPath() {
  std::vector<char> buf(4096);
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), n) : "tfrun";
}

// The signals that end `tfrun test` early: each kills the running cases and
// removes the scratch folder before the process ends by it.
constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The cases' processes while they run, for the thread that answers a
// signal. `interrupted` is set under `mu` and checked before each start, so
// no case starts (and writes into the scratch folder) after the kill.
struct RunningCases {
  std::mutex mu;
  std::vector<pid_t> pids;
  bool interrupted = false;
};

// Runs one case's tfrun in its folder, standard output and error to files.
Outcome Run(const TestCase& c, const std::string& tfrun, const fs::path& scratch, int index, RunningCases* running) {
  Outcome o;
  const auto started = Clock::now();
  const std::string out_path = (scratch / fmt::format("case{}.out", index)).string();
  const std::string err_path = (scratch / fmt::format("case{}.err", index)).string();
  std::vector<std::string> argv_words = {tfrun, c.graph};
  argv_words.insert(argv_words.end(), c.args.begin(), c.args.end());
  std::vector<char*> argv;
  for (std::string& w : argv_words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_words;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    const bool overridden = std::any_of(c.env.begin(), c.env.end(), [&](const std::string& o) {
      return o.substr(0, o.find('=')) == key;
    });
    if (!overridden) env_words.push_back(kv);
  }
  env_words.insert(env_words.end(), c.env.begin(), c.env.end());
  std::vector<char*> envp;
  for (std::string& w : env_words) envp.push_back(w.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, c.dir.c_str());
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // The case runs with the signal mask and dispositions of a fresh process,
  // not this one's (which blocks the ending signals and ignores SIGPIPE).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  for (int sig : kEndingSignals) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int spawned = 0;
  {
    std::lock_guard<std::mutex> lock(running->mu);
    spawned = running->interrupted ? ECANCELED
                                   : posix_spawn(&pid, tfrun.c_str(), &actions, &attr, argv.data(), envp.data());
    if (spawned == 0) running->pids.push_back(pid);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    o.details = fmt::format("cannot start {}: {}", tfrun, std::strerror(spawned));
    return o;
  }
  int status = 0;
  bool timed_out = false;
  for (int polls = 0;; ++polls) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (Clock::now() - started > kCaseTimeout) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(polls < 200 ? 200 : 5000));
  }
  {
    std::lock_guard<std::mutex> lock(running->mu);
    running->pids.erase(std::find(running->pids.begin(), running->pids.end(), pid));
  }
  o.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::vector<std::string> why;
  for (const auto& [path, text, what] : {std::tuple{&out_path, &o.actual_out, "standard output"},
                                         std::tuple{&err_path, &o.actual_err, "standard error"}}) {
    if (Status read = ReadFileAtMost(*path, kMaxCaseFileBytes, text); !read.ok()) {
      why.push_back(fmt::format("its {} could not be read: {}", what, read.message()));
    }
  }
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  if (timed_out) {
    why.push_back(fmt::format("killed after {} s", std::chrono::duration_cast<std::chrono::seconds>(kCaseTimeout).count()));
  } else if (!WIFEXITED(status)) {
    why.push_back(fmt::format("tfrun was killed by signal {}", WTERMSIG(status)));
  } else {
    o.exit_code = WEXITSTATUS(status);
    if (o.exit_code != c.exit_code) why.push_back(fmt::format("exit code {}, expected {}", o.exit_code, c.exit_code));
  }
  if (!OutputsMatch(c.expected_out, o.actual_out, c.tolerance)) {
    why.push_back(UnifiedDiff(c.expected_out, o.actual_out, c.expected_path.string(), "standard output"));
  }
  if (!c.stderr_path.empty() && c.expected_err != o.actual_err) {
    why.push_back(UnifiedDiff(c.expected_err, o.actual_err, c.stderr_path.string(), "standard error"));
  }
  if (!why.empty() && !o.actual_err.empty() && c.stderr_path.empty()) {
    why.push_back("standard error:\n" + o.actual_err);
  }
  o.passed = why.empty();
  o.updatable = !o.passed && o.exit_code >= 0;
  for (std::string& w : why) {
    if (!w.empty() && w.back() != '\n') w += '\n';
    o.details += w;
  }
  return o;
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': case '\t': out += static_cast<char>(c); break;
      default:
        // XML 1.0 has no control characters: show them as \xNN.
        if (c < 0x20) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string JUnitXml(const std::vector<TestCase>& cases, const std::vector<Outcome>& outcomes, double seconds) {
  int failures = 0;
  for (const Outcome& o : outcomes) failures += o.passed || o.skipped ? 0 : 1;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n", cases.size(), failures, seconds);
  xml += fmt::format("<testsuite name=\"tfrun test\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{:.3f}\">\n",
                     cases.size(), failures, seconds);
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string name = XmlEscape(cases[i].name);
    xml += fmt::format("  <testcase classname=\"tfrun\" name=\"{}\" time=\"{:.3f}\"", name, outcomes[i].seconds);
    if (outcomes[i].skipped) {
      xml += fmt::format(">\n    <skipped message=\"{}\"/>\n  </testcase>\n", XmlEscape(outcomes[i].details));
    } else if (outcomes[i].passed) {
      xml += "/>\n";
    } else {
      xml += fmt::format(">\n    <failure message=\"output differs from {}\">{}</failure>\n  </testcase>\n",
                         XmlEscape(cases[i].expected_path.string()), XmlEscape(outcomes[i].details));
    }
  }
  xml += "</testsuite>\n</testsuites>\n";
  return xml;
}

// --update: the failing case's expected files take its actual output and
// exit code, under the same `# args:` line.
Status Update(const TestCase& c, const Outcome& o) {
  std::string text;
  for (const std::string& line : c.header) {
    if (line.rfind("# exit:", 0) != 0) text += line + "\n";
  }
  if (o.exit_code != 0) text += fmt::format("# exit: {}\n", o.exit_code);
  text += o.actual_out;
  TFRUN_RETURN_IF_ERROR(WriteFileAtomically(c.expected_path.string(), text));
  if (!c.stderr_path.empty()) TFRUN_RETURN_IF_ERROR(WriteFileAtomically(c.stderr_path.string(), o.actual_err));
  return Status::Ok();
}

// The scratch folder that holds the cases' standard output and error while
// they run; removed on every way out: a return, an error, or one of
// kEndingSignals (SIGPIPE is ignored meanwhile, so a closed standard output
// is a failed write and a return). Lives on one thread; the signal thread
// it starts is joined before it goes.
class ScratchFolder {
 public:
  static StatusOr<std::unique_ptr<ScratchFolder>> Make() {
    // The ending signals are blocked before the folder exists: one that
    // comes between the two waits for the signal thread (which removes the
    // folder) instead of ending the process with the folder left behind.
    sigset_t waited, old_mask;
    sigemptyset(&waited);
    for (int sig : kEndingSignals) sigaddset(&waited, sig);
    sigaddset(&waited, kStopSignal);
    pthread_sigmask(SIG_BLOCK, &waited, &old_mask);
    std::error_code ec;
    // mkdtemp, not the process id: sandboxed test shards run in PID
    // namespaces of their own and share /tmp, so two can have the same pid.
    std::string path = (fs::temp_directory_path(ec) / "tfrun-test-XXXXXX").string();
    if (mkdtemp(path.data()) == nullptr) {
      const int error = errno;
      pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
      return BadInput(fmt::format("tfrun test: cannot make {}: {}", path, std::strerror(error)));
    }
    return std::unique_ptr<ScratchFolder>(new ScratchFolder(path, waited, old_mask));
  }
  ~ScratchFolder() {
    pthread_kill(signal_thread_.native_handle(), kStopSignal);
    signal_thread_.join();
    std::error_code ec;
    fs::remove_all(path_, ec);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
  }
  const fs::path& path() const { return path_; }
  RunningCases* running() { return &running_; }

 private:
  // Wakes the signal thread when the command ends normally.
  static constexpr int kStopSignal = SIGUSR2;

  // `waited` is blocked already (Make), before the workers start, so they
  // inherit the mask and only the signal thread takes these signals.
  ScratchFolder(fs::path path, sigset_t waited, sigset_t old_mask) : path_(std::move(path)), old_mask_(old_mask) {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old_pipe_);
    signal_thread_ = std::thread([this, waited] {
      int sig = 0;
      while (sigwait(&waited, &sig) != 0) {
      }
      if (sig == kStopSignal) return;
      {
        std::lock_guard<std::mutex> lock(running_.mu);
        running_.interrupted = true;
        for (pid_t pid : running_.pids) kill(pid, SIGKILL);
      }
      std::error_code ec;
      fs::remove_all(path_, ec);
      // End the way the signal asks (a shell sees 130 for SIGINT).
      signal(sig, SIG_DFL);
      sigset_t just_this;
      sigemptyset(&just_this);
      sigaddset(&just_this, sig);
      pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
      raise(sig);
      _exit(128 + sig);
    });
  }

  fs::path path_;
  RunningCases running_;
  sigset_t old_mask_;
  struct sigaction old_pipe_ = {};
  std::thread signal_thread_;
};

}  // namespace

StatusOr<int> RunTestCommand(const TestOptions& options) {
  if (options.paths.empty()) return BadInput("tfrun test: give graph files or folders to test");
  if (options.jobs < 0) return BadInput("tfrun test: -j needs a positive number of jobs");
  // Standard output carries the verdicts: the XML needs a file of its own,
  // checked before any case runs.
  std::optional<OutputTarget> junit;
  if (!options.junit_path.empty()) {
    TFRUN_ASSIGN_OR_RETURN(junit, CheckOutputTarget(options.junit_path, "--junit", false));
  }
  TFRUN_ASSIGN_OR_RETURN(std::vector<TestCase> cases, Discover(options.paths));
  if (cases.empty()) {
    // A renamed folder must not turn a CI job green.
    std::vector<std::string> paths;
    for (const std::string& p : options.paths) paths.push_back(ClipForMessage(p, 1000));
    return Status(ErrorKind::kMismatch, fmt::format("tfrun test: no cases found in {} (a case is NAME.yaml with "
                                                    "NAME.expected beside it)",
                                                    fmt::join(paths, ", ")));
  }
  const std::string tfrun = options.tfrun_path.empty() ? SelfPath() : options.tfrun_path;
  TFRUN_ASSIGN_OR_RETURN(std::unique_ptr<ScratchFolder> scratch, ScratchFolder::Make());

  const std::string this_processor = ProcessorVendor();
  const auto started = Clock::now();
  std::vector<Outcome> outcomes(cases.size());
  std::vector<bool> done(cases.size(), false);
  std::mutex mu;
  std::condition_variable finished;
  std::atomic<size_t> next{0};
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t jobs = std::min<size_t>(options.jobs > 0 ? options.jobs : cores, std::max<size_t>(cases.size(), 1));
  std::vector<std::thread> workers;
  // Joined on every way out of this function, before the scratch folder goes.
  // An early return (standard output closed) ends the running cases too.
  struct JoinAll {
    std::vector<std::thread>* threads;
    RunningCases* running;
    ~JoinAll() {
      {
        std::lock_guard<std::mutex> lock(running->mu);
        running->interrupted = true;  // no new case starts
        for (pid_t pid : running->pids) kill(pid, SIGKILL);
      }
      for (std::thread& w : *threads) w.join();
    }
  } join_all{&workers, scratch->running()};
  for (size_t w = 0; w < jobs; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < cases.size(); i = next++) {
        Outcome o;
        if (!cases[i].problem.empty()) {
          o.details = cases[i].problem + "\n";
        } else if (!cases[i].processor.empty() && cases[i].processor != this_processor) {
          o.skipped = true;
          o.details = fmt::format("expected output for processor maker {}; this one is {}", cases[i].processor,
                                  this_processor.empty() ? "unknown" : this_processor);
        } else {
          o = Run(cases[i], tfrun, scratch->path(), static_cast<int>(i), scratch->running());
        }
        std::lock_guard<std::mutex> lock(mu);
        outcomes[i] = std::move(o);
        done[i] = true;
        finished.notify_all();
      }
    });
  }
  // Verdicts in the cases' order, each as soon as it and those before are
  // in. --update rewrites a failing case's files at once and says so.
  int passed = 0, failed = 0, updated = 0, skipped = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mu);
      finished.wait(lock, [&] { return done[i]; });
    }
    Outcome& o = outcomes[i];
    const char* verdict = o.skipped ? "SKIP" : o.passed ? "PASS" : "FAIL";
    if (o.skipped) {
      ++skipped;
    } else if (!o.passed && options.update && o.updatable) {
      TFRUN_RETURN_IF_ERROR(Update(cases[i], o));
      verdict = "UPDATED";
      o.passed = true;
      ++updated;
    } else {
      (o.passed ? passed : failed) += 1;
    }
    std::string line = fmt::format("{} {}\n", verdict, cases[i].name);
    if (o.skipped) {
      line = fmt::format("SKIP {} ({})\n", cases[i].name, o.details);
    } else if (verdict != std::string("PASS")) {
      line += o.details;
    }
    TFRUN_RETURN_IF_ERROR(WriteStdout(line));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (junit) TFRUN_RETURN_IF_ERROR(WriteOutput(*junit, JUnitXml(cases, outcomes, seconds)));
  std::string summary = fmt::format("{} passed, {} failed", passed, failed);
  if (options.update) summary += fmt::format(", {} updated", updated);
  if (skipped > 0) summary += fmt::format(", {} skipped", skipped);
  TFRUN_RETURN_IF_ERROR(WriteStdout(summary + "\n"));
  return failed;
}

}  // namespace tfrun
