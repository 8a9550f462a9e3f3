// ErrorJson: an error's site from its fields, else read from its message.
#include "cli/report.h"

#include <gtest/gtest.h>

#include "core/graph/graph.h"

namespace tfrun {
namespace {

TEST(ErrorJsonTest, TheSiteComesFromTheStatusFields) {
  // The message leads with another node's name: the fields say which node failed.
  const Status s(ErrorKind::kRuntime, "g.yaml:3:7: node 'other' on /device:CPU:0: boom",
                 ErrorSite{"g.yaml", 3, 7, "failed"});
  EXPECT_EQ(ErrorJson(s),
            "{\"kind\":\"runtime\",\"exit_code\":4,\"message\":\"g.yaml:3:7: node 'other' on /device:CPU:0: boom\","
            "\"file\":\"g.yaml\",\"line\":3,\"column\":7,\"node\":\"failed\"}");
}

TEST(ErrorJsonTest, WithoutFieldsTheMessageIsRead) {
  const Status s = BadInput("g.yaml:12:5: node 'x': bad value");
  EXPECT_EQ(ErrorJson(s),
            "{\"kind\":\"bad_input\",\"exit_code\":2,\"message\":\"g.yaml:12:5: node 'x': bad value\","
            "\"file\":\"g.yaml\",\"line\":12,\"column\":5,\"node\":\"x\"}");
  EXPECT_EQ(ErrorJson(RuntimeError("no location")),
            "{\"kind\":\"runtime\",\"exit_code\":4,\"message\":\"no location\"}");
}

TEST(ErrorJsonTest, GraphErrorAtSetsTheFieldsItsMessageShows) {
  Graph graph;
  graph.path = "graphs/g.yaml";
  Node node;
  node.name = "a/b";
  node.location = SourceLocation{4, 9};
  const Status s = graph.ErrorAt(ErrorKind::kPlacement, node, "InvalidArgumentError: Cannot assign a device");
  EXPECT_EQ(s.message(), "graphs/g.yaml:4:9: InvalidArgumentError: Cannot assign a device");
  EXPECT_EQ(s.site().file, "graphs/g.yaml");
  EXPECT_EQ(s.site().line, 4);
  EXPECT_EQ(s.site().column, 9);
  EXPECT_EQ(s.site().node, "a/b");
  EXPECT_EQ(graph.ErrorAt(ErrorKind::kPlacement, node, "text", false).site().node, "");
  // A node without a known line: the message shows the path only, and so does --json (no line or column).
  node.location = SourceLocation{};
  EXPECT_EQ(ErrorJson(graph.ErrorAt(ErrorKind::kRuntime, node, "oops", false)),
            "{\"kind\":\"runtime\",\"exit_code\":4,\"message\":\"graphs/g.yaml: oops\"}");
}

}  // namespace
}  // namespace tfrun
