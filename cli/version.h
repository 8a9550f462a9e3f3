// What `tfrun --version` and the JSON report say about this build.
#pragma once

#include <string>

namespace tfrun {

// The release: issues 1-15 of the project are in it.
inline constexpr const char* kTfrunVersion = "0.15.0";

// The git commit the binary was built from ("unknown" outside git; "-dirty"
// with uncommitted changes).
const char* GitCommit();

// "0.15.0 (git 1a2b3c4d5e6f)": the version and commit, as reports name them.
std::string VersionField();

// `tfrun --version`: version, commit, build mode, the CUDA runtime and
// driver versions, and whether cuBLAS loads (and from where).
std::string VersionText();

}  // namespace tfrun
