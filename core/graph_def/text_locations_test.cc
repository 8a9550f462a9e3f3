// The scan's node locations against protobuf's own ParseInfoTree, which
// they replace: on every text GraphDef of graphs/tf and on text shaped to
// mislead a scan (comments, strings with braces and quotes, tabs, lists of
// messages, angle brackets, extension names, nested files).
#include "core/graph_def/text_locations.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/graph_def/tf_graph.pb.h"

namespace tfrun {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::Message;
using google::protobuf::TextFormat;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// What protobuf's tree says, per node of `path`: its name field's start,
// else the node field's.
std::vector<SourceLocation> TreeLocations(const std::string& text, Message* message,
                                          const std::vector<TextPathStep>& path) {
  TextFormat::ParseInfoTree tree;
  TextFormat::Parser parser;
  parser.AllowUnknownField(true);
  parser.WriteLocationsTo(&tree);
  EXPECT_TRUE(parser.ParseFromString(text, message)) << text;
  const TextFormat::ParseInfoTree* at = &tree;
  const Descriptor* type = message->GetDescriptor();
  for (size_t i = 0; i + 1 < path.size() && at != nullptr; ++i) {
    const auto* field = type->FindFieldByName(path[i].field);
    at = at->GetTreeForNested(field, field->is_repeated() ? path[i].index : -1);
    type = field->message_type();
  }
  std::vector<SourceLocation> out;
  if (at == nullptr) return out;
  const auto* node_field = type->FindFieldByName(path.back().field);
  const auto* name_field = node_field->message_type()->FindFieldByName("name");
  for (int i = 0;; ++i) {
    TextFormat::ParseLocationRange range = at->GetLocationRange(node_field, i);
    if (range.start.line < 0) break;
    if (const TextFormat::ParseInfoTree* node = at->GetTreeForNested(node_field, i)) {
      const TextFormat::ParseLocationRange name = node->GetLocationRange(name_field, -1);
      if (name.start.line >= 0) range = name;
    }
    out.push_back({range.start.line + 1, range.start.column + 1});
  }
  return out;
}

void ExpectSame(const std::vector<SourceLocation>& want, const std::vector<SourceLocation>& got,
                const std::string& what) {
  auto show = [](const std::vector<SourceLocation>& v) {
    std::string s;
    for (const SourceLocation& l : v) s += " " + std::to_string(l.line) + ":" + std::to_string(l.column);
    return s;
  };
  ASSERT_EQ(want.size(), got.size()) << what << ": parser" << show(want) << ", scan" << show(got);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].line, got[i].line) << what << " node " << i;
    EXPECT_EQ(want[i].column, got[i].column) << what << " node " << i;
  }
}

TEST(TextLocationsTest, EveryTextGraphOfTheExamplesAsTheParserSays) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator("graphs/tf")) {
    if (entry.path().extension() != ".pbtxt") continue;
    const std::string text = Read(entry.path().string());
    tfproto::GraphDef graph;
    const std::vector<TextPathStep> path = {{"node", -1}};
    const std::vector<SourceLocation> want = TreeLocations(text, &graph, path);
    ASSERT_EQ(static_cast<int>(want.size()), graph.node_size()) << entry.path();
    ExpectSame(want, MessageNameLocations(text, path), entry.path().string());
    ++files;
  }
  EXPECT_GE(files, 20);
}

TEST(TextLocationsTest, TextThatWouldMisleadAScan) {
  const std::string text =
      "# node { name: \"comment\" }\n"
      "node {\n"
      "\top: \"Const\"  # name: \"not this\" {\n"
      "  attr { key: \"value\" value { s: \"}{ node { name: \\\"x\\\" }\" } }\n"
      "  name: 'quoted \\' \" } {'\n"
      "}\n"
      "node <\n"
      "  device: \"\" \"/cpu:0\"\n"
      "  attr: [{ key: \"a\" value { i: -3 } }, { key: \"b\" value { f: -1.5e-3 } }]\n"
      "  name: \"angle\"\n"
      ">\n"
      "node { op: \"NoOp\" } node{name:\"same_line\"}\n"
      "versions { producer: 27 }\n";
  tfproto::GraphDef graph;
  const std::vector<TextPathStep> path = {{"node", -1}};
  const std::vector<SourceLocation> want = TreeLocations(text, &graph, path);
  ASSERT_EQ(graph.node_size(), 4);
  ExpectSame(want, MessageNameLocations(text, path), "misleading text");
  EXPECT_EQ(want[0].line, 5);  // the name field, after the node's other fields
  EXPECT_EQ(want[0].column, 3);
}

TEST(TextLocationsTest, NodesOfTheChosenMetaGraphOfASavedModel) {
  const std::string text =
      "saved_model_schema_version: 1\n"
      "meta_graphs {\n"
      "  meta_info_def { tags: \"train\" }\n"
      "  graph_def { node { name: \"first_a\" } }\n"
      "}\n"
      "meta_graphs {\n"
      "  meta_info_def { tags: \"serve\" }\n"
      "  graph_def {\n"
      "    node { name: \"second_a\" op: \"Const\" }\n"
      "    node {\n"
      "      op: \"Identity\"\n"
      "      name: \"second_b\"\n"
      "    }\n"
      "  }\n"
      "}\n";
  tfproto::SavedModel saved;
  const std::vector<TextPathStep> path = {{"meta_graphs", 1}, {"graph_def", -1}, {"node", -1}};
  const std::vector<SourceLocation> want = TreeLocations(text, &saved, path);
  ASSERT_EQ(want.size(), 2u);
  ExpectSame(want, MessageNameLocations(text, path), "saved model");
  tfproto::MetaGraphDef meta;
  const std::string meta_text = "graph_def { node { name: \"m\" } node { name: \"n\" } }\n";
  const std::vector<TextPathStep> meta_path = {{"graph_def", -1}, {"node", -1}};
  ExpectSame(TreeLocations(meta_text, &meta, meta_path), MessageNameLocations(meta_text, meta_path), "meta graph");
}

// A list of node messages: each element is a node, located at its name, else
// at its brace. (protobuf's own tree records the list's first element
// alone, so its later indices shift: the scan is checked against
// locations counted by hand.)
TEST(TextLocationsTest, EachMessageOfAListIsOne) {
  const std::string text = "node: [{ name: \"a\" }, { op: \"NoOp\" }]\nnode { name: \"b\" }\n";
  tfproto::GraphDef graph;
  ASSERT_TRUE(TextFormat::ParseFromString(text, &graph));
  ASSERT_EQ(graph.node_size(), 3);
  ExpectSame({{1, 10}, {1, 23}, {2, 8}}, MessageNameLocations(text, {{"node", -1}}), "list of nodes");
}

// Text the parser refuses gives some answer, never a crash or a hang.
TEST(TextLocationsTest, BrokenTextEndsTheScan) {
  const std::vector<TextPathStep> path = {{"node", -1}};
  for (const std::string& text : std::vector<std::string>{"node {", "node { name: \"x", "node [", "}}}}", "node { name: - }", "[[[[",
                                 std::string(100000, '{'), "node " + std::string(5000, '<')}) {
    (void)MessageNameLocations(text, path);
  }
  std::string deep;  // nested far deeper than the scan descends
  for (int i = 0; i < 100000; ++i) deep += "node { ";
  for (const std::string& text : std::vector<std::string>{deep, deep + std::string(100000, '}')}) {
    (void)MessageNameLocations(text, path);
  }
}

}  // namespace
}  // namespace tfrun
