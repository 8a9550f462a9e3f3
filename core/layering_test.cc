// core/ is grouped by concern into folders on floors: a file may include
// its own folder and folders on lower floors, never a folder beside or
// above it. So the placer cannot come to depend on what tfrun can run
// (runtime), the graph on devices, or anything in core/ on kernels/ or cli/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

// Each folder's floor. A new folder gets a row here and a `sources`
// filegroup in BUILD (listed in this test's data).
const std::map<std::string, int>& Floors() {
  static const std::map<std::string, int> floors = {
      {"core/base", 0},           // status, dtypes, tensors, device-type names
      {"core/tables", 1},         // TensorFlow's op and kernel tables (data)
      {"core/printing", 1},       // NumPy's and TensorFlow's number formats
      {"core/graph", 2},          // nodes, device names, op registry, kernel lookup
      {"core/graph_file", 3},     // YAML graph files into a Graph
      {"core/devices", 3},        // visibility, logical GPUs, the device set
      {"core/graph_def", 4},      // TensorFlow's GraphDef files into a Graph
      {"core/placement", 4},      // colocation graph, placer, eager, the log
      {"core/passes", 5},         // TensorFlow's passes before placement
      {"core/runtime", 5},        // kernel registry (supports_op), executor
      {"core/checkpoint", 5},     // tensor bundles (checkpoints, SavedModel variables)
      {"core/session", 6},        // the run's pipeline: load, passes, place, plan, run
      {"kernels", 7},             // the backends
      {"cli", 8},                 // the command line
  };
  return floors;
}

// The folder a repository path belongs to ("core/graph/graph.h" ->
// "core/graph"; "kernels/cpu/x.cc" -> "kernels"), or "" outside them.
std::string FolderOf(const std::string& path) {
  for (const char* top : {"kernels/", "cli/"}) {
    if (path.rfind(top, 0) == 0) return std::string(top, std::string(top).size() - 1);
  }
  if (path.rfind("core/", 0) != 0) return "";
  size_t slash = path.find('/', 5);
  return slash == std::string::npos ? "core" : path.substr(0, slash);
}

struct Include {
  std::string file;    // the including file
  std::string target;  // what it includes, as written
};

// Every include of `file` (its text in `text`) that names a folder.
std::vector<Include> IncludesOf(const std::string& file, std::istream& text) {
  std::vector<Include> includes;
  const std::string prefix = "#include \"";
  for (std::string line; std::getline(text, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    size_t end = line.find('"', prefix.size());
    if (end == std::string::npos) continue;
    std::string target = line.substr(prefix.size(), end - prefix.size());
    if (!FolderOf(target).empty()) includes.push_back({file, target});
  }
  return includes;
}

// The rule's violations, one line each.
std::vector<std::string> Violations(const std::vector<Include>& includes) {
  std::vector<std::string> violations;
  for (const Include& include : includes) {
    std::string from = FolderOf(include.file), to = FolderOf(include.target);
    auto from_floor = Floors().find(from), to_floor = Floors().find(to);
    if (from_floor == Floors().end()) {
      violations.push_back(include.file + ": folder " + from + " has no floor in layering_test.cc");
    } else if (to_floor == Floors().end()) {
      violations.push_back(include.file + " includes " + include.target + ": folder " + to + " has no floor");
    } else if (from != to && to_floor->second >= from_floor->second) {
      violations.push_back(include.file + " includes " + include.target + ": " + from + " (floor " +
                           std::to_string(from_floor->second) + ") may include only lower floors, and " + to +
                           " is on floor " + std::to_string(to_floor->second));
    }
  }
  return violations;
}

TEST(LayeringTest, NothingIncludesAFolderBesideOrAboveIt) {
  std::vector<Include> includes;
  std::set<std::string> folders_seen;
  int files = 0;
  for (const char* top : {"core", "kernels", "cli"}) {
    ASSERT_TRUE(std::filesystem::is_directory(top)) << top << " is not in the test's data";
    for (const auto& entry : std::filesystem::recursive_directory_iterator(top)) {
      std::string path = entry.path().generic_string();
      std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cc" && ext != ".cu" && ext != ".cuh") continue;
      std::ifstream text(entry.path());
      ASSERT_TRUE(text) << path;
      ++files;
      folders_seen.insert(FolderOf(path));
      for (Include& include : IncludesOf(path, text)) includes.push_back(std::move(include));
    }
  }
  // Every folder's sources are in the data: a folder left out would pass unread.
  for (const auto& [folder, floor] : Floors()) {
    EXPECT_TRUE(folders_seen.count(folder)) << folder << ": no sources in the test's data";
  }
  EXPECT_GT(files, 150);
  EXPECT_GT(includes.size(), 300u);
  for (const std::string& violation : Violations(includes)) ADD_FAILURE() << violation;
}

TEST(LayeringTest, ReportsAnIncludeUpwardOrSideways) {
  std::vector<Include> includes = {
      {"core/placement/placer.cc", "core/runtime/kernel_registry.h"},  // up
      {"core/devices/device_set.h", "core/graph_file/loader.h"},       // beside
      {"core/graph/graph.h", "cli/flags.h"},                           // out of core
      {"core/runtime/executor.cc", "core/placement/placer.h"},         // down: fine
      {"core/graph/graph.cc", "core/graph/graph.h"},                   // own folder: fine
      {"core/extra/x.cc", "core/base/status.h"},                       // no floor
  };
  std::vector<std::string> violations = Violations(includes);
  ASSERT_EQ(violations.size(), 4u);
  EXPECT_NE(violations[0].find("core/placement (floor 4) may include only lower floors, and core/runtime is on floor 5"),
            std::string::npos)
      << violations[0];
  EXPECT_NE(violations[1].find("core/graph_file is on floor 3"), std::string::npos) << violations[1];
  EXPECT_NE(violations[2].find("cli is on floor 8"), std::string::npos) << violations[2];
  EXPECT_NE(violations[3].find("folder core/extra has no floor"), std::string::npos) << violations[3];
}

}  // namespace
