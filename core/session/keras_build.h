// What eager TensorFlow 2.21 executes for a Keras program (a graph file's
// `keras:`, Graph::KerasProgram) and the log it prints with
// tf.debugging.set_log_device_placement(True).
//
// Every op a Python program runs eagerly is wrapped in a one-op function
// (execute.cc WrapInCallOp), whose placement the function runtime logs the
// first time it instantiates it for the op's device, attrs and resource
// inputs; then execute.cc logs "Executing op OP in device DEVICE", every
// time. The ops themselves come from Python: MirroredStrategy's
// constructor, Keras' layer build and compile, tf.distribute's mirrored
// variable creator. tfrun models the ones a Dense model runs, measured on
// TensorFlow 2.21 with Keras 3.15 and with tf_keras 2.21
// (TF_USE_LEGACY_KERAS=1) over 1, 2 and 3 logical CPUs (graphs/tf/
// make_keras_compile.py writes the goldens). The ops' values (the drawn
// kernel) are not computed: the program prints none, and its initializer
// is unseeded.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/placement/compat_profile.h"
#include "core/tables/tf_tables.h"

namespace tfrun {

// One op eager executes: its type, its device, and what tells its kernel
// and wrapper function apart from another op's of the same type.
struct EagerOpCall {
  std::string op;
  int device = 0;  // index into the DeviceSet
  // The attrs that name its types (T, dtype, SrcT, ...) and VarHandleOp's
  // shape; OpDef defaults fill the rest.
  NodeAttrs attrs;
  // Eager's kernel cache also keys an op's resource input by its
  // variable's dtype and shape: "FLOAT(1x1)" ("" without one).
  std::string resource;
};

enum class KerasVersion {
  kKeras3,  // TensorFlow 2.21's tf.keras (Keras 3.15)
  kKeras2,  // tf_keras 2.21 under TF_USE_LEGACY_KERAS=1, the TF2 guide's era
};

// The replicas of `program`'s MirroredStrategy (the logical devices of its
// type, in name order) and the ops its build and compile execute.
struct KerasBuild {
  std::vector<int> replicas;
  std::vector<EagerOpCall> ops;
};

KerasBuild BuildKerasProgram(const Graph::KerasProgram& program, KerasVersion version, const DeviceSet& devices);

// "INFO:tensorflow:Using MirroredStrategy with devices ('...', '...')"
// (mirrored_strategy.py, at the INFO level the guide's transcript shows).
std::string MirroredStrategyInfoLine(const std::vector<int>& replicas, const DeviceSet& devices);

// Eager's log of executed ops: each op's wrapper placement lines the first
// time its wrapper is instantiated, then its "Executing op" line.
class EagerOpLog {
 public:
  EagerOpLog(const DeviceSet& devices, std::string path) : devices_(devices), path_(std::move(path)) {}
  StatusOr<std::string> Execute(const EagerOpCall& op);

 private:
  const DeviceSet& devices_;
  std::string path_;                  // the graph file, for messages
  std::set<std::string> instantiated_;  // wrapper keys (WrapperKey) seen
};

}  // namespace tfrun
