// What README and the user's guide show is what tfrun does: every
// ```console block's `$ COMMAND` is run (tfrun as the built binary) and its
// output compared with the lines under it; the graph file README shows is
// the file in graphs/; every row of README's tutorial table is run and its
// standard output compared with the golden file the row names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cli/run_command.h"

namespace tfrun {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

std::string Doc(const std::string& path) {
  std::string text;
  EXPECT_TRUE(ReadWholeFile(path, &text)) << path;
  return text;
}

// "tfrun ARGS" (after VAR=value words) as the test runs it: the built binary.
std::string AsTestCommand(const std::string& command) {
  const size_t at = command.find("tfrun ");
  if (at == std::string::npos) return command;
  std::string run = command.substr(0, at) + "cli/tfrun " + command.substr(at + 6);
  if (run.rfind("mpirun ", 0) == 0) {
    // As cluster_test.cc runs it: as root allowed, quiet, bounded, and no
    // leak check of what OpenMPI's MPI_Init never frees.
    run = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" "
          "timeout -k 5 60 mpirun -q --oversubscribe " +
          run.substr(7);
  }
  return "env -u CUDA_VISIBLE_DEVICES -u TF_FORCE_GPU_ALLOW_GROWTH " + run;
}

struct ConsoleExample {
  std::string command;
  std::string output;
};

// The `$ ` commands of a document's ```console blocks (indented or not)
// with the lines under each.
std::vector<ConsoleExample> ConsoleExamples(const std::string& text) {
  std::vector<ConsoleExample> examples;
  bool in_block = false;
  size_t indent = 0;
  for (const std::string& line : Lines(text)) {
    const size_t first = line.find_first_not_of(' ');
    const std::string body = first == std::string::npos ? "" : line.substr(std::min(first, line.size()));
    if (!in_block) {
      if (body == "```console") {
        in_block = true;
        indent = first;
      }
      continue;
    }
    if (body == "```") {
      in_block = false;
      continue;
    }
    const std::string content = line.size() >= indent ? line.substr(indent) : "";
    if (content.rfind("$ ", 0) == 0) {
      examples.push_back({content.substr(2), ""});
    } else if (!examples.empty()) {
      examples.back().output += content + "\n";
    }
  }
  return examples;
}

void CheckConsoleExamples(const std::string& doc) {
  const std::vector<ConsoleExample> examples = ConsoleExamples(Doc(doc));
  ASSERT_FALSE(examples.empty()) << doc << " shows no command";
  for (const ConsoleExample& e : examples) {
    const CommandResult r = RunCommand("(" + AsTestCommand(e.command) + ") 2>&1");
    EXPECT_EQ(r.exit_code, 0) << doc << ": $ " << e.command;
    EXPECT_EQ(r.out, e.output) << doc << ": $ " << e.command;
  }
}

TEST(ReadmeTest, ConsoleExamplesPrintWhatTheyShow) { CheckConsoleExamples("README.md"); }

TEST(ReadmeTest, GuideConsoleExamplesPrintWhatTheyShow) { CheckConsoleExamples("docs/guide.md"); }

// The Quick start's graph file is graphs/matmul.yaml, whole.
TEST(ReadmeTest, QuickStartShowsTheGraphFileItRuns) {
  const std::string readme = Doc("README.md");
  const size_t start = readme.find("```yaml\n");
  ASSERT_NE(start, std::string::npos);
  const size_t end = readme.find("```\n", start + 8);
  ASSERT_NE(end, std::string::npos);
  EXPECT_NE(readme.rfind("(`graphs/matmul.yaml`)", start), std::string::npos);
  EXPECT_EQ(readme.substr(start + 8, end - start - 8), Doc("graphs/matmul.yaml"));
  EXPECT_LT(Lines(readme.substr(0, readme.find("## On a fresh machine"))).size(), 60u)
      << "the Quick start's command and output fit a first screen";
}

// Each row of the tutorial table: | scenario | `COMMAND` | `GOLDEN` |.
TEST(ReadmeTest, TutorialTableCommandsPrintTheirGoldens) {
  int rows = 0;
  for (const std::string& line : Lines(Doc("README.md"))) {
    if (line.rfind("| ", 0) != 0) continue;
    const size_t c1 = line.find("| `");
    const size_t c1_end = c1 == std::string::npos ? c1 : line.find("` |", c1);
    if (c1_end == std::string::npos) continue;
    const std::string command = line.substr(c1 + 3, c1_end - c1 - 3);
    const size_t c2 = line.find("`", c1_end + 3);
    const size_t c2_end = c2 == std::string::npos ? c2 : line.find("`", c2 + 1);
    ASSERT_NE(c2_end, std::string::npos) << line;
    const std::string golden_path = line.substr(c2 + 1, c2_end - c2 - 1);
    ++rows;
    if (command.rfind("mpirun ", 0) == 0 && std::system("command -v mpirun >/dev/null 2>&1") != 0) {
      if (std::getenv("TFRUN_REQUIRE_SETUP") != nullptr) ADD_FAILURE() << "TFRUN_REQUIRE_SETUP=1 but no mpirun";
      continue;
    }
    // The expected standard output: the golden less its `# args:` and
    // `# exit:` lines.
    std::string golden;
    for (const std::string& g : Lines(Doc(golden_path))) {
      if (g.rfind("# args:", 0) != 0 && g.rfind("# exit:", 0) != 0) golden += g + "\n";
    }
    const CommandResult r = RunCommand(AsTestCommand(command));
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    EXPECT_EQ(r.out, golden) << command << " against " << golden_path;
  }
  EXPECT_EQ(rows, 9) << "the nine tutorial scenarios";
}

// A newcomer can resolve every word: no issue numbers, no in-house names.
TEST(ReadmeTest, SpeaksToANewcomer) {
  for (const char* doc : {"README.md", "docs/guide.md"}) {
    const std::string text = Doc(doc);
    for (const char* word : {"issue 1", "issue 2", "issue 3", "the contract", "Issue "}) {
      EXPECT_EQ(text.find(word), std::string::npos) << doc << " says '" << word << "'";
    }
  }
  const std::string readme = Doc("README.md");
  EXPECT_NE(readme.find("## What tfrun does not do (yet)"), std::string::npos);
  EXPECT_LT(readme.find("## Quick start"), readme.find("## On a fresh machine"));
}

}  // namespace
}  // namespace tfrun
