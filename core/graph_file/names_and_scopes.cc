#include "core/graph_file/names_and_scopes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tfrun {
namespace {

const std::vector<std::string> kScopeKeys = {"device", "name_scope", "colocate_with", "for_each_device", "nodes"};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool IsValidNodeName(std::string_view s, bool allow_leading_underscore) {
  if (s.empty()) return false;
  char c0 = s[0];
  if (!(std::isalnum(static_cast<unsigned char>(c0)) || c0 == '.' || (allow_leading_underscore && c0 == '_'))) {
    return false;
  }
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/' || c == '>')) {
      return false;
    }
  }
  return true;
}

std::string UniqueNamer::Unique(const std::string& name) {
  std::string key = Lower(name);
  int i = names_in_use_[key]++;
  if (i == 0) return name;
  const std::string base_key = key;
  int& scan_from = scan_from_[base_key];
  i = std::max(i, scan_from);
  while (names_in_use_.Contains(key)) {
    key = fmt::format("{}_{}", base_key, i);
    ++i;
  }
  scan_from = i;
  names_in_use_[key] = 1;
  return fmt::format("{}_{}", name, i - 1);
}

Status ScopeReader::MergeDevice(const YamlNode& d, const Scope& outer, Scope* inner,
                                std::string_view node_name) const {
  if (!d.IsScalar()) return fields_.FieldError(d, node_name, "device must be a string such as /gpu:0");
  const std::string_view text = d.Scalar();
  if (text.empty()) {  // tf.device(None): clears the annotation
    inner->device = DeviceSpec();
    inner->device_text.clear();
    return Status::Ok();
  }
  StatusOr<DeviceSpec> spec = DeviceSpec::Parse(text);
  if (!spec.ok()) return fields_.FieldError(d, node_name, spec.status().message());
  inner->device = spec->MergedOver(outer.device);
  inner->device_text = std::string(text);
  return Status::Ok();
}

Status ScopeReader::EnterColocation(const YamlNode& c, const Graph& graph, Scope* scope,
                                    std::string_view node_name) const {
  if (!c.IsScalar()) return fields_.FieldError(c, node_name, "colocate_with must be a node name");
  const Node* target = graph.Find(c.ScalarString());
  if (target == nullptr) {
    return fields_.FieldError(c, node_name,
                              fmt::format("colocate_with '{}' names no earlier node", ClipForMessage(c.Scalar())));
  }
  scope->colocate_with.push_back(target->id);
  scope->device = DeviceSpec();
  scope->device_text.clear();
  return Status::Ok();
}

StatusOr<Scope> ScopeReader::Enter(const YamlNode& entry, const Scope& outer, const Graph& graph) const {
  TFRUN_RETURN_IF_ERROR(fields_.CheckKeys(entry, kScopeKeys, "a scope"));
  Scope scope = outer;
  if (const YamlNode c = entry["colocate_with"]) TFRUN_RETURN_IF_ERROR(EnterColocation(c, graph, &scope, ""));
  if (const YamlNode d = entry["device"]) TFRUN_RETURN_IF_ERROR(MergeDevice(d, Scope(scope), &scope, ""));
  if (const YamlNode ns = entry["name_scope"]) {
    if (!ns.IsScalar()) return fields_.ErrorAt(ns, "name_scope must be a string");
    if (!IsValidNodeName(ns.Scalar(), false)) {
      return fields_.ErrorAt(
          ns, fmt::format("invalid name_scope '{}' (letters, digits, '.', '_', '-', '/')", ClipForMessage(ns.Scalar())));
    }
    // tf.name_scope makes the scope name itself unique.
    scope.name_prefix = namer_->Unique(outer.name_prefix + ns.ScalarString()) + "/";
    scope.eager_prefix = outer.eager_prefix + ns.ScalarString() + "/";
  }
  return scope;
}

StatusOr<Scope> ScopeReader::ForNode(const YamlNode& entry, const Scope& scope, const std::string& node_name,
                                     const Graph& graph) const {
  Scope node_scope = scope;
  if (const YamlNode c = entry["colocate_with"]) {
    TFRUN_RETURN_IF_ERROR(EnterColocation(c, graph, &node_scope, node_name));
  }
  if (const YamlNode device = entry["device"]) {
    TFRUN_RETURN_IF_ERROR(MergeDevice(device, Scope(node_scope), &node_scope, node_name));
  }
  return node_scope;
}

std::vector<std::string> ColocationGroupsOf(const Node& node) {
  return node.colocation.empty() ? std::vector<std::string>{node.name} : node.colocation;
}

void ApplyColocation(const Graph& graph, const Scope& scope, Node* node) {
  if (scope.colocate_with.empty()) return;
  std::vector<std::string> groups;
  for (int id : scope.colocate_with) {
    for (std::string& g : ColocationGroupsOf(graph.nodes[id])) groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  node->colocation = std::move(groups);
  for (auto it = scope.colocate_with.rbegin(); it != scope.colocate_with.rend(); ++it) {
    const Node& with = graph.nodes[*it];
    if (!with.requested_device.empty()) {
      node->requested_device = with.requested_device;
      node->requested_device_text = with.requested_device_text;
      return;
    }
  }
}

}  // namespace tfrun
