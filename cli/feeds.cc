#include "cli/feeds.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <set>

#include "core/base/npy.h"
#include "core/graph_file/tensor_literal.h"
#include "core/graph_file/yaml_document.h"
#include "core/graph_file/yaml_fields.h"
#include "core/tables/tf_tables.h"
#include "kernels/cpu/cpu_kernels.h"

namespace tfrun {
namespace {

// The first element of a literal that Python holds as a str: quoted, or a
// plain word that is no YAML number (nullopt when there is none).
std::optional<std::string> FirstWord(const YamlNode& value) {
  if (value.IsSequence()) {
    for (const YamlNode& e : value.Elements()) {
      if (std::optional<std::string> w = FirstWord(e)) return w;
    }
    return std::nullopt;
  }
  if (!value.IsScalar()) return std::nullopt;
  const std::string text = value.ScalarString();
  static const std::set<std::string> kYamlNumbers = {".inf", "-.inf", "+.inf", ".Inf", "-.Inf", ".INF", "-.INF",
                                                      ".nan", ".NaN", ".NAN", "true", "false", "True", "False"};
  if (!value.IsQuoted() && kYamlNumbers.count(text) != 0) return std::nullopt;
  char* end = nullptr;
  if (!value.IsQuoted() && !text.empty()) {
    std::strtod(text.c_str(), &end);
    if (*end == '\0') return std::nullopt;
  }
  return text;
}

// NumPy's words for asarray(a list holding `word`, dtype): what feed_dict
// raises. NumPy 2 (TF 2.21's) writes the element as np.str_('a').
std::string NotANumber(const std::string& word, DType dtype, const CompatProfile& profile) {
  const std::string shown = profile.feed_errors_quoted ? fmt::format("'{}'", word) : fmt::format("np.str_('{}')", word);
  if (Info(dtype).is_integer) return fmt::format("ValueError: invalid literal for int() with base 10: '{}'", word);
  if (dtype == DType::kBool) return fmt::format("ValueError: a string cannot be fed to a bool tensor ({})", shown);
  return "ValueError: could not convert string to float: " + shown;
}

// The value after '=': @FILE.npy, or a literal in the graph format's value
// syntax, read as the tensor's dtype (the dtype feed_dict converts to).
StatusOr<Tensor> ReadFedValue(const std::string& flag, const std::string& text, const Node& node, DType dtype,
                              int64_t limit, const CompatProfile& profile) {
  if (!text.empty() && text[0] == '@') {
    StatusOr<Tensor> read = ReadNpy(text.substr(1));
    if (!read.ok()) return BadInput(fmt::format("{}: {}", flag, read.status().message()));
    return read;
  }
  if (text.empty()) return BadInput(fmt::format("{}: no value after '=' (NAME=@FILE.npy or NAME=VALUE)", flag));
  // Errors inside the literal are located in it: "--feed x (value):1:5".
  const std::string label = flag + " (value)";
  TFRUN_ASSIGN_OR_RETURN(const YamlDocument doc, ParseYaml(text, label));
  const YamlNode value = doc.root();
  if (value.IsMap() || value.IsNull()) {
    return BadInput(fmt::format("{}: the value must be a number, a string or a nested list, e.g. [[1, 2, 3]]", flag));
  }
  if (dtype != DType::kString) {
    if (std::optional<std::string> word = FirstWord(value)) {
      return BadInput(fmt::format("{}: {}", flag, NotANumber(*word, dtype, profile)));
    }
  }
  FieldReader fields(label);
  TensorLiteralReader literals(fields, "", limit);
  Node read;
  TFRUN_RETURN_IF_ERROR(literals.ReadValue(value, node.name, dtype, &read));
  return read.value;
}

// TensorShape's str() as session.py formats it into its message: %r of
// str() in TF 1.x ('(?, 3)'), the f-string's str() in TF 2 ((None, 3)).
std::string FeedShapeError(const Shape& given, const std::string& tensor, const Node& node,
                           const CompatProfile& profile) {
  const std::string value_shape = ShapeTupleString(given);
  if (profile.feed_errors_quoted) {
    return fmt::format("ValueError: Cannot feed value of shape {} for Tensor '{}', which has shape '{}'", value_shape,
                       tensor, ShapeTupleString(node.shape, node.unknown_rank, "?"));
  }
  return fmt::format("ValueError: Cannot feed value of shape {} for Tensor {}, which has shape {}", value_shape,
                     tensor, ShapeTupleString(node.shape, node.unknown_rank, "None"));
}

// A call's resource argument: the dtype its function reads or writes the
// variable as (a ReadVariableOp's output, an Assign*VariableOp's dtype),
// through the identities the call's inlining adds; nullopt where nothing
// says (an ordering token only a collective reads).
std::optional<DType> VariableArgDType(const Graph& graph, const Node& arg) {
  std::vector<int> stack(arg.consumers.begin(), arg.consumers.end());
  std::set<int> seen;
  while (!stack.empty()) {
    const Node& n = graph.nodes[stack.back()];
    stack.pop_back();
    if (!seen.insert(n.id).second) continue;
    if (n.op == "Identity") {
      stack.insert(stack.end(), n.consumers.begin(), n.consumers.end());
    } else if (n.op == "ReadVariableOp") {
      return n.dtype;
    } else if (n.op == "AssignVariableOp" || n.op == "AssignAddVariableOp" || n.op == "AssignSubVariableOp") {
      std::string type = graph.AttrText(n, "dtype");
      if (type.rfind("DT_", 0) == 0) type = type.substr(3);
      if (std::optional<DType> dtype = DTypeOfTableType(type)) return dtype;
    }
  }
  return std::nullopt;
}

}  // namespace

StatusOr<std::vector<Feed>> ResolveFeeds(const std::vector<std::string>& specs, const Graph& graph,
                                         const CompatProfile& profile, int64_t limit) {
  std::vector<Feed> feeds;
  if (specs.empty()) return feeds;
  if (profile.execution == ExecutionModel::kEager) {
    return BadInput("--feed: TF 2 eager has no feed_dict (a Placeholder needs a session: --compat tf2, tf1 or tf0)");
  }
  std::set<std::pair<int, int>> fed;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return BadInput(fmt::format("--feed {}: expected NAME=@FILE.npy or NAME=VALUE", spec));
    }
    const std::string name = spec.substr(0, eq);
    const std::string flag = "--feed " + name;
    StatusOr<NodeOutput> output = graph.FindOutput(name, "TypeError: Cannot interpret feed_dict key as Tensor");
    if (!output.ok()) return BadInput(fmt::format("{}: {}", flag, output.status().message()));
    if (!fed.emplace(output->node, output->index).second) return BadInput(fmt::format("{}: fed twice", flag));
    const Node& node = graph.nodes[output->node];
    const std::string tensor = graph.OutputName(*output, false);
    // session.py has no NumPy value for a resource handle (it fails with a
    // KeyError of its own); tfrun's handles are not the user's to make.
    // The output's own dtype: a dequeue's components differ from each
    // other (and from the node's first output).
    std::optional<DType> dtype = graph.OutputDType(*output);
    if ((node.op == "_Arg" || node.op == "_DeviceArg") && graph.OutputTypeString(*output) == "resource") {
      // A call's captured variable: the value it holds when the call
      // starts (Session makes the variable), in the dtype the function
      // reads it as; where nothing says, as given (a literal: float32).
      const std::optional<DType> read_as = VariableArgDType(graph, node);
      TFRUN_ASSIGN_OR_RETURN(Tensor value, ReadFedValue(flag, spec.substr(eq + 1), node,
                                                        read_as.value_or(DType::kFloat32), limit, profile));
      if (read_as) {
        TFRUN_ASSIGN_OR_RETURN(value, CastOnHost(value, *read_as));
      }
      feeds.push_back({*output, std::move(value)});
      continue;
    }
    if (!dtype || (output->index == 0 && *dtype != node.dtype)) {
      return BadInput(fmt::format("{}: {} is a {} tensor, which a feed cannot give a value (feed a tensor it "
                                  "computes from instead)",
                                  flag, tensor, graph.OutputTypeString(*output)));
    }
    TFRUN_ASSIGN_OR_RETURN(Tensor value, ReadFedValue(flag, spec.substr(eq + 1), node, *dtype, limit, profile));
    if ((value.dtype() == DType::kString) != (*dtype == DType::kString)) {
      return BadInput(fmt::format("{}: ValueError: a {} value cannot be fed to {}, a {} tensor", flag,
                                  Name(value.dtype()), tensor, Name(*dtype)));
    }
    TFRUN_ASSIGN_OR_RETURN(value, CastOnHost(value, *dtype));
    // The node's static shape is its first output's.
    if (output->index == 0 && !IsCompatible(node.shape, node.unknown_rank, value.shape())) {
      return BadInput(fmt::format("{}: {}", flag, FeedShapeError(value.shape(), tensor, node, profile)));
    }
    feeds.push_back({*output, std::move(value)});
  }
  return feeds;
}

}  // namespace tfrun
