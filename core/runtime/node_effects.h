// What running a node does besides computing its outputs, read from
// TensorFlow's op definitions: the rules both Grappler's rewrite of unread
// values (unread_values.h) and the concurrent executor (executor.h) go by.
#pragma once

#include "core/graph/graph.h"

namespace tfrun {

// op_types.cc ModifiesInputsInPlace: an op named "...InPlace..." or one
// whose `in_place`/`inplace` attr is true writes into an input's buffer.
bool ModifiesInputsInPlace(const Graph& graph, const Node& node);

// Whether running `node` changes state that other nodes of the run read,
// or whose order a user sees: a variable written through its reference or
// handle (Assign, the Apply ops, Scatter), a queue or reader, an input
// updated in place, a stateful op's effect (Print, Assert, SaveV2), or an
// op TensorFlow does not define (assumed to). Such a node runs alone and in
// run order when nodes run concurrently, so every variable read sees what
// it would have seen one node at a time. Reading variables, making their
// handles and drawing from a node's own random generator change nothing
// another node reads.
bool ChangesSharedState(const Graph& graph, const Node& node);

}  // namespace tfrun
