// What running a node does besides computing its outputs, read from
// TensorFlow's op definitions: the rules both Grappler's rewrite of unread
// values (unread_values.h) and the concurrent executor (executor.h) go by.
#pragma once

#include <vector>

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

// The reference variables (ids of their VariableV2 or Variable nodes) that
// `node` writes, where writing them is all it changes: an op TensorFlow
// defines, neither stateful nor in place, without handles or list inputs,
// each of whose reference inputs is read straight from a variable's node,
// and which writes the variables' buffers in place (ApplyGradientDescent,
// AssignAdd, ScatterAdd on a VariableV2; not Assign, which stores a new
// buffer in the map of variables that every variable's node reads). Empty
// for every other node. Such a node need only keep its place in run order
// among the nodes that may hold a written variable's buffer
// (VariableBufferHolders), not among all.
std::vector<int> WrittenReferenceVariables(const Graph& graph, const Node& node);

// Whether `node`'s kernel never outputs a tensor that another node holds:
// it allocates its outputs, or takes over an input that nothing else holds
// (KernelContext::ForwardOrAllocateOutput, AddN). A variable's buffer,
// which the variable holds, is never such an input, so it reaches a
// node's output only through nodes for which this is false: Identity,
// Reshape, control flow, a reduction over dimensions of size 1, and any op
// not listed. A listed op's kernel that breaks this fails the run
// (Executor::RunKernel checks it on CPUs).
bool MakesFreshOutputs(const Node& node);

// The nodes that may hold the buffer of the variable whose node is
// `variable`: those reading the variable's output, and the readers of any
// output of one of those for which MakesFreshOutputs is false, and so on
// (data edges only), in id order. The variable itself is not among them.
std::vector<int> VariableBufferHolders(const Graph& graph, int variable);

}  // namespace tfrun
