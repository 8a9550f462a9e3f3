// Where the messages of one repeated field of a protobuf text file are,
// found by one scan of its tokens. protobuf's own ParseInfoTree records
// every field of every message and cost a third of loading a large text
// GraphDef (24 of 74 ms for the 8-tower sample); tfrun needs one location
// per node, for its messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"

namespace tfrun {

// One field on the way from the file's top message to the messages wanted.
struct TextPathStep {
  std::string field;
  // Which occurrence of `field` to descend into, counted from 0 in its
  // enclosing message; -1: every one (a singular field written once, or
  // every message of the last step).
  int index = -1;
};

// The top message's fields in file order, each with where it starts (its
// name's first byte), for cutting a text file into pieces that parse
// alone.
struct TextField {
  std::string name;
  size_t offset = 0;
};

// For each message the path reaches, in file order: where its `name`
// field is, else where the message's own field is, or its brace in a list
// (`node: [{...}, {...}]`) (1-based line and column, as the parser's tree
// gives them). With `top_level`, also the top message's fields, or none
// where the scan meets anything else there (an extension's [name]), so
// that the caller does not cut. For text the protobuf parser accepted; on
// text it would not, the results are whatever the scan found and must not
// be relied on.
std::vector<SourceLocation> MessageNameLocations(std::string_view text, const std::vector<TextPathStep>& path,
                                                 std::vector<TextField>* top_level = nullptr);

}  // namespace tfrun
