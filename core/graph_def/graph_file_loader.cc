#include "core/graph_def/graph_file_loader.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/graph_def/tf_graph_file.h"
#include "core/graph_file/fetch.h"
#include "core/graph_file/graph_config.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {
namespace {

const std::vector<std::string> kWrapperKeys = {"version", "graph_def", "tag",  "config",      "fetch",
                                               "targets", "call",      "call_device", "arg_devices"};

// The TensorFlow graph file a wrapper names, relative to the wrapper.
std::string WrappedPath(const std::string& wrapper, std::string_view named) {
  if (named.empty() || named.front() == '/') return std::string(named);
  const size_t slash = wrapper.rfind('/');
  return slash == std::string::npos ? std::string(named) : wrapper.substr(0, slash + 1) + std::string(named);
}

StatusOr<Graph> LoadWrapper(const YamlDocument& doc, const std::string& path, GraphDefImportOptions import) {
  const FieldReader fields(path);
  const YamlNode root = doc.root();
  TFRUN_RETURN_IF_ERROR(fields.CheckKeys(root, kWrapperKeys, "a graph_def wrapper"));
  if (const YamlNode v = root["version"]; v && (!v.IsScalar() || v.Scalar() != "1")) {
    return fields.ErrorAt(v, fmt::format("unsupported version '{}': this tfrun reads version 1",
                                         v.IsScalar() ? v.Scalar() : "?"));
  }
  const YamlNode named = root["graph_def"];
  if (!named.IsScalar() || named.Scalar().empty()) {
    return fields.ErrorAt(named, "graph_def names a TensorFlow graph file (GraphDef, MetaGraphDef or SavedModel)");
  }
  if (const YamlNode tag = root["tag"]) {
    if (!tag.IsScalar()) return fields.ErrorAt(tag, "tag is a SavedModel tag, such as serve");
    if (import.saved_model_tag.empty()) import.saved_model_tag = tag.ScalarString();  // --tag wins
  }
  const std::string wrapped = WrappedPath(path, named.Scalar());
  struct stat st;
  if (stat(wrapped.c_str(), &st) != 0) {
    return fields.ErrorAt(named, fmt::format("graph_def: cannot read {}: {}", wrapped, std::strerror(errno)));
  }
  if (!IsTfGraphFile(wrapped)) {
    return fields.ErrorAt(named, fmt::format("graph_def: {} is not a TensorFlow graph file (GraphDef, MetaGraphDef "
                                             "or SavedModel); a YAML graph is run by itself",
                                             wrapped));
  }
  TFRUN_ASSIGN_OR_RETURN(Graph graph, LoadTfGraph(wrapped, import));
  if (const YamlNode c = root["config"]) TFRUN_RETURN_IF_ERROR(ReadGraphConfig(fields, c, &graph.config));
  // A TensorFlow graph fetches nothing by default (it is placed whole);
  // the wrapper's lists name its nodes.
  const YamlNode fetch = root["fetch"];
  const YamlNode targets = root["targets"];
  if (fetch || targets) {
    TFRUN_RETURN_IF_ERROR(ReadFetch(fields, fetch, targets, &graph));
  }
  // A TF2 call: what --call, --call-device and --arg-device say.
  if (const YamlNode call = root["call"]) {
    if (!call.IsScalar() || call.Scalar().empty()) return fields.ErrorAt(call, "call names a library function");
    graph.call.function = call.ScalarString();
  }
  if (const YamlNode device = root["call_device"]) {
    if (!device.IsScalar()) return fields.ErrorAt(device, "call_device is a device, such as /GPU:0");
    graph.call.device = device.ScalarString();
  }
  if (const YamlNode args = root["arg_devices"]) {
    if (!args.IsMap()) return fields.ErrorAt(args, "arg_devices maps argument names to devices, {x: /CPU:0}");
    for (const YamlNode::Pair& pair : args.Pairs()) {
      if (!pair.value.IsScalar()) return fields.ErrorAt(pair.value, "a device, such as /CPU:0");
      graph.call.arg_devices.push_back(std::string(pair.key.Scalar()) + "=" + pair.value.ScalarString());
    }
  }
  if (graph.call.function.empty() && (root["call_device"] || root["arg_devices"])) {
    return fields.ErrorAt(root["call_device"] ? root["call_device"] : root["arg_devices"],
                          "call_device and arg_devices describe a call: name its function with call:");
  }
  return graph;
}

}  // namespace

StatusOr<Graph> LoadAnyGraphFile(const std::string& path, const LoadOptions& limits,
                                 const GraphDefImportOptions& import, const LogicalDeviceLister& devices) {
  struct stat st;
  const bool exists = path == "-" || stat(path.c_str(), &st) == 0;
  // Standard input or a pipe is read once, whole, then judged by its bytes
  // as a file of unknown name is (a GraphDef on a pipe was read as YAML).
  // It cannot be a wrapper: its graph_def would have no folder.
  if (path == "-" || (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
    const std::string label = path == "-" ? "<stdin>" : path;
    const int fd = path == "-" ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return BadInput(fmt::format("{}: cannot read graph file: {}", path, std::strerror(errno)));
    StatusOr<std::string> bytes = ReadGraphStream(fd, label, limits);
    if (path != "-") close(fd);
    if (!bytes.ok()) return bytes.status();
    if (IsTfGraphPath(path, *bytes)) {
      GraphDefImportOptions options = import;
      TFRUN_ASSIGN_OR_RETURN(TfGraphFile file, ParseTfGraphBytes(*bytes, label, import.saved_model_tag));
      return ImportGraphDef(file, label, options);
    }
    return LoadGraphText(*bytes, label, limits, devices);
  }
  if (IsTfGraphFile(path)) return LoadTfGraph(path, import);
  if (!exists) return LoadGraphFile(path, limits, devices);
  TFRUN_ASSIGN_OR_RETURN(const YamlDocument doc, ReadGraphYaml(path, limits));
  if (doc.root().IsMap() && doc.root()["graph_def"]) return LoadWrapper(doc, path, import);
  return LoadGraphDocument(doc, path, limits, devices);
}

}  // namespace tfrun
