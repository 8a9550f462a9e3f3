// Writes a file through a temporary next to it and a rename, so a failure
// leaves no partial file and an existing file stays as it was.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "core/status.h"

namespace tfrun {

// `write` fills the open temporary file and returns false on failure.
Status WriteFileAtomically(const std::string& path, const std::function<bool(FILE*)>& write);

// The same for text already in memory.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace tfrun
