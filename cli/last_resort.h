// main's last line of defence. Every error is meant to travel up as a
// Status; an exception that nothing turned into one (tfrun's bug, not the
// user's) still ends the process with one honest line on standard error
// and exit 4, after unwinding has removed any temporary file, never with a
// core dump and an abort message.
#pragma once

#include <functional>

namespace tfrun {

// Runs `run` and returns its exit code; an exception it throws is the
// line "tfrun: error: <kind>: <what> (...)" and 4.
int RunCatchingEverything(const std::function<int()>& run);

// For std::set_terminate: an exception that leaves a thread or a noexcept
// function. Removes the temporaries (atomic_file.h), prints the same line
// and exits 4 at once.
[[noreturn]] void TerminateWithOneLine();

}  // namespace tfrun
