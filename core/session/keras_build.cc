#include "core/session/keras_build.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include "core/base/device_types.h"
#include "core/graph_def/function_defs.h"
#include "core/graph_def/graph_def_export.h"
#include "core/passes/pin_args_and_rets.h"
#include "core/placement/placement_log.h"
#include "core/placement/placer.h"

namespace tfrun {
namespace {

// The ops of a build, on the strategy's devices: d0 is the first replica
// (where mirrored variables are made and initialised), `host` the eager
// default device (the first GPU, else CPU:0), where what Python runs
// outside any device scope goes.
class BuildOps {
 public:
  BuildOps(const DeviceSet& devices, std::vector<int> replicas, int host)
      : devices_(devices), replicas_(std::move(replicas)), host_(host) {}

  std::vector<EagerOpCall> Take() { return std::move(ops_); }
  int d0() const { return replicas_[0]; }
  int host() const { return host_; }

  void Add(const char* op, int device, NodeAttrs attrs = {}, std::string resource = "") {
    ops_.push_back({op, device, std::move(attrs), std::move(resource)});
  }
  static NodeAttrs Typed(const char* attr, const std::string& type) { return {{attr, AttrValue{"type", {type}}}}; }

  // A Python value (a number, a list) made a tensor (pywrap_tensor.cc
  // ConvertToEagerTensor) under `scope`'s device scope, or under none
  // (kNoScope: eager's default device): it is made on the host, then
  // _EagerConst copies it to the device, except under CPU:0's scope, where
  // it already is. A Python scalar made before with the same value, dtype
  // and device comes from the eager context's cache: nothing runs.
  // `scalar`: the scalar's value as text, "" for a list.
  static constexpr int kNoScope = -1;
  void PythonValue(int scope, const std::string& type, const std::string& scalar = "") {
    if (scope != kNoScope && devices_[scope].name == devices_[0].name) return;
    const int device = scope == kNoScope ? host_ : scope;
    if (!scalar.empty() && !cached_scalars_.insert(fmt::format("{}|{}|{}", scalar, type, device)).second) return;
    Add("_EagerConst", device, Typed("T", type));
  }

  // ResourceVariable(initial_value) on `device`: the handle, then the
  // assignment of a value already on the device. The handle's debug_name
  // (the variable's name and "/") is one of its attrs: eager instantiates
  // a wrapper for each new name.
  void Variable(int device, const std::string& type, const Shape& shape, const std::string& debug_name) {
    NodeAttrs attrs = Typed("dtype", type);
    attrs["shape"] = AttrValue{"shape", {ShapeAttr(shape)}};
    attrs["debug_name"] = AttrValue{"string", {debug_name}};
    Add("VarHandleOp", device, std::move(attrs));
    Add("AssignVariableOp", device, Typed("dtype", type), Resource(type, shape));
  }

  // distribute_utils' mirrored variable (MirroredStrategy's creator): the
  // primary on d0 from the initializer's value (already run on d0), each
  // other replica's from the primary's value read and copied with Identity
  // (mirrored_strategy.py _real_mirrored_creator), then the creator's
  // control-dependency groups: one NoOp per replica on the default device.
  // Replica k's copy is named NAME/replica_k.
  void MirroredVariable(const std::string& type, const Shape& shape, const std::string& name) {
    Variable(d0(), type, shape, name + "/");
    for (size_t k = 1; k < replicas_.size(); ++k) {
      Add("ReadVariableOp", d0(), Typed("dtype", type), Resource(type, shape));
      Add("Identity", replicas_[k], Typed("T", type));
      Variable(replicas_[k], type, shape, fmt::format("{}/replica_{}/", name, k));
    }
    for (size_t k = 0; k < replicas_.size(); ++k) Add("NoOp", host());
  }

