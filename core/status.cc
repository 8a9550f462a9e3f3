#include "core/status.h"

namespace tfrun {

int ExitCodeFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kMismatch:
      return 1;
    case ErrorKind::kBadInput:
      return 2;
    case ErrorKind::kPlacement:
      return 3;
    case ErrorKind::kRuntime:
      return 4;
  }
  return 4;
}

}  // namespace tfrun
