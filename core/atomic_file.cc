#include "core/atomic_file.h"

#include <cerrno>
#include <cstring>

namespace tfrun {

Status WriteFileAtomically(const std::string& path, const std::function<bool(FILE*)>& write) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return RuntimeError("cannot write " + path + ": " + std::strerror(errno));
  bool ok = write(f);
  ok = std::fflush(f) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return RuntimeError("cannot write " + path + ": " + why);
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return WriteFileAtomically(path, [&](FILE* f) { return std::fwrite(text.data(), 1, text.size(), f) == text.size(); });
}

}  // namespace tfrun
