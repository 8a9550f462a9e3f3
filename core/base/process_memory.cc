#include "core/base/process_memory.h"

#include <cstdio>
#include <cstring>

namespace tfrun {

int64_t PeakResidentBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  long long kb = 0;
  while (std::fgets(line, sizeof line, status) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) {
      std::sscanf(line + 6, "%lld", &kb);
      break;
    }
  }
  std::fclose(status);
  return kb * 1024;
}

}  // namespace tfrun
