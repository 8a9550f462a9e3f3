// --feed against the tensors of a graph TensorFlow wrote.
#include "cli/feeds.h"

#include <gtest/gtest.h>

#include "core/graph_def/graph_def_import.h"

namespace tfrun {
namespace {

Graph ResourceGraph() {
  StatusOr<Graph> graph = LoadTfGraph("graphs/tf/resource_run.pbtxt", GraphDefImportOptions());
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return std::move(*graph);
}

// A resource handle has no value a user could write: feeding one is a
// command-line error, before a kernel could take the fed bytes for a
// handle (session.py itself fails with a KeyError of its own).
TEST(FeedsTest, AResourceHandleCannotBeFed) {
  const Graph graph = ResourceGraph();
  for (const char* spec : {"w=[[1.0, 2.0], [3.0, 4.0]]", "w:0=b'localhost/w'"}) {
    StatusOr<std::vector<Feed>> feeds = ResolveFeeds({spec}, graph, *FindProfile("tf2"), 1 << 20);
    ASSERT_FALSE(feeds.ok()) << spec;
    EXPECT_EQ(feeds.status().kind(), ErrorKind::kBadInput);
    const std::string& message = feeds.status().message();
    EXPECT_EQ(message.substr(message.find(": ")),
              ": w:0 is a resource tensor, which a feed cannot give a value (feed a tensor it computes from instead)")
        << spec;
  }
  // The variable's value, read, can be.
  StatusOr<std::vector<Feed>> read =
      ResolveFeeds({"y/ReadVariableOp=[[1.0, 2.0], [3.0, 4.0]]"}, graph, *FindProfile("tf2"), 1 << 20);
  EXPECT_TRUE(read.ok()) << read.status().message();
}

// A dequeue's components are its outputs, each of its own dtype: feeding
// them all replaces the queue (and the reader behind it), as feed_dict
// does. A value is read and cast as the output's dtype, not the node's
// first output's.
TEST(FeedsTest, EachOutputOfANodeIsFedInItsOwnDType) {
  StatusOr<Graph> graph = LoadTfGraph("graphs/tf/queue_run.pbtxt", GraphDefImportOptions());
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  StatusOr<std::vector<Feed>> feeds =
      ResolveFeeds({"q1_upto:0=[[1, 2], [3, 4]]", "q1_upto:1=[5, 6]"}, *graph, *FindProfile("tf2"), 1 << 20);
  ASSERT_TRUE(feeds.ok()) << feeds.status().message();
  ASSERT_EQ(feeds->size(), 2u);
  EXPECT_EQ((*feeds)[0].value.dtype(), DType::kFloat32);
  EXPECT_EQ((*feeds)[1].value.dtype(), DType::kInt32);
  // A literal is read as the output's dtype: a float is not an int32.
  StatusOr<std::vector<Feed>> floats =
      ResolveFeeds({"q1_upto:1=[0.5, 2]"}, *graph, *FindProfile("tf2"), 1 << 20);
  EXPECT_FALSE(floats.ok());
}

}  // namespace
}  // namespace tfrun
