#include "core/graph_file/keras_program.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace tfrun {
namespace {

const std::vector<std::string> kKerasKeys = {"strategy", "input_shape", "layers", "compile"};
const std::vector<std::string> kCompileKeys = {"loss", "optimizer"};
// What keras_build.cc was checked against TensorFlow 2.21 for: compile
// makes the same variables for each (the optimizer's iterations and
// learning rate, the loss tracker's total and count).
const std::vector<std::string> kLosses = {"mse", "mae", "mean_squared_error", "mean_absolute_error"};
const std::vector<std::string> kOptimizers = {"SGD", "Adam"};
// tf.config.list_logical_devices(TYPE); XLA_CPU and XLA_GPU exist under
// TF_XLA_FLAGS=--tf_xla_enable_xla_devices.
const std::vector<std::string> kStrategyDeviceTypes = {"GPU", "CPU", "XLA_CPU", "XLA_GPU"};
constexpr int64_t kMaxLayers = 1000;
constexpr int64_t kMaxUnits = int64_t{1} << 31;

bool OneOf(std::string_view value, const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (a == value) return true;
  }
  return false;
}

// `{NAME: VALUE}` with one key: the key, and VALUE in `value`.
Status ReadOneKeyMap(const FieldReader& fields, const YamlNode& n, std::string_view what, std::string* key,
                     YamlNode* value) {
  if (!n.IsMap() || n.size() != 1) return fields.ErrorAt(n, fmt::format("{} is a mapping with one key", what));
  for (const YamlNode::Pair& pair : n.Pairs()) {
    *key = pair.key.ScalarString();
    *value = pair.value;
  }
  return Status::Ok();
}

Status ReadStrategy(const FieldReader& fields, const YamlNode& n, Graph::KerasProgram* program) {
  std::string name;
  YamlNode type;
  TFRUN_RETURN_IF_ERROR(ReadOneKeyMap(fields, n, "strategy (such as {MirroredStrategy: GPU})", &name, &type));
  if (name != "MirroredStrategy") {
    return fields.ErrorAt(n, fmt::format("strategy '{}': tfrun runs Keras programs under MirroredStrategy",
                                         ClipForMessage(name)));
  }
  if (!type.IsScalar() || !OneOf(type.Scalar(), kStrategyDeviceTypes)) {
    return fields.ErrorAt(type, fmt::format("MirroredStrategy mirrors over the logical devices of a type: one of {}",
                                            fmt::join(kStrategyDeviceTypes, ", ")));
  }
  program->strategy_device_type = type.ScalarString();
  return Status::Ok();
}

Status ReadLayers(const FieldReader& fields, const YamlNode& n, Graph::KerasProgram* program) {
  if (!n.IsSequence() || n.size() == 0) return fields.ErrorAt(n, "layers is a list such as [{Dense: 1}]");
  if (static_cast<int64_t>(n.size()) > kMaxLayers) {
    return fields.ErrorAt(n, fmt::format("more than {} layers", kMaxLayers));
  }
  for (const YamlNode& entry : n.Elements()) {
    std::string kind;
    YamlNode spec;
    TFRUN_RETURN_IF_ERROR(ReadOneKeyMap(fields, entry, "a layer (such as {Dense: 1})", &kind, &spec));
    if (kind != "Dense") {
      return fields.ErrorAt(entry, fmt::format("layer '{}': tfrun builds Dense layers", ClipForMessage(kind)));
    }
    Graph::KerasProgram::Dense dense;
    if (spec.IsMap()) {  // {Dense: {units: 4, use_bias: false}}
      TFRUN_RETURN_IF_ERROR(fields.CheckKeys(spec, {"units", "use_bias"}, "Dense"));
      if (!spec["units"]) return fields.ErrorAt(spec, "Dense needs units");
      TFRUN_RETURN_IF_ERROR(fields.ReadInt(spec["units"], "units", 1, kMaxUnits, &dense.units));
      if (const YamlNode b = spec["use_bias"]) TFRUN_RETURN_IF_ERROR(fields.ReadBool(b, "use_bias", &dense.use_bias));
    } else {
      TFRUN_RETURN_IF_ERROR(fields.ReadInt(spec, "units", 1, kMaxUnits, &dense.units));
    }
    program->layers.push_back(dense);
  }
  return Status::Ok();
}