  // A variable each replica initialises from a Python value of its own (no
  // copies, no groups): MirroredStrategy's own, made by its constructor.
  void ReplicaLocalVariable(const std::string& type, const Shape& shape, const std::string& name) {
    for (size_t k = 0; k < replicas_.size(); ++k) {
      PythonValue(replicas_[k], type);
      Variable(replicas_[k], type, shape, k == 0 ? name + "/" : fmt::format("{}/replica_{}/", name, k));
    }
  }

  // Python's `value` under d0's scope as a mirrored variable (a counter).
  void MirroredScalar(const std::string& type, const std::string& value, const std::string& name) {
    PythonValue(d0(), type, value);
    MirroredVariable(type, Shape{}, name);
  }

  // The zeros initializer under d0's scope: tf.zeros(shape), a Fill of the
  // shape (a list) and 0.0.
  void Zeros(const Shape& shape, const std::string& name) {
    PythonValue(d0(), "INT32");
    PythonValue(d0(), "FLOAT", "0.0");
    NodeAttrs attrs = Typed("T", "FLOAT");
    attrs["index_type"] = AttrValue{"type", {"INT32"}};
    Add("Fill", d0(), std::move(attrs));
    MirroredVariable("FLOAT", shape, name);
  }

  // The Glorot-uniform kernel of a Dense layer (VarianceScaling, fan_avg:
  // limit = sqrt(3 / max(1, (fan_in + fan_out) / 2))) drawn by
  // stateless_random_ops.py stateless_random_uniform under d0's scope: the
  // seed (a list, already folded to int32 where Keras 3 folds it), -limit
  // and limit, the shape, the seed's key and counter, the algorithm, the
  // draw, then (maxval - minval) * draw + minval.
  void GlorotKernel(const Shape& shape, bool fold_seed, const std::string& name) {
    PythonValue(d0(), "INT32");
    if (fold_seed) {  // keras/src/backend/tensorflow/random.py _cast_seed
      Cast(d0(), "INT32", "INT64");
      PythonValue(d0(), "INT64", "2147483646");
      Add("FloorMod", d0(), Typed("T", "INT64"));
      Cast(d0(), "INT64", "INT32");
    }
    const double scale = 1.0 / std::max(1.0, static_cast<double>(shape[0] + shape[1]) / 2.0);
    const double limit = std::sqrt(3.0 * scale);
    PythonValue(d0(), "FLOAT", fmt::format("{:.17g}", -limit));
    PythonValue(d0(), "FLOAT", fmt::format("{:.17g}", limit));
    PythonValue(d0(), "INT32");
    Add("StatelessRandomGetKeyCounter", d0(), Typed("Tseed", "INT32"));
    PythonValue(d0(), "INT32", "algorithm");
    NodeAttrs draw = Typed("dtype", "FLOAT");
    draw["Tshape"] = AttrValue{"type", {"INT32"}};
    Add("StatelessRandomUniformV2", d0(), std::move(draw));
    for (const char* op : {"Sub", "Mul", "AddV2"}) Add(op, d0(), Typed("T", "FLOAT"));
    MirroredVariable("FLOAT", shape, name);
  }

  void Cast(int device, const char* from, const char* to) {
    NodeAttrs attrs = Typed("SrcT", from);
    attrs["DstT"] = AttrValue{"type", {to}};
    Add("Cast", device, std::move(attrs));
  }

 private:
  static std::string ShapeAttr(const Shape& shape) {
    std::vector<std::string> dims;
    for (int64_t d : shape) dims.push_back(std::to_string(d));
    return fmt::format("({})", fmt::join(dims, "x"));
  }
  static std::string Resource(const std::string& type, const Shape& shape) { return type + ShapeAttr(shape); }

