// What a TF2 SavedModel's function captured, as TF2's loader gives it to
// the function when it is called (load.py): the variables it reads,
// restored from the SavedModel's bundle by TF2's object-based restore, and
// the constants it captured, read from their Const nodes. A concrete
// function's captures are its last arguments, one per bound input
// (Graph::SavedObjects::bound_inputs), in order.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/base/tensor.h"
#include "core/checkpoint/tensor_bundle.h"
#include "core/graph/graph.h"

namespace tfrun {

struct CapturedValue {
  int object = -1;              // its object id in the SavedModel
  bool variable = false;        // a variable (the argument is its handle), else a constant
  std::string checkpoint_key;   // a variable's key in the bundle
  Tensor value;                 // the variable's restored value, or the constant
};

// The checkpoint key of each variable object among `ids` ("" for the other
// objects): the bundle's own object graph (its `_CHECKPOINTABLE_OBJECT_GRAPH`
// tensor) matched to the SavedModel's from the root, child by child name,
// as TF2's restore binds the loaded objects to the checkpoint's; a
// variable's key is its VARIABLE_VALUE attribute's. A variable the
// checkpoint does not reach is an error naming it.
StatusOr<std::vector<std::string>> VariableCheckpointKeys(const TensorBundleReader& bundle,
                                                          const Graph::SavedObjects& objects,
                                                          const std::vector<int>& ids);

// The values of `function`'s captures (empty when it captures nothing):
// variables read from `objects.variables` (checked against the saved
// variable's dtype and shape, as the restore's assign checks them), and
// constants from `constant(name)`, the value of the Const node `name` (null:
// no such node). A capture tfrun cannot give (a lookup table's resource, a
// tensor captured from another function) is an error naming it.
StatusOr<std::vector<CapturedValue>> RestoreCaptures(const Graph::SavedObjects& objects, const std::string& function,
                                                     const std::function<const Tensor*(const std::string&)>& constant);

}  // namespace tfrun
