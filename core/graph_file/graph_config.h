// A graph file's `config:` (graph-format.md): the tf.ConfigProto fields a
// graph may set. Command-line flags override them later (cli/).
#pragma once

#include "core/graph/graph.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

// Null means no settings; anything but a mapping is an error.
Status ReadGraphConfig(const FieldReader& fields, const YamlNode& config, GraphConfig* out);

}  // namespace tfrun