  const DeviceSet& devices_;
  std::vector<int> replicas_;
  int host_;
  std::vector<EagerOpCall> ops_;
  std::set<std::string> cached_scalars_;  // "value|type|device"
};

// Keras' automatic layer names: dense, dense_1, dense_2, ...
std::string DenseLayerName(size_t i) { return i == 0 ? std::string("dense") : fmt::format("dense_{}", i); }

// Each Dense layer's kernel, then its bias (zeros).
void DenseLayers(const Graph::KerasProgram& program, bool fold_seed, BuildOps* ops) {
  int64_t inputs = program.input_shape[0];
  for (size_t i = 0; i < program.layers.size(); ++i) {
    const Graph::KerasProgram::Dense& dense = program.layers[i];
    const std::string layer = DenseLayerName(i);
    ops->GlorotKernel(Shape{inputs, dense.units}, fold_seed, layer + "/kernel");
    if (dense.use_bias) ops->Zeros(Shape{dense.units}, layer + "/bias");
    inputs = dense.units;
  }
}

// Keras 3.15's build and compile (TensorFlow backend): the layers (the seed
// folded); compile's optimizer variables, made outside d0's scope
// (iterations from a Python 0 cast to int64, the learning rate from a
// Python float), and the loss tracker's total and count.
void Keras3Build(const Graph::KerasProgram& program, BuildOps* ops) {
  DenseLayers(program, /*fold_seed=*/true, ops);
  // The optimizer is named after its class, lower-cased: sgd, adam.
  std::string optimizer = program.optimizer;
  for (char& c : optimizer) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  ops->PythonValue(BuildOps::kNoScope, "INT32", "0");
  ops->Cast(ops->host(), "INT32", "INT64");
  ops->MirroredVariable("INT64", Shape{}, optimizer + "/iteration");
  ops->PythonValue(BuildOps::kNoScope, "FLOAT", "learning_rate");
  ops->MirroredVariable("FLOAT", Shape{}, optimizer + "/learning_rate");
  for (const char* tracker_variable : {"loss/total", "loss/count"}) ops->Zeros(Shape{}, tracker_variable);
}

// tf_keras 2.21's: the layers (the seed drawn as int32 already); compile's
// three int64 counters (0), the optimizer's iteration (0) and learning
// rate, the loss metric's total and count, and steps_per_execution (1).
void Keras2Build(const Graph::KerasProgram& program, BuildOps* ops) {
  DenseLayers(program, /*fold_seed=*/false, ops);
  for (int counter = 0; counter < 3; ++counter) ops->MirroredScalar("INT64", "0", "Variable");
  ops->MirroredScalar("INT64", "0", "iteration");
  ops->MirroredScalar("FLOAT", "learning_rate", "learning_rate");
  for (const char* metric_variable : {"total", "count"}) ops->Zeros(Shape{}, metric_variable);
  ops->MirroredScalar("INT64", "1", "Variable");
}

// IntArgsAndRetvalsOnDevice (execute.cc): whether the wrapper keeps int32
// arguments and results in device memory (_DeviceArg, _DeviceRetval): not
// for _EagerConst, nor where the kernel pins an output to host memory.
bool IntsOnDevice(const TfOpDef& def, const TfKernelDef* kernel) {
  if (def.name == "_EagerConst" || kernel == nullptr) return false;
  for (std::string_view host : kernel->host_memory_args) {
    for (const TfArgDef& out : def.outputs) {
      if (out.name == host) return false;
    }
  }
  return true;
}

// The wrapper's arguments or results (BuildWrappedOpSignature): the OpDef's,
// a list flattened to NAME_i, other names with each '_' doubled
// (EscapeOrigName), each of its resolved type.
Status AddWrapperArgs(const std::vector<TfArgDef>& args, const NodeAttrs& attrs,
                      google::protobuf::RepeatedPtrField<tfproto::ArgDef>* out,
                      std::vector<std::string>* names_in_op) {
  for (const TfArgDef& arg : args) {
    auto type_of = [&](std::string_view attr, size_t i) -> std::string {
      auto it = attrs.find(attr);
      return it == attrs.end() || it->second.items.size() <= i ? std::string() : it->second.items[i];
    };
    size_t count = 1;
    if (!arg.number_attr.empty()) count = std::strtoul(type_of(arg.number_attr, 0).c_str(), nullptr, 10);
    if (!arg.type_list_attr.empty()) {
      auto it = attrs.find(arg.type_list_attr);
      count = it == attrs.end() ? 0 : it->second.items.size();
    }
    const bool list = !arg.number_attr.empty() || !arg.type_list_attr.empty();
    for (size_t i = 0; i < count; ++i) {
      std::string type = !arg.type.empty() ? std::string(arg.type)
                         : !arg.type_list_attr.empty() ? type_of(arg.type_list_attr, i)
                                                        : type_of(arg.type_attr, 0);
      tfproto::DataType dtype;
      if (type.empty() || !tfproto::DataType_Parse("DT_" + type, &dtype)) {
        return RuntimeError(fmt::format("no type for argument {} of a wrapped op", arg.name));
      }
      tfproto::ArgDef* def = out->Add();
      std::string name(arg.name);
      if (list) {
        name = fmt::format("{}_{}", name, i);
      } else {
        std::string escaped;
        for (char c : name) escaped += c == '_' ? std::string("__") : std::string(1, c);
        name = escaped;
      }
      def->set_name(name);
      def->set_type(dtype);
      names_in_op->push_back(list ? fmt::format("{}:{}", arg.name, i) : std::string(arg.name) + ":0");
    }
  }
  return Status::Ok();
}

// Eager's function for one op on one device (WrapInCallOp): the op as its
// one node, every argument an _Arg, every result a _Retval.
// `inputs`: the OpDef argument each of the wrapper's arguments is ("shape:0").
StatusOr<tfproto::FunctionDef> WrapperDef(const TfOpDef& def, const NodeAttrs& attrs, const std::string& device,
                                          bool ints_on_device, std::vector<std::string>* inputs_out) {
  tfproto::FunctionDef fdef;
  tfproto::OpDef* signature = fdef.mutable_signature();
  signature->set_name(fmt::format("__wrapped__{}_device_{}", def.name, device));
  std::vector<std::string>& inputs = *inputs_out;
  std::vector<std::string> outputs;
  TFRUN_RETURN_IF_ERROR(AddWrapperArgs(def.inputs, attrs, signature->mutable_input_arg(), &inputs));
  TFRUN_RETURN_IF_ERROR(AddWrapperArgs(def.outputs, attrs, signature->mutable_output_arg(), &outputs));
  tfproto::NodeDef* node = fdef.add_node_def();
  node->set_name(std::string(def.name));
  node->set_op(std::string(def.name));
  node->set_device(device);
  for (const auto& arg : signature->input_arg()) node->add_input(arg.name());
  for (const auto& [name, value] : attrs) TFRUN_RETURN_IF_ERROR(TableAttrToProto(value, &(*node->mutable_attr())[name]));
  for (int i = 0; i < signature->output_arg_size(); ++i) {
    (*fdef.mutable_ret())[signature->output_arg(i).name()] = fmt::format("{}:{}", def.name, outputs[i]);
  }
  (*fdef.mutable_attr())["experimental_ints_on_device"].set_b(ints_on_device);
  return fdef;
}

std::string WrapperKey(const EagerOpCall& op, const std::string& device) {
  std::string key = op.op + "|" + device + "|" + op.resource;
  for (const auto& [name, value] : op.attrs) key += fmt::format("|{}={}", name, fmt::join(value.items, ","));
  return key;
}

}  // namespace

KerasBuild BuildKerasProgram(const Graph::KerasProgram& program, KerasVersion version, const DeviceSet& devices) {
  KerasBuild build;
  // tf.config.list_logical_devices(TYPE): the type's devices by id.
  auto logical_devices = [&devices](std::string_view type) {
    std::vector<int> found;
    for (int i = 0; i < devices.size(); ++i) {
      if (devices[i].type == type && !devices[i].remote) found.push_back(i);
    }
    return found;
  };
  build.replicas = logical_devices(program.strategy_device_type);
  // MirroredStrategy([]) (no device of the type here) mirrors over the
  // local devices instead: the GPUs, else the CPUs
  // (mirrored_strategy.py all_local_devices).
  if (build.replicas.empty()) build.replicas = logical_devices(kGpu);
  if (build.replicas.empty()) build.replicas = logical_devices(kCpu);
  // Eager's default device: the first GPU where there is one, else CPU:0.
  const std::vector<int> gpus = logical_devices(kGpu);
  BuildOps ops(devices, build.replicas, gpus.empty() ? 0 : gpus[0]);
  // MirroredStrategy's constructor makes a float variable on each replica.
  ops.ReplicaLocalVariable("FLOAT", Shape{}, "Variable");
  if (version == KerasVersion::kKeras3) {
    Keras3Build(program, &ops);
  } else {
    Keras2Build(program, &ops);
  }
  build.ops = ops.Take();
  return build;
}

std::string MirroredStrategyInfoLine(const std::vector<int>& replicas, const DeviceSet& devices) {
  std::vector<std::string> names;
  for (int r : replicas) names.push_back(fmt::format("'{}'", devices[r].name));
  // A one-element Python tuple prints its trailing comma.
  return fmt::format("INFO:tensorflow:Using MirroredStrategy with devices ({}{})\n", fmt::join(names, ", "),
                     names.size() == 1 ? "," : "");
}

StatusOr<std::string> EagerOpLog::Execute(const EagerOpCall& op) {
  const std::string& device = devices_[op.device].name;
  std::string text;
  if (instantiated_.insert(WrapperKey(op, device)).second) {
    const TfOpDef* def = FindTfOp(op.op);
    if (def == nullptr) return RuntimeError(fmt::format("a Keras build runs {}, which the tables lack", op.op));
    NodeAttrs attrs = op.attrs;
    AddDefaultAttrs(*def, &attrs);
    TFRUN_ASSIGN_OR_RETURN(const TfKernelDef* kernel,
                           FindKernelDef(*def, devices_[op.device].type, attrs, devices_.HasXlaDevices()));
    std::vector<std::string> inputs;
    TFRUN_ASSIGN_OR_RETURN(tfproto::FunctionDef fdef,
                           WrapperDef(*def, attrs, device, IntsOnDevice(*def, kernel), &inputs));
    tfproto::FunctionDefLibrary library;
    *library.add_function() = fdef;
    TFRUN_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionLibrary> functions, MakeFunctionLibrary(library, path_));
    TFRUN_ASSIGN_OR_RETURN(FunctionBody body, functions->Instantiate(fdef.signature().name()));
    // The function runtime places it for the op's device; eager has
    // copied every input there first, or to the host where the kernel
    // reads it from host memory (a GPU's shape arguments; measured on
    // XLA_CPU, whose kernels read them so too).
    // A resource handle is never copied: it stays on its resource's device.
    std::vector<std::string> arg_devices(body.args.size(), device);
    if (devices_[op.device].type != kCpu && kernel != nullptr) {
      for (size_t i = 0; i < inputs.size() && i < arg_devices.size(); ++i) {
        if (fdef.signature().input_arg(static_cast<int>(i)).type() == tfproto::DT_RESOURCE) continue;
        const std::string arg = inputs[i].substr(0, inputs[i].find(':'));
        const auto& host = kernel->host_memory_args;
        if (std::find(host.begin(), host.end(), arg) != host.end()) arg_devices[i] = devices_[0].name;
      }
    }
    Graph wrapper = std::move(body.graph);
    wrapper.path = path_;
    wrapper.source = GraphSource::kTensorFlow;
    wrapper.functions = functions;
    wrapper.call.function = fdef.signature().name();
    wrapper.call.device = device;
    PinArgsAndRets(&wrapper, arg_devices);
    const CompatProfile& profile = *FindProfile("tf2");
    Placement placement;
    TFRUN_RETURN_IF_ERROR(PlaceGraph(wrapper, devices_, /*allow_soft_placement=*/true, profile, &placement, {}, device));
    text += PlacementLines(wrapper, devices_, placement, profile);
  }
  text += fmt::format("Executing op {} in device {}\n", op.op, device);
  return text;
}

}  // namespace tfrun
