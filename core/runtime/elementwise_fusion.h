// Which float32 elementwise nodes of a run a backend computes inside the
// node that reads them, one block of elements at a time, instead of
// writing each result to memory and reading it back. A training step's
// weight gradients are chains of 16 MB passes (tf_cnn_benchmarks: the
// weight decay's Mul, the towers' AddN, the average's Mul, then
// ApplyGradientDescent): fused, one pass reads the gradients and the
// weight and writes the weight. Each element is computed by the same
// operations in the same order as the nodes' own kernels, so every value
// is the same bit for bit; only memory traffic changes.
//
// A deferred node still runs, in its place, as a node: its kernel only
// keeps its inputs (a variant tensor, KernelRegistry::FusionKernels). The
// root that reads it computes it. Deferring moves a node's reads of its
// inputs to the root's run, so a deferred node's inputs are tensors
// nothing writes in the meantime: fed values, outputs of kernels that make
// fresh ones (MakesFreshOutputs), constants (each maybe through Identity
// nodes), or a variable's read whose every other writer runs before the
// deferred node in run order (the executor orders such a writer before
// the variable's readers) or after the root (reads what it computes).
#pragma once

#include <set>
#include <utility>
#include <vector>

#include "core/graph/graph.h"

namespace tfrun {

enum class FusionRole : uint8_t {
  kNone,      // runs its own kernel
  kDeferred,  // keeps its inputs; its only reader computes it
  kRoot,      // computes its deferred inputs with its own result
};

// The roles of a run's nodes, by node id (all kNone where nothing fuses).
// `runs`: the nodes that run a kernel; `preserved`: those the run fetches
// or targets, whose values it keeps; `fed`: the outputs (node, index) a
// feed replaces; `device_of`: each node's device, and `fuses` whether that
// device's backend binds fusion kernels; `position`: each node's place in
// the executor's run order.
//
// A node is deferred when it is Mul, Add, AddV2, Sub, or AddN of two
// inputs (the order of whose sum cannot matter), float32; not preserved,
// not fed; its inputs kept as above; read by one edge, a data edge, of one
// node on its device that runs: another deferred node or a root. A root is
// such an elementwise node, or an update in place of a VariableV2 whose
// operand it is: ApplyGradientDescent's gradient, AssignAdd's or
// AssignSub's value. Control edges into a deferred node only move its
// work later. Shapes are the kernels' concern, at run time (an imported
// graph's shapes are mostly unknown): where a node's tensors do not fit
// one pass, its kernel computes what it was deferred and runs as it would
// have (KernelRegistry::FusionKernels).
std::vector<FusionRole> PlanElementwiseFusion(const Graph& graph, const std::vector<bool>& runs,
                                              const std::vector<bool>& preserved,
                                              const std::set<std::pair<int, int>>& fed,
                                              const std::vector<int>& device_of, const std::vector<bool>& fuses,
                                              const std::vector<int>& position);

}  // namespace tfrun
