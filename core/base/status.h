// Errors are values: every fallible function returns Status or StatusOr<T>,
// and only cli/main.cc turns them into an exit code.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tfrun {

// What went wrong decides the exit code (graph-format.md, "Exit codes").
enum class ErrorKind {
  kMismatch,    // 1: a golden or expected-value comparison failed
  kBadInput,    // 2: bad command line, graph file, topology or .npy file
  kPlacement,   // 3: TensorFlow's InvalidArgumentError from the placer
  kRuntime,     // 4: ResourceExhaustedError, CUDA or cuBLAS failure
};

int ExitCodeFor(ErrorKind kind);

// Where an error is, as fields (--json reports them without reading them
// back out of the message): the graph file, its 1-based line and column
// (0 where unknown), the node. Empty where the error's maker did not know
// or did not say.
struct ErrorSite {
  std::string file;
  int line = 0;
  int column = 0;
  std::string node;
};

class Status {
 public:
  Status() = default;  // OK
  Status(ErrorKind kind, std::string message)
      : error_(Error{kind, std::move(message), {}}) {}
  Status(ErrorKind kind, std::string message, ErrorSite site)
      : error_(Error{kind, std::move(message), std::move(site)}) {}

  static Status Ok() { return Status(); }

  bool ok() const { return !error_.has_value(); }
  ErrorKind kind() const { return error_->kind; }
  const std::string& message() const { return error_->message; }
  // Only for an error (!ok()).
  const ErrorSite& site() const { return error_->site; }

 private:
  struct Error {
    ErrorKind kind;
    std::string message;
    ErrorSite site;
  };
  std::optional<Error> error_;
};

inline Status BadInput(std::string message) {
  return Status(ErrorKind::kBadInput, std::move(message));
}
inline Status PlacementError(std::string message) {
  return Status(ErrorKind::kPlacement, std::move(message));
}
inline Status RuntimeError(std::string message) {
  return Status(ErrorKind::kRuntime, std::move(message));
}

// User text (a name, a path, a value) as an error message quotes it: whole
// up to `max_chars` characters, else its start, "..." and its length, so
// that a 30,000-character name still gives a one-line message; control
// characters escaped as Python writes them (\n, \x01).
std::string ClipForMessage(std::string_view text, size_t max_chars = 100);

// A message for a terminal: its lines kept, every other control character
// and every byte that is not UTF-8 escaped as ClipForMessage escapes them,
// so no user text (a path, a name) writes an escape sequence.
std::string EscapeForTerminal(std::string_view message);

// The length of the well-formed UTF-8 character at text[i] (1 to 4), or 0
// where the bytes there are not one.
size_t Utf8Length(std::string_view text, size_t i);

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT
  StatusOr(Status status) : value_(std::move(status)) {}   // NOLINT

  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(value_);
  }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace tfrun

// Propagates a non-OK Status out of the calling function.
#define TFRUN_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::tfrun::Status _tfrun_status = (expr); \
    if (!_tfrun_status.ok()) return _tfrun_status; \
  } while (0)

#define TFRUN_CONCAT_INNER(a, b) a##b
#define TFRUN_CONCAT(a, b) TFRUN_CONCAT_INNER(a, b)
#define TFRUN_ASSIGN_OR_RETURN(lhs, expr)                                 \
  auto TFRUN_CONCAT(_tfrun_or_, __LINE__) = (expr);                       \
  if (!TFRUN_CONCAT(_tfrun_or_, __LINE__).ok())                           \
    return TFRUN_CONCAT(_tfrun_or_, __LINE__).status();                   \
  lhs = std::move(TFRUN_CONCAT(_tfrun_or_, __LINE__)).value()
