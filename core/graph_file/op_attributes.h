// The attributes an op reads from its graph-file entry besides name, op,
// inputs and device (the keys op_registry.cc lists for it), as one table:
// a new op with attributes adds a row here and nothing to the loader.
#pragma once

#include "core/graph/graph.h"
#include "core/graph_file/tensor_literal.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

// Sets `node`'s attributes from `entry` (node->op and ->name are set).
Status ReadOpAttributes(const YamlNode& entry, const FieldReader& fields, TensorLiteralReader* literals, Node* node);

}  // namespace tfrun