Status ReadCompile(const FieldReader& fields, const YamlNode& n, Graph::KerasProgram* program) {
  if (!n.IsMap()) return fields.ErrorAt(n, "compile is a mapping such as {loss: mse, optimizer: SGD}");
  TFRUN_RETURN_IF_ERROR(fields.CheckKeys(n, kCompileKeys, "compile"));
  const YamlNode loss = n["loss"];
  if (!loss || !loss.IsScalar() || !OneOf(loss.Scalar(), kLosses)) {
    return fields.ErrorAt(loss ? loss : n, fmt::format("compile needs a loss: one of {}", fmt::join(kLosses, ", ")));
  }
  program->loss = loss.ScalarString();
  const YamlNode optimizer = n["optimizer"];
  if (!optimizer) return fields.ErrorAt(n, "compile needs an optimizer");
  if (optimizer.IsScalar()) {
    program->optimizer = optimizer.ScalarString();
  } else {  // {SGD: {learning_rate: 0.2}}: the build is the same for any arguments
    YamlNode arguments;
    TFRUN_RETURN_IF_ERROR(ReadOneKeyMap(fields, optimizer, "optimizer", &program->optimizer, &arguments));
    if (!arguments.IsMap() && !arguments.IsNull()) {
      return fields.ErrorAt(arguments, "an optimizer's arguments are a mapping such as {learning_rate: 0.2}");
    }
    if (arguments.IsMap()) {
      TFRUN_RETURN_IF_ERROR(fields.CheckKeys(arguments, {"learning_rate", "momentum"}, program->optimizer));
      for (const YamlNode::Pair& pair : arguments.Pairs()) {
        double value = 0;
        TFRUN_RETURN_IF_ERROR(fields.ReadDouble(pair.value, pair.key.Scalar(), &value));
      }
    }
  }
  if (!OneOf(program->optimizer, kOptimizers)) {
    return fields.ErrorAt(optimizer, fmt::format("optimizer '{}': one of {}", ClipForMessage(program->optimizer),
                                                 fmt::join(kOptimizers, ", ")));
  }
  return Status::Ok();
}

}  // namespace

Status ReadKerasProgram(const FieldReader& fields, const YamlNode& node, Graph::KerasProgram* program) {
  if (!node.IsMap()) return fields.ErrorAt(node, "keras is a mapping with strategy, input_shape, layers and compile");
  TFRUN_RETURN_IF_ERROR(fields.CheckKeys(node, kKerasKeys, "keras"));
  for (const std::string& key : kKerasKeys) {
    if (!node[key]) return fields.ErrorAt(node, fmt::format("keras needs {}", key));
  }
  TFRUN_RETURN_IF_ERROR(ReadStrategy(fields, node["strategy"], program));
  const YamlNode shape = node["input_shape"];
  if (!shape.IsSequence()) return fields.ErrorAt(shape, "input_shape is a list such as [1]");
  for (const YamlNode& dim : shape.Elements()) {
    int64_t d = 0;
    TFRUN_RETURN_IF_ERROR(fields.ReadInt(dim, "a dimension of input_shape", 1, kMaxUnits, &d));
    program->input_shape.push_back(d);
  }
  if (program->input_shape.size() != 1) {
    return fields.ErrorAt(shape, "input_shape has one dimension: tfrun builds Dense layers on a vector input");
  }
  TFRUN_RETURN_IF_ERROR(ReadLayers(fields, node["layers"], program));
  TFRUN_RETURN_IF_ERROR(ReadCompile(fields, node["compile"], program));
  program->present = true;
  return Status::Ok();
}

}  // namespace tfrun
