// The --json report: devices, placement, results, timings and the error,
// as one JSON object.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/atomic_file.h"
#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/eager_program.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "core/session/session.h"

namespace tfrun {

// The session's record (what the run made, each part once its stage is
// done) with the process's own: its version, --benchmark's object and the
// outcome.
struct Report : SessionRecord {
  std::string version;         // tfrun's (cli/version.h), with its git commit
  std::string benchmark_json;  // the "benchmark" object, when --benchmark
  Status status;
};

// A JSON string. `bytes_as_latin1`: a string tensor's element, whose bytes
// need not be UTF-8, each byte >= 0x7f becoming \u00XX.
std::string Quote(std::string_view s, bool bytes_as_latin1 = false);

// The report's layout version (docs/json-report.md,
// docs/json-report.schema.json): raised when a field changes meaning.
inline constexpr int kReportSchema = 1;

std::string ReportToJson(const Report& report);

// An error as the report gives it: kind, exit code, message, and the file,
// line, column and node where the message names them.
std::string ErrorJson(const Status& status);

// "FILE:LINE:COLUMN: " at the start of an error message.
struct MessageLocation {
  std::string file, line, column;
};
std::optional<MessageLocation> LocationInMessage(std::string_view message);
// The first "node 'NAME'" (tfrun's), "operation NAME:" or "operation
// 'NAME'" (TensorFlow's) in an error message.
std::optional<std::string_view> NodeInMessage(std::string_view message);

}  // namespace tfrun
