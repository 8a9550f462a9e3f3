#include "core/graph_file/yaml_document.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "core/graph_file/yaml_pieces.h"

namespace tfrun {
namespace {

// Nodes a comparison visits at most: aliases can make a tree exponential
// (alias bombs) or cyclic; a path of over 400 characters is not followed.
constexpr int kVisitBudget = 200000;

// Compares with what YAML::Load builds.
void ExpectSameAsYamlCpp(const YAML::Node& expected, const YamlNode& actual, const std::string& where,
                         int* budget) {
  if (--*budget < 0 || where.size() > 400) return;
  ASSERT_TRUE(actual.defined()) << where;
  ASSERT_EQ(expected.IsNull(), actual.IsNull()) << where;
  ASSERT_EQ(expected.IsScalar(), actual.IsScalar()) << where;
  ASSERT_EQ(expected.IsSequence(), actual.IsSequence()) << where;
  ASSERT_EQ(expected.IsMap(), actual.IsMap()) << where;
  const YAML::Mark mark = expected.Mark();
  const SourceLocation loc = actual.location();
  EXPECT_EQ(mark.line < 0 ? 0 : mark.line + 1, loc.line) << where;
  EXPECT_EQ(mark.line < 0 ? 0 : mark.column + 1, loc.column) << where;
  if (expected.IsScalar()) {
    EXPECT_EQ(expected.Scalar(), actual.Scalar()) << where;
    EXPECT_EQ(expected.Tag() == "!", actual.IsQuoted()) << where;
  }
  ASSERT_EQ(expected.size(), actual.size()) << where;
  if (expected.IsSequence()) {
    size_t i = 0;
    for (const YamlNode& child : actual.Elements()) {
      ExpectSameAsYamlCpp(expected[i], child, where + "/" + std::to_string(i), budget);
      ++i;
    }
  }
  if (expected.IsMap()) {
    auto it = expected.begin();
    for (const YamlNode::Pair& pair : actual.Pairs()) {
      ExpectSameAsYamlCpp(it->first, pair.key, where + "/key", budget);
      ExpectSameAsYamlCpp(it->second, pair.value, where + "/" + (pair.key.IsScalar() ? pair.key.ScalarString() : "?"),
                          budget);
      // operator[] finds the first pair with that key, as yaml-cpp's does.
      if (pair.key.IsScalar()) {
        const YAML::Node found = expected[pair.key.ScalarString()];
        const YamlNode ours = actual[pair.key.Scalar()];
        ASSERT_TRUE(ours.defined());
        EXPECT_EQ(found.Mark().line + 1, ours.location().line) << where;
        EXPECT_EQ(found.Mark().column + 1, ours.location().column) << where;
      }
      ++it;
    }
  }
}

// The message YAML::Load's exceptions give, as the loader words them.
std::string YamlCppError(const std::string& text) {
  try {
    YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    return "g.yaml:" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
           ": YAML nested deeper than " + std::to_string(e.depth()) + " levels";
  } catch (const YAML::ParserException& e) {
    return "g.yaml:" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
           ": YAML syntax error: " + e.msg;
  }
  return "";
}

void ExpectSameAsYamlCppForText(const std::string& text, const std::string& name) {
  const std::string error = YamlCppError(text);
  StatusOr<YamlDocument> doc = ParseYaml(text, "g.yaml");
  if (!error.empty()) {
    ASSERT_FALSE(doc.ok()) << name;
    EXPECT_EQ(doc.status().message(), error) << name;
    return;
  }
  ASSERT_TRUE(doc.ok()) << name << ": " << doc.status().message();
  int budget = kVisitBudget;
  ExpectSameAsYamlCpp(YAML::Load(text), doc->root(), name, &budget);
}

// The files of `dir` (only *.yaml ones when `yaml_only`).
std::vector<std::string> FilesIn(const std::string& dir, bool yaml_only = true) {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string f = e->d_name;
      const bool yaml = f.size() > 5 && f.substr(f.size() - 5) == ".yaml";
      if (f[0] != '.' && (yaml || !yaml_only)) files.push_back(dir + "/" + f);
    }
    closedir(d);
  }
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(YamlDocumentTest, EveryRepositoryYamlFileReadsAsYamlCppReadsIt) {
  int files = 0, read_by_libyaml = 0;
  for (const char* dir : {"graphs", "testdata/bad", "testdata/graphs", "testdata/topologies"}) {
    for (const std::string& path : FilesIn(dir)) {
      const std::string text = ReadFile(path);
      if (text.find('\0') != std::string::npos) continue;  // refused before parsing
      ExpectSameAsYamlCppForText(text, path);
      ++files;
      StatusOr<YamlDocument> doc = ParseYaml(text, "g.yaml");
      read_by_libyaml += doc.ok() && doc->pieces_read_by_libyaml() == doc->pieces();
    }
  }
  EXPECT_GT(files, 120);
  // Most graph files are plain enough for libyaml (the fast reader).
  EXPECT_GT(read_by_libyaml, files / 2) << files;
}

// libyaml reads first and leaves to yaml-cpp whatever it might read
// otherwise (yaml_document.cc's LibyamlPieceBuilder): the document is
// yaml-cpp's either way. The texts left to yaml-cpp include the fuzzer's
// findings: `?a` in a flow map (libyaml: a key; yaml-cpp: an error),
// `&shape:` (the anchor's name ends at `:` for libyaml only), a lone
// carriage return in a comment (a line break for libyaml only), and an
// empty value (marked elsewhere by libyaml).
TEST(YamlDocumentTest, LibyamlReadsPlainTextsAndLeavesTheRestToYamlCpp) {
  for (const char* text : {
           "nodes:\n  - {name: a, op: Const, value: [1.5, -2], device: '/gpu:0'}\n  - {op: AddN, inputs: [a, a]}\n",
           "nodes:\n- name: \"q\\\"x\"\n  op: NoOp  # comment\nfetch: [a]\n",
           "a: [1, 2,\n  3]\nb: 'it''s'\nc: ~\nd: null\n",
           "--- {a: 1}\n--- [2]\n",
       }) {
    ExpectSameAsYamlCppForText(text, text);
    StatusOr<YamlDocument> doc = ParseYaml(text, "g.yaml");
    ASSERT_TRUE(doc.ok()) << text;
    EXPECT_EQ(doc->pieces_read_by_libyaml(), 1) << text;
  }
  for (const char* text : {
           "nodes: [{op: Const, ?alue: 0}]\n",
           "nodes:\n  - {name: x, op: Const,&shape: [2], value: 1}\n",
           "# The \r\r\rata\nnodes:\n  - {op: NoOp}\n",
           "config:\n",
           "config:",
           "a: 1\nb\n",
           "a: !!str 5\n",
           "a: |\n  text\n",
           "a: \"caf\xc3\xa9\"\nb: 1\n",
           "a:\tb\n",
           "%YAML 1.2\n---\na: 1\n",
           "a: 1\n...\nb: [\n",
       }) {
    ExpectSameAsYamlCppForText(text, text);
    StatusOr<YamlDocument> doc = ParseYaml(text, "g.yaml");
    if (doc.ok()) EXPECT_EQ(doc->pieces_read_by_libyaml(), 0) << text;
  }
  // The same document whichever reader is asked for.
  std::string text = "nodes:\n";
  for (int i = 0; i < 100; ++i) text += "  - {name: n" + std::to_string(i) + ", op: Const, value: [" + std::to_string(i) + "]}\n";
  StatusOr<YamlDocument> fast = ParseYaml(text, "g.yaml", YamlParseOptions{1, 1 << 30});
  StatusOr<YamlDocument> yaml_cpp = ParseYaml(text, "g.yaml", YamlParseOptions{1, 1 << 30, YamlReader::kYamlCppOnly});
  ASSERT_TRUE(fast.ok() && yaml_cpp.ok());
  EXPECT_EQ(fast->TreeString(), yaml_cpp->TreeString());
  EXPECT_EQ(fast->pieces_read_by_libyaml(), 1);
  EXPECT_EQ(yaml_cpp->pieces_read_by_libyaml(), 0);
}

// Every file cut at every core count and the smallest piece size gives
// the tree (or the error) of one parse; TFRUN_YAML_CORPUS names one more
// folder to read (a fuzzer's corpus, say).
TEST(YamlDocumentTest, EveryRepositoryYamlFileReadsTheSameInPieces) {
  std::vector<std::string> dirs = {"graphs", "testdata/bad", "testdata/graphs"};
  if (const char* extra = std::getenv("TFRUN_YAML_CORPUS")) dirs.push_back(extra);
  int cut = 0;
  for (const std::string& dir : dirs) {
    const bool corpus = std::getenv("TFRUN_YAML_CORPUS") != nullptr && dir == dirs.back();
    for (const std::string& path : FilesIn(dir, !corpus)) {
      const std::string text = ReadFile(path);
      StatusOr<YamlDocument> whole = ParseYaml(text, "g.yaml", YamlParseOptions{1, 1 << 30});
      for (int threads : {2, 3, 8}) {
        StatusOr<YamlDocument> pieces = ParseYaml(text, "g.yaml", YamlParseOptions{threads, 1});
        ASSERT_EQ(whole.ok(), pieces.ok()) << path;
        if (!whole.ok()) {
          EXPECT_EQ(whole.status().message(), pieces.status().message()) << path;
          continue;
        }
        cut += pieces->pieces() > 1;
        EXPECT_EQ(whole->TreeString(), pieces->TreeString()) << path;
      }
    }
  }
  EXPECT_GT(cut, 30);  // most example graphs have the shape that is cut
}

TEST(YamlDocumentTest, TagsAliasesNullsAndDuplicateKeys) {
  for (const char* text : {
           "a: 1\nb: '1'\nc: \"x\"\nd: !!str 5\ne: ! 7\nf: ~\ng:\nh: null\n",
           "x: &v [1, 2, {k: *v}]\ny: *v\n*v : 3\n",
           "a: 1\na: 2\n? [k]\n: v\n",
           "- &s [*s]\n",  // an alias of its own ancestor: a cycle
           "{a: , : b}\n",
           "# only a comment\n",
           "",
           "---\n...\n",
           "k: |\n  line one\n  line two\n",
           "nodes:\n  - {op: Const, value: [1, 2]}\n  -\n  - just text\n",
           "a: [1, 2\n",
           "a: 'unterminated\n",
           "a: *nowhere\n",
       }) {
    ExpectSameAsYamlCppForText(text, std::string("text: ") + text);
  }
}

TEST(YamlDocumentTest, DeepNestingFailsAsYamlCppDoes) {
  ExpectSameAsYamlCppForText(std::string(600, '[') + std::string(600, ']'), "deep");
}

TEST(YamlDocumentTest, AbsentKeysAndWrongKindsAreUndefined) {
  StatusOr<YamlDocument> doc = ParseYaml("a: [1]\nb: x\n", "g.yaml");
  ASSERT_TRUE(doc.ok());
  const YamlNode root = doc->root();
  EXPECT_FALSE(root["missing"]);
  EXPECT_FALSE(root["a"]["x"]);  // a sequence has no keys
  EXPECT_FALSE(root["b"]["x"]);
  EXPECT_EQ(root["a"].size(), 1u);
  EXPECT_EQ(root.size(), 2u);
  StatusOr<YamlDocument> empty_doc = ParseYaml("", "g.yaml");
  const YamlNode empty = empty_doc->root();
  EXPECT_TRUE(empty.IsNull());
  EXPECT_EQ(empty.location().line, 0);
}

// A generated graph file with what could trip a cut: comments, blank lines,
// block scalars, multi-line flow and quoted scalars, anchors used in the
// same entry, empty entries and values, and keys after the list.
std::string Entries(int entries, int indent) {
  const std::string pad(indent, ' ');
  std::string text;
  for (int i = 0; i < entries; ++i) {
    switch (i % 10) {
      case 0: text += pad + "- {name: n" + std::to_string(i) + ", op: Const, value: [1, 2]}\n"; break;
      case 1: text += pad + "- name: n" + std::to_string(i) + "\n" + pad + "  op: AddN\n" + pad + "  inputs:\n" + pad +
                      "  - a\n" + pad + "  - b\n"; break;
      case 2: text += "# a comment at column 0\n\n" + pad + "-   {name: 'q" + std::to_string(i) + "', op: Const,\n" +
                      pad + "     value: &v [3,\n" + pad + "  4], shape: *v}\n"; break;
      case 3: text += pad + "- doc: |\n" + pad + "    - not an entry\n" + pad + "  op: NoOp\n"; break;
      case 4: text += pad + "-\n" + pad + "  name: \"two\n" + pad + "   lines\"\n"; break;
      case 5: text += pad + "- - nested\n" + pad + "  - list\n"; break;
      // Empty values take their position from the next token, which a cut
      // separates from them.
      case 6: text += pad + "- \n"; break;
      case 7: text += pad + "-\n"; break;
      case 8: text += pad + "- name: e" + std::to_string(i) + "\n" + pad + "  empty:\n"; break;
      default: text += pad + "- plain\n";
    }
  }
  return text;
}

std::string GeneratedFile(int entries, int indent, bool tail) {
  return "version: 1\nconfig: {allow_soft_placement: true}\nnodes:  # the list\n" + Entries(entries, indent) +
         (tail ? "fetch: [n0]\nextra:\n  - 1\n" : "");
}

TEST(YamlDocumentTest, PiecesGiveWhatOneParseGives) {
  for (int indent : {0, 2, 4}) {
    for (bool tail : {false, true}) {
      const std::string text = GeneratedFile(200, indent, tail);
      std::optional<YamlCuts> cuts = FindYamlCuts(text, 4, 64);
      ASSERT_TRUE(cuts.has_value()) << indent;
      EXPECT_EQ(cuts->cuts.size(), 3u);
      EXPECT_EQ(cuts->indent, indent);
      EXPECT_EQ(cuts->list_end == text.size(), !tail);
      StatusOr<YamlDocument> whole = ParseYaml(text, "g.yaml", YamlParseOptions{1, 1 << 30});
      ASSERT_TRUE(whole.ok()) << whole.status().message();
      for (int threads : {2, 3, 4, 7}) {
        StatusOr<YamlDocument> pieces = ParseYaml(text, "g.yaml", YamlParseOptions{threads, 64});
        ASSERT_TRUE(pieces.ok()) << pieces.status().message();
        EXPECT_EQ(pieces->pieces(), threads) << "fell back to one piece";
        EXPECT_EQ(whole->TreeString(), pieces->TreeString()) << "indent " + std::to_string(indent);
        int budget = kVisitBudget;
        ExpectSameAsYamlCpp(YAML::Load(text), pieces->root(), "yaml-cpp", &budget);
      }
    }
  }
}

// A fuzzer finding: yaml-cpp lets an alias inside an anchored node name
// that node, so comparing the entries around a cut followed the cycle
// until the stack ran out. It now gives up (and parses whole) instead.
TEST(YamlDocumentTest, AnAliasCycleAtACutEndsInOneParse) {
  const std::string text =
      "nodes:\n  - &s0 {nodes: []}\n  - &s0 {nodes: [*s0, *s0]}\n  - {op: NoOp}\n  - {op: NoOp}\n";
  StatusOr<YamlDocument> whole = ParseYaml(text, "g.yaml", YamlParseOptions{1, 1 << 30});
  StatusOr<YamlDocument> pieces = ParseYaml(text, "g.yaml", YamlParseOptions{3, 1});
  ASSERT_EQ(whole.ok(), pieces.ok());
  if (whole.ok()) {
    EXPECT_EQ(whole->TreeString(), pieces->TreeString());
  }
}

TEST(YamlDocumentTest, EveryCutOfABadFileReportsTheWholeFilesError) {
  // Errors after, before and across cuts: an alias to an anchor in another
  // piece, a quoted scalar and a flow list spanning a cut, a syntax error
  // late in the file, and nesting near yaml-cpp's limit.
  const std::string good = GeneratedFile(40, 2, true);
  std::string plain_entries;  // no quote to close an open one
  for (int i = 0; i < 40; ++i) plain_entries += "  - {op: Const, value: " + std::to_string(i) + "}\n";
  const std::vector<std::string> bad = {
      good + "broken: [\n",
      "nodes:\n  - &a {x: 1}\n" + Entries(40, 2) + "  - *a\n  - *b\n",
      "nodes:\n  - 'open\n" + Entries(40, 2) + "  - closed'\n",
      // yaml-cpp ends a quote still open at the end of the text without an
      // error, so a piece that stops inside one parses (found by the fuzzer).
      "nodes:\n  - 'open\n" + plain_entries,
      "nodes:\n  - {a: \"open\\\"\n" + plain_entries,
      "nodes:\n  - 'it''s\n" + plain_entries,
      "nodes:\n  - [open,\n" + Entries(40, 2) + "  - closed]\n",
      "nodes:\n" + Entries(40, 2) + "  - " + std::string(497, '[') + std::string(497, ']') + "\n",
      // A would-be key that yaml-cpp leaves pending at the end of a line and
      // settles by the next entry's first token: null before "- x", an
      // error before "- {" (found by the fuzzer).
      "nodes:\n" + plain_entries + "  - device: /gpu:3\n    dangling:key}\n  - {name: sum}\n" + plain_entries,
      // After the list, lines that alone would be the root map's but after
      // it are not (found by the fuzzer): an anchored or tagged key, a flow map.
      "nodes:\n" + Entries(40, 2) + "&a- {name: x, op: Const}\n",
      "nodes:\n" + Entries(40, 2) + "{fetch: [x]}\n",
      "nodes:\n" + Entries(40, 2) + "!!map fetch: [x]\n",
      "nodes:\n" + Entries(40, 2) + "&k fetch: [x]\n",
      "nodes:\n" + Entries(40, 2) + "  - " + std::string(499, '[') + std::string(499, ']') + "\n",
  };
  for (const std::string& text : bad) {
    StatusOr<YamlDocument> whole = ParseYaml(text, "g.yaml", YamlParseOptions{1, 1 << 30});
    for (int threads : {2, 5, 9}) {
      StatusOr<YamlDocument> pieces = ParseYaml(text, "g.yaml", YamlParseOptions{threads, 32});
      ASSERT_EQ(whole.ok(), pieces.ok()) << text;
      if (!whole.ok()) {
        EXPECT_EQ(whole.status().message(), pieces.status().message());
        EXPECT_EQ(whole.status().message(), YamlCppError(text));
      } else {
        EXPECT_EQ(whole->TreeString(), pieces->TreeString()) << "bad";
      }
    }
  }
}

TEST(YamlCutsTest, OnlyBlockListsUnderNodesAreCut) {
  const std::string entries = [] {
    std::string s;
    for (int i = 0; i < 100; ++i) s += "  - {op: Const, value: 1}\n";
    return s;
  }();
  EXPECT_TRUE(FindYamlCuts("nodes:\n" + entries, 2, 64).has_value());
  EXPECT_FALSE(FindYamlCuts("nodes:\n" + entries, 1, 64).has_value());       // one core
  EXPECT_FALSE(FindYamlCuts("nodes:\n" + entries, 2, 1 << 20).has_value());  // too small
  EXPECT_FALSE(FindYamlCuts("nodes: [\n" + entries + "]\n", 2, 64).has_value());
  EXPECT_FALSE(FindYamlCuts("top:\n  nodes:\n" + entries, 2, 64).has_value());
  EXPECT_FALSE(FindYamlCuts("%YAML 1.2\n---\nnodes:\n" + entries, 2, 64).has_value());
  EXPECT_FALSE(FindYamlCuts("nodes:\n" + entries + "---\n", 2, 64).has_value());
  std::optional<YamlCuts> cuts = FindYamlCuts("version: 1\nnodes:\n" + entries + "fetch: [x]\n", 3, 64);
  ASSERT_TRUE(cuts.has_value());
  EXPECT_EQ(cuts->first_entry, 18u);
  EXPECT_EQ(cuts->list_end, 18u + entries.size());
  EXPECT_EQ(cuts->cuts.size(), 2u);
  for (const YamlCut& cut : cuts->cuts) {
    EXPECT_EQ((cut.at - 18) % 26, 0u);
    EXPECT_EQ(cut.seam_begin, cut.at - 26);  // the entry before
    EXPECT_EQ(cut.seam_end, cut.at + 26);    // the entry after
  }
  // No cut next to an entry longer than a seam may be.
  const std::string long_entry = "  - {op: Const, value: [" + std::string(2 * kMaxSeamEntryBytes, '1') + "]}\n";
  std::optional<YamlCuts> around = FindYamlCuts("nodes:\n" + entries + long_entry + entries, 2, 64);
  ASSERT_TRUE(around.has_value());
  for (const YamlCut& cut : around->cuts) {
    EXPECT_LE(cut.at - cut.seam_begin, kMaxSeamEntryBytes);
    EXPECT_LE(cut.seam_end - cut.at, kMaxSeamEntryBytes);
  }
}

}  // namespace
}  // namespace tfrun
