// A GraphDef's function library (FunctionDefLibrary) as the passes read it
// (core/graph/function_library.h): FunctionDefs by name, each instantiated
// as TensorFlow's FunctionInstantiationHelper instantiates one and imported
// as the GraphDef's own nodes are (graph_def_import.h).
#pragma once

#include <memory>
#include <string>

#include "core/graph/function_library.h"
#include "core/graph_def/tf_graph.pb.h"

namespace tfrun {

// The library of `library` (copied), or an error naming `path` for a
// FunctionDef without a name or two of the same name (TensorFlow's
// FunctionLibraryDefinition::AddFunctionDef).
StatusOr<std::shared_ptr<const FunctionLibrary>> MakeFunctionLibrary(const tfproto::FunctionDefLibrary& library,
                                                                     const std::string& path);

}  // namespace tfrun
