#include "cli/last_resort.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "core/base/atomic_file.h"
#include "core/base/status.h"

namespace tfrun {
namespace {

// `what` may hold anything: its control characters are escaped and its
// length clipped, so the message stays one line.
int OneLine(const char* kind, const char* what) {
  const std::string line = fmt::format("tfrun: error: {}: {} (an error tfrun did not anticipate; please report it)\n",
                                       kind, ClipForMessage(what, 300));
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  return 4;
}

}  // namespace

int RunCatchingEverything(const std::function<int()>& run) {
  try {
    return run();
  } catch (const std::bad_alloc& e) {
    return OneLine("out of memory", e.what());
  } catch (const std::exception& e) {
    return OneLine("uncaught exception", e.what());
  } catch (...) {
    return OneLine("uncaught exception", "not a std::exception");
  }
}

void TerminateWithOneLine() {
  const char* kind = "uncaught exception";
  std::string what = "std::terminate without an exception";
  if (std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::bad_alloc& e) {
      kind = "out of memory";
      what = e.what();
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "not a std::exception";
    }
  }
  RemoveTemporaryFiles();
  OneLine(kind, what.c_str());
  std::_Exit(4);
}

}  // namespace tfrun
