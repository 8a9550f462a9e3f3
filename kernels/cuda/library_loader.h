// NVIDIA's libraries (cuBLAS, cuDNN) opened with dlopen on first use, so a
// CPU-only run never loads them and the binary runs where they are
// missing: the paths to try, and one loader that binds a table of entry
// points from the first library that has them all.
#pragma once

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "core/base/status.h"

namespace tfrun {
namespace cuda {

// $`env` (a path) when set, then `soname` through the loader's path, then
// the toolkit's /usr/local/cuda/lib64/`soname`.
inline std::vector<std::string> LibrarySearchList(const char* env, const char* soname) {
  std::vector<std::string> search;
  if (const char* override_path = std::getenv(env)) search.emplace_back(override_path);
  search.emplace_back(soname);
  search.emplace_back(std::string("/usr/local/cuda/lib64/") + soname);
  return search;
}

// Opens each path of `search` in turn; `bind_all(api, bind)` calls
// bind(api.member, "symbol") for every entry point. The first library that
// has them all is kept open (api.path says which); the error names each
// path tried and why it failed, and the variable that overrides them.
template <typename Api, typename BindAll>
StatusOr<Api> LoadLibrary(const std::vector<std::string>& search, const char* what, const char* env,
                          BindAll&& bind_all) {
  std::vector<std::string> tried;
  for (const std::string& path : search) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      tried.push_back(fmt::format("{} ({})", path, why ? why : "cannot open"));
      continue;
    }
    Api api;
    api.path = path;
    bool complete = true;
    bind_all(api, [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (fn == nullptr) {
        complete = false;
        tried.push_back(fmt::format("{} (no symbol {})", path, symbol));
      }
    });
    if (complete) return api;
    dlclose(lib);
  }
  return RuntimeError(fmt::format("cannot load {}; tried {} (set {} to the library's path)", what,
                                  fmt::join(tried, ", "), env));
}

}  // namespace cuda
}  // namespace tfrun
