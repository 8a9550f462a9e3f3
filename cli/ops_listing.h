// `tfrun ops`: every op TensorFlow defines, with the kernels it registers
// for CPU, GPU, DEFAULT, XLA_CPU and XLA_GPU (core/tables, TensorFlow's
// own table) and what tfrun itself runs of it (the backends' bindings),
// read from the tables and the code so the list cannot drift.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace tfrun {

// Text, one block per op; `ops` picks some by name (all when empty).
StatusOr<std::string> OpsListing(const std::vector<std::string>& ops);
// {"tensorflow": "2.21.0", "ops": [{"op", "kernels": [...], "runs": {...}}]}
StatusOr<std::string> OpsJson(const std::vector<std::string>& ops);

}  // namespace tfrun
