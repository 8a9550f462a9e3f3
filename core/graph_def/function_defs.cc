#include "core/graph_def/function_defs.h"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "core/graph_def/graph_def_import.h"

namespace tfrun {
namespace {

std::string TypeOf(const tfproto::ArgDef& arg) {
  const std::string& name = tfproto::DataType_Name(arg.type());
  return name.size() > 3 ? name.substr(3) : name;  // "DT_FLOAT" -> "FLOAT"
}

class ProtoFunctionLibrary : public FunctionLibrary, public std::enable_shared_from_this<ProtoFunctionLibrary> {
 public:
  ProtoFunctionLibrary(const tfproto::FunctionDefLibrary& library, std::string path)
      : library_(library), path_(std::move(path)) {}

  Status Index() {
    for (int i = 0; i < library_.function_size(); ++i) {
      const std::string& name = library_.function(i).signature().name();
      if (name.empty()) return BadInput(fmt::format("{}: function {} of the graph's library has no name", path_, i));
      if (!by_name_.emplace(name, i).second) {
        return BadInput(fmt::format("{}: Cannot add function '{}' because a different function with the same name "
                                    "already exists.",
                                    path_, name));
      }
    }
    return Status::Ok();
  }

  int size() const override { return library_.function_size(); }
  std::string FirstName() const override {
    return library_.function_size() == 0 ? "" : library_.function(0).signature().name();
  }
  bool Contains(std::string_view name) const override { return by_name_.count(std::string(name)) > 0; }

  const AttrValue* FunctionAttr(std::string_view name, std::string_view attr) const override {
    const tfproto::FunctionDef* def = Find(name);
    if (def == nullptr) return nullptr;
    auto it = def->attr().find(std::string(attr));
    if (it == def->attr().end()) return nullptr;
    // Kept converted, so that the pointer lives as long as the library.
    std::lock_guard<std::mutex> lock(mutex_);
    auto [slot, added] = attrs_.try_emplace(std::string(name) + '\0' + std::string(attr));
    if (added) slot->second = ConvertGraphDefAttr(it->second, "");
    return &slot->second;
  }

  StatusOr<FunctionSignature> Signature(std::string_view name) const override {
    const tfproto::FunctionDef* def = Find(name);
    if (def == nullptr) return BadInput(fmt::format("{}: no function '{}' in the graph's library", path_, name));
    FunctionSignature signature;
    auto add = [&](const tfproto::ArgDef& arg, std::vector<std::string>* names,
                   std::vector<std::string>* types) -> Status {
      // Python writes concrete functions with one type per argument; a
      // polymorphic FunctionDef (type_attr, lists) is instantiated with
      // attrs tfrun does not bind yet.
      if (!arg.type_attr().empty() || !arg.number_attr().empty() || !arg.type_list_attr().empty() ||
          arg.type() == tfproto::DT_INVALID) {
        return BadInput(fmt::format("{}: function '{}': argument '{}' has a type set by an attr; only functions with "
                                    "a type for each argument are supported",
                                    path_, name, arg.name()));
      }
      names->push_back(arg.name());
      types->push_back(TypeOf(arg) + (arg.is_ref() ? "_REF" : ""));
      return Status::Ok();
    };
    for (const auto& arg : def->signature().input_arg()) {
      TFRUN_RETURN_IF_ERROR(add(arg, &signature.input_names, &signature.input_types));
    }
    for (const auto& arg : def->signature().output_arg()) {
      TFRUN_RETURN_IF_ERROR(add(arg, &signature.output_names, &signature.output_types));
    }
    return signature;
  }

  StatusOr<FunctionBody> Instantiate(std::string_view name) const override {
    const tfproto::FunctionDef* def = Find(name);
    TFRUN_ASSIGN_OR_RETURN(FunctionSignature signature, Signature(name));
    // FunctionInstantiationHelper: the _Arg nodes, the body, the _Retvals.
    TfGraphFile body;
    body.kind = fmt::format("function '{}'", name);
    tfproto::GraphDef& gd = body.graph_def;
    // Under experimental_ints_on_device an int32 argument or result stays
    // in device memory: _DeviceArg and _DeviceRetval.
    auto ints_on_device = def->attr().find("experimental_ints_on_device");
    const bool device_ints = ints_on_device != def->attr().end() && ints_on_device->second.b();
    auto op_for = [&](const tfproto::ArgDef& arg, const char* plain, const char* device) {
      return device_ints && arg.type() == tfproto::DT_INT32 ? device : plain;
    };
    for (int i = 0; i < def->signature().input_arg_size(); ++i) {
      const tfproto::ArgDef& arg = def->signature().input_arg(i);
      tfproto::NodeDef* node = gd.add_node();
      node->set_name(arg.name());
      node->set_op(op_for(arg, "_Arg", "_DeviceArg"));
      (*node->mutable_attr())["T"].set_type(arg.type());
      (*node->mutable_attr())["index"].set_i(i);
    }
    for (const tfproto::NodeDef& node : def->node_def()) *gd.add_node() = node;
    for (int i = 0; i < def->signature().output_arg_size(); ++i) {
      const tfproto::ArgDef& arg = def->signature().output_arg(i);
      auto ret = def->ret().find(arg.name());
      if (ret == def->ret().end()) {
        return BadInput(fmt::format("{}: function '{}': Return value {} not found in the ret field", path_, name,
                                    arg.name()));
      }
      tfproto::NodeDef* node = gd.add_node();
      node->set_name(arg.name() + "_RetVal");
      node->set_op(op_for(arg, "_Retval", "_DeviceRetval"));
      node->add_input(ret->second);
      (*node->mutable_attr())["T"].set_type(arg.type());
      (*node->mutable_attr())["index"].set_i(i);
    }
    GraphDefImportOptions options;
    TFRUN_ASSIGN_OR_RETURN(Graph graph, ImportFunctionGraphDef(body, fmt::format("{} ({})", path_, body.kind),
                                                               options, shared_from_this()));
    FunctionBody result;
    result.signature = std::move(signature);
    for (const tfproto::ArgDef& arg : def->signature().input_arg()) result.args.push_back(*graph.by_name.Find(arg.name()));
    for (const tfproto::ArgDef& arg : def->signature().output_arg()) {
      result.rets.push_back(*graph.by_name.Find(arg.name() + "_RetVal"));
    }
    for (const std::string& output : def->signature().control_output()) {
      auto it = def->control_ret().find(output);
      const int* id = it == def->control_ret().end() ? nullptr : graph.by_name.Find(it->second);
      if (id == nullptr) {
        return BadInput(fmt::format("{}: function '{}': control output '{}' names no node of its body", path_, name,
                                    output));
      }
      result.control_rets.push_back(*id);
    }
    result.graph = std::move(graph);
    return result;
  }

 private:
  const tfproto::FunctionDef* Find(std::string_view name) const {
    auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? nullptr : &library_.function(it->second);
  }

  const tfproto::FunctionDefLibrary library_;
  const std::string path_;
  std::unordered_map<std::string, int> by_name_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, AttrValue> attrs_;  // FunctionAttr's, converted once
};

}  // namespace

StatusOr<std::shared_ptr<const FunctionLibrary>> MakeFunctionLibrary(const tfproto::FunctionDefLibrary& library,
                                                                     const std::string& path) {
  auto made = std::make_shared<ProtoFunctionLibrary>(library, path);
  TFRUN_RETURN_IF_ERROR(made->Index());
  return std::shared_ptr<const FunctionLibrary>(std::move(made));
}

}  // namespace tfrun
