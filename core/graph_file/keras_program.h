// A graph file's `keras:` (graph-format.md, "Keras programs"): the model a
// TensorFlow 2 program builds and compiles under MirroredStrategy, read
// into Graph::KerasProgram. What eager TensorFlow runs for it is the
// session's (core/session/keras_build.h).
#pragma once

#include "core/base/status.h"
#include "core/graph/graph.h"
#include "core/graph_file/yaml_document.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

// Reads `node` (the value of `keras:`); errors name the file, line and
// column of the offending field (exit 2).
Status ReadKerasProgram(const FieldReader& fields, const YamlNode& node, Graph::KerasProgram* program);

}  // namespace tfrun
