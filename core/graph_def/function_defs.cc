#include "core/graph_def/function_defs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "core/graph_def/graph_def_export.h"
#include "core/graph_def/graph_def_import.h"

namespace tfrun {
namespace {

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
      TFRUN_RETURN_IF_ERROR(CheckRets(library_.function(i)));
    }
    return Status::Ok();
  }

  // What TensorFlow's importer checks of each function's results (its
  // InstantiateFunction's words): each output has a ret, naming an
  // argument or a node of the body.
  Status CheckRets(const tfproto::FunctionDef& def) const {
    std::unordered_set<std::string> names;
    for (const auto& arg : def.signature().input_arg()) names.insert(arg.name());
    for (const auto& node : def.node_def()) names.insert(node.name());
    for (const auto& arg : def.signature().output_arg()) {
      std::string type = arg.type_attr();
      if (type.empty()) {
        type = tfproto::DataType_Name(arg.type());
        type = type.size() > 3 ? type.substr(3) : type;
        std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
      }
      const std::string context = fmt::format("\n\tIn function output {}:{}", arg.name(), type);
      auto ret = def.ret().find(arg.name());
      if (ret == def.ret().end()) return BadInput(fmt::format("{}: Return {} missing.{}", path_, arg.name(), context));
      if (names.count(ret->second.substr(0, ret->second.find(':'))) == 0) {
        return BadInput(fmt::format("{}: Return {} -> {} is not found.{}", path_, arg.name(), ret->second, context));
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

  StatusOr<FunctionSignature> Signature(std::string_view name, const NodeAttrs* call_attrs) const override {
    const tfproto::FunctionDef* def = Find(name);
    if (def == nullptr) return BadInput(fmt::format("{}: no function '{}' in the graph's library", path_, name));
    FunctionSignature signature;
    auto add = [&](const tfproto::ArgDef& arg, std::vector<std::string>* names,
                   std::vector<std::string>* types) -> StatusOr<int> {
      TFRUN_ASSIGN_OR_RETURN(const std::vector<tfproto::DataType> dtypes, ArgTypes(*def, arg, call_attrs));
      for (size_t i = 0; i < dtypes.size(); ++i) {
        names->push_back(dtypes.size() == 1 ? arg.name() : fmt::format("{}_{}", arg.name(), i));
        const std::string& type = tfproto::DataType_Name(dtypes[i]);
        types->push_back((type.size() > 3 ? type.substr(3) : type) + (arg.is_ref() ? "_REF" : ""));
      }
      return static_cast<int>(dtypes.size());
    };
    for (const auto& arg : def->signature().input_arg()) {
      TFRUN_RETURN_IF_ERROR(add(arg, &signature.input_names, &signature.input_types).status());
    }
    for (const auto& arg : def->signature().output_arg()) {
      TFRUN_ASSIGN_OR_RETURN(const int count, add(arg, &signature.output_names, &signature.output_types));
      signature.output_args.emplace_back(arg.name(), count);
    }
    return signature;
  }

  StatusOr<FunctionBody> Instantiate(std::string_view name, const NodeAttrs* call_attrs) const override {
    const tfproto::FunctionDef* def = Find(name);
    TFRUN_ASSIGN_OR_RETURN(FunctionSignature signature, Signature(name, call_attrs));
    // FunctionInstantiationHelper: the _Arg nodes, the body, the _Retvals.
    TfGraphFile body;
    body.kind = fmt::format("function '{}'", name);
    tfproto::GraphDef& gd = body.graph_def;
    // Under experimental_ints_on_device an int32 argument or result stays
    // in device memory: _DeviceArg and _DeviceRetval.
    auto ints_on_device = def->attr().find("experimental_ints_on_device");
    const bool device_ints = ints_on_device != def->attr().end() && ints_on_device->second.b();
    auto op_for = [&](tfproto::DataType type, const char* plain, const char* device) {
      return device_ints && type == tfproto::DT_INT32 ? device : plain;
    };
    // One _Arg per tensor; a list argument's are <arg>_0, <arg>_1, ...
    std::unordered_map<std::string, int> list_args;  // a list argument -> its length
    int index = 0;
    for (const tfproto::ArgDef& arg : def->signature().input_arg()) {
      TFRUN_ASSIGN_OR_RETURN(const std::vector<tfproto::DataType> dtypes, ArgTypes(*def, arg, call_attrs));
      if (dtypes.size() != 1) list_args.emplace(arg.name(), static_cast<int>(dtypes.size()));
      for (size_t i = 0; i < dtypes.size(); ++i) {
        tfproto::NodeDef* node = gd.add_node();
        node->set_name(dtypes.size() == 1 ? arg.name() : fmt::format("{}_{}", arg.name(), i));
        node->set_op(op_for(dtypes[i], "_Arg", "_DeviceArg"));
        (*node->mutable_attr())["T"].set_type(dtypes[i]);
        (*node->mutable_attr())["index"].set_i(index++);
      }
    }
    for (const tfproto::NodeDef& from : def->node_def()) {
      tfproto::NodeDef* node = gd.add_node();
      *node = from;
      TFRUN_RETURN_IF_ERROR(BindPlaceholders(*def, call_attrs, node));
      if (!list_args.empty()) ExpandListArgInputs(list_args, node);
    }
    index = 0;
    for (const tfproto::ArgDef& arg : def->signature().output_arg()) {
      auto ret = def->ret().find(arg.name());
      if (ret == def->ret().end()) {
        return BadInput(fmt::format("{}: function '{}': Return value {} not found in the ret field", path_, name,
                                    arg.name()));
      }
      TFRUN_ASSIGN_OR_RETURN(const std::vector<tfproto::DataType> dtypes, ArgTypes(*def, arg, call_attrs));
      for (size_t i = 0; i < dtypes.size(); ++i) {
        tfproto::NodeDef* node = gd.add_node();
        node->set_name(dtypes.size() == 1 ? arg.name() + "_RetVal" : fmt::format("{}_RetVal_{}", arg.name(), i));
        node->set_op(op_for(dtypes[i], "_Retval", "_DeviceRetval"));
        node->add_input(dtypes.size() == 1 ? ret->second : ListElement(ret->second, list_args, static_cast<int>(i)));
        (*node->mutable_attr())["T"].set_type(dtypes[i]);
        (*node->mutable_attr())["index"].set_i(index++);
      }
    }
    GraphDefImportOptions options;
    TFRUN_ASSIGN_OR_RETURN(Graph graph, ImportFunctionGraphDef(body, fmt::format("{} ({})", path_, body.kind),
                                                               options, shared_from_this()));
    FunctionBody result;
    for (const std::string& arg : signature.input_names) result.args.push_back(*graph.by_name.Find(arg));
    for (const tfproto::NodeDef& node : gd.node()) {
      if (node.op() == "_Retval" || node.op() == "_DeviceRetval") result.rets.push_back(*graph.by_name.Find(node.name()));
    }
    result.signature = std::move(signature);
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
  // The attr `attr` of a call: the call's, else the signature's default;
  // null when neither has it.
  const tfproto::AttrValue* CallAttr(const tfproto::FunctionDef& def, const NodeAttrs* call_attrs,
                                     const std::string& attr, tfproto::AttrValue* converted) const {
    if (call_attrs != nullptr) {
      auto it = call_attrs->find(attr);
      if (it != call_attrs->end() && TableAttrToProto(it->second, converted).ok()) return converted;
    }
    for (const auto& a : def.signature().attr()) {
      if (a.name() == attr && a.has_default_value()) return &a.default_value();
    }
    return nullptr;
  }

  // ArgNumType: the dtypes of one argument, a list (number_attr, or
  // type_list_attr) bound from the call's attrs.
  StatusOr<std::vector<tfproto::DataType>> ArgTypes(const tfproto::FunctionDef& def, const tfproto::ArgDef& arg,
                                                    const NodeAttrs* call_attrs) const {
    auto missing = [&](const std::string& attr) {
      return BadInput(fmt::format("{}: function '{}': argument '{}' takes its {} from attr '{}', which {}", path_,
                                  def.signature().name(), arg.name(),
                                  attr == arg.number_attr() ? "length" : "type", attr,
                                  call_attrs == nullptr ? "a call without attrs (--call, a PartitionedCall) cannot "
                                                          "give"
                                                        : "the call does not give"));
    };
    tfproto::AttrValue converted;
    std::vector<tfproto::DataType> dtypes;
    if (!arg.type_list_attr().empty()) {
      const tfproto::AttrValue* list = CallAttr(def, call_attrs, arg.type_list_attr(), &converted);
      if (list == nullptr) return missing(arg.type_list_attr());
      for (int t : list->list().type()) dtypes.push_back(static_cast<tfproto::DataType>(t));
      if (dtypes.empty()) return missing(arg.type_list_attr());
      return dtypes;
    }
    tfproto::DataType type = arg.type();
    if (!arg.type_attr().empty()) {
      const tfproto::AttrValue* t = CallAttr(def, call_attrs, arg.type_attr(), &converted);
      if (t == nullptr || t->type() == tfproto::DT_INVALID) return missing(arg.type_attr());
      type = t->type();
    }
    if (type == tfproto::DT_INVALID) {
      return BadInput(fmt::format("{}: function '{}': argument '{}' has no type", path_, def.signature().name(),
                                  arg.name()));
    }
    int64_t count = 1;
    if (!arg.number_attr().empty()) {
      tfproto::AttrValue number;
      const tfproto::AttrValue* n = CallAttr(def, call_attrs, arg.number_attr(), &number);
      if (n == nullptr) return missing(arg.number_attr());
      count = n->i();
      // A list's tensors are as many nodes: bounded as a graph's are.
      if (count < 1 || count > 1000000) {
        return BadInput(fmt::format("{}: function '{}': argument '{}' is a list of {} tensors", path_,
                                    def.signature().name(), arg.name(), count));
      }
    }
    dtypes.assign(static_cast<size_t>(count), type);
    return dtypes;
  }

  // InstantiateNode's AddAttrs: an attr written "$T" takes the call's T.
  Status BindPlaceholders(const tfproto::FunctionDef& def, const NodeAttrs* call_attrs, tfproto::NodeDef* node) const {
    for (auto& [key, value] : *node->mutable_attr()) {
      if (value.value_case() != tfproto::AttrValue::kPlaceholder) continue;
      tfproto::AttrValue converted;
      const tfproto::AttrValue* bound = CallAttr(def, call_attrs, value.placeholder(), &converted);
      if (bound == nullptr) {
        return BadInput(fmt::format("{}: function '{}': node '{}': attr '{}' is '${}', which {}", path_,
                                    def.signature().name(), node->name(), key, value.placeholder(),
                                    call_attrs == nullptr ? "a call without attrs cannot give"
                                                          : "the call does not give"));
      }
      value = *bound;
    }
    return Status::Ok();
  }

  // A body input naming a list argument reads each of its tensors
  // ("xs" -> xs_0, xs_1, ...); "xs:k" reads the k-th.
  static void ExpandListArgInputs(const std::unordered_map<std::string, int>& list_args, tfproto::NodeDef* node) {
    google::protobuf::RepeatedPtrField<std::string> inputs;
    for (const std::string& input : node->input()) {
      const size_t colon = input.find(':');
      auto it = list_args.find(input.substr(0, colon));
      if (input.empty() || input[0] == '^' || it == list_args.end()) {
        *inputs.Add() = input;
      } else if (colon == std::string::npos) {
        for (int i = 0; i < it->second; ++i) *inputs.Add() = fmt::format("{}_{}", it->first, i);
      } else {
        *inputs.Add() = fmt::format("{}_{}", it->first, input.substr(colon + 1));
      }
    }
    node->mutable_input()->Swap(&inputs);
  }

  // The i-th tensor of a list result named as `ret` names it: a list
  // argument's i-th, or "node:out_arg" (from "node:out_arg:k", k + i).
  static std::string ListElement(const std::string& ret, const std::unordered_map<std::string, int>& list_args,
                                 int i) {
    if (list_args.count(ret) > 0) return fmt::format("{}_{}", ret, i);
    const size_t first = ret.find(':');
    const size_t second = first == std::string::npos ? std::string::npos : ret.find(':', first + 1);
    if (second == std::string::npos) return fmt::format("{}:{}", ret, i);
    return fmt::format("{}:{}", ret.substr(0, second), std::strtoll(ret.c_str() + second + 1, nullptr, 10) + i);
  }

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
