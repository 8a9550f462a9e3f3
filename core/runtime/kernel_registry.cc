#include "core/runtime/kernel_registry.h"

#include "core/runtime/control_flow_kernels.h"
#include "core/runtime/collectives.h"
#include "core/runtime/list_kernels.h"
#include "core/runtime/rewrite_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tfrun {

namespace {

const AttrValue* FindAttr(const KernelContext& c, std::string_view name) {
  if (c.attrs == nullptr) return nullptr;
  const auto it = c.attrs->find(name);
  return it == c.attrs->end() || it->second.items.empty() ? nullptr : &it->second;
}

}  // namespace

int64_t KernelContext::IntAttr(std::string_view name, int64_t fallback) const {
  const AttrValue* v = FindAttr(*this, name);
  return v == nullptr ? fallback : std::strtoll(v->items[0].c_str(), nullptr, 10);
}

float KernelContext::FloatAttr(std::string_view name, float fallback) const {
  const AttrValue* v = FindAttr(*this, name);
  return v == nullptr ? fallback : std::strtof(v->items[0].c_str(), nullptr);
}

bool KernelContext::BoolAttr(std::string_view name, bool fallback) const {
  const AttrValue* v = FindAttr(*this, name);
  return v == nullptr ? fallback : v->items[0] == "true";
}

std::string KernelContext::StringAttr(std::string_view name, std::string_view fallback) const {
  const AttrValue* v = FindAttr(*this, name);
  return v == nullptr ? std::string(fallback) : v->items[0];
}

std::vector<std::string> KernelContext::ListAttrItems(std::string_view name) const {
  const AttrValue* v = FindAttr(*this, name);
  return v == nullptr ? std::vector<std::string>() : v->items;
}

std::vector<int64_t> KernelContext::IntListAttr(std::string_view name) const {
  std::vector<int64_t> values;
  if (const AttrValue* v = FindAttr(*this, name)) {
    for (const std::string& item : v->items) values.push_back(std::strtoll(item.c_str(), nullptr, 10));
  }
  return values;
}

Status ConstKernel(KernelContext& c) {
  if (c.node.value.allocator() == c.allocator) {
    c.output = c.node.value;
    return Status::Ok();
  }
  TFRUN_ASSIGN_OR_RETURN(c.output, c.device_constants->Find(c.node.id, [&] {
    return c.node.value.CopyTo(c.allocator, c.device_name);
  }));
  return Status::Ok();
}

Status PlaceholderKernel(KernelContext& c) {
  const bool shaped = !c.node.unknown_rank && !c.node.shape.empty();  // expected_shape_.dims() > 0
  return c.Fail(fmt::format("You must feed a value for placeholder tensor '{}' with dtype {}{}", c.node.name,
                            Info(c.node.dtype).tf_name,
                            shaped ? " and shape " + ShapeDebugString(c.node.shape) : ""));
}

Status IdentityKernel(KernelContext& c) {
  c.output = c.inputs[0];
  return Status::Ok();
}

// IdentityN: each input is its output (a lowered If's and an inlined
// call's name, kept fetchable).
Status IdentityNKernel(KernelContext& c) {
  if (c.inputs.size() == 1) {
    c.output = c.inputs[0];
  } else {
    c.outputs = c.inputs;
  }
  return Status::Ok();
}

Status NoOpKernel(KernelContext&) { return Status::Ok(); }

Status VariableKernel(KernelContext& c) {
  auto it = c.variables->ref.find(c.node.name);
  if (it != c.variables->ref.end()) c.output = it->second;
  return Status::Ok();
}

// The variable keeps its own copy of the value, as TensorFlow's Assign
// does when it cannot take over the input's buffer: the optimizers update
// variables in place (kernels/cpu/optimizer_kernels.cc), which must never
// reach the Const or the tensor the value came from.
Status AssignKernel(KernelContext& c) {
  // AssignOp's check, against the variable's value (TensorFlow's import
  // also checks a first assign against the declared shape, by inference).
  const Tensor& old_value = c.inputs[0];
  if (c.BoolAttr("validate_shape", true) && old_value.is_valid() && old_value.shape() != c.inputs[1].shape()) {
    return c.Fail(fmt::format("Assign requires shapes of both tensors to match. lhs shape= {} rhs shape= {}",
                              ShapeDebugString(old_value.shape()), ShapeDebugString(c.inputs[1].shape())));
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor stored, c.inputs[1].CopyTo(c.inputs[1].allocator(), c.device_name));
  c.variables->ref[c.node.variable] = stored;
  c.output = std::move(stored);
  return Status::Ok();
}

namespace {

// Element i of an integer tensor in host memory (a shape or dims input:
// HostMemory in TensorFlow's GPU kernels, so on the host everywhere).
int64_t IntAt(const Tensor& t, int64_t i) { return t.GetAsInt64(i); }

bool IsVector(const Tensor& t) { return t.rank() == 1; }

// A small input as host bytes (a seed, a key, Fill's value): copied off the
// device when it lives there.
StatusOr<Tensor> HostCopy(KernelContext& c, const Tensor& t) {
  if (t.allocator() == CpuAllocator() || t.num_elements() == 0) return t;
  return t.CopyTo(CpuAllocator(), c.device_name);
}

// A result made in host memory becomes the output in the device's memory.
Status OutputFromHost(KernelContext& c, Tensor host) {
  if (c.allocator == CpuAllocator()) {
    c.output = std::move(host);
    return Status::Ok();
  }
  TFRUN_ASSIGN_OR_RETURN(c.output, host.CopyTo(c.allocator, c.device_name));
  return Status::Ok();
}

}  // namespace

StatusOr<Shape> ShapeFromVector(KernelContext& c, const Tensor& dims) {
  Shape shape;
  for (int64_t d = 0; d < dims.num_elements(); ++d) {
    const int64_t size = IntAt(dims, d);
    if (size < 0) return c.Fail(fmt::format("Dimension {} must be >= 0", size));
    shape.push_back(size);
  }
  if (!NumElements(shape)) {
    return c.Fail(fmt::format("Shape {} would have more than 2**63 - 1 elements", ShapeDebugString(shape)));
  }
  return shape;
}


// ExpandDims and Squeeze only reinterpret their input's shape (as Reshape).
Status ShareWithShape(KernelContext& c, Shape shape) {
  c.output = c.inputs[0].Reshaped(std::move(shape));
  return Status::Ok();
}

Status ExpandDimsKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& dim_t = c.inputs[1];
  if (dim_t.num_elements() != 1) {
    return c.Fail("'dim' must be a tensor with a single value");
  }
  int64_t dim = dim_t.GetAsInt64(0);
  const int rank = input.rank();
  if (dim < -1 - rank || dim > rank) {
    return c.Fail(fmt::format("Tried to expand dim index {} for tensor with {} dimensions.", dim, rank));
  }
  if (dim < 0) dim += rank + 1;
  Shape shape = input.shape();
  shape.insert(shape.begin() + dim, 1);
  return ShareWithShape(c, std::move(shape));
}

Status SqueezeKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const int rank = input.rank();
  std::vector<bool> wanted(rank, false);
  const std::vector<int64_t> dims = c.IntListAttr("squeeze_dims");
  for (int64_t d : dims) {
    if (d < -rank || d >= rank) {
      return c.Fail(fmt::format("Tried to squeeze dim index {} for tensor with {} dimensions.", d, rank));
    }
    wanted[d < 0 ? d + rank : d] = true;
  }
  Shape shape;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = input.shape()[d];
    if (dims.empty() ? size == 1 : wanted[d]) {
      if (size != 1) return c.Fail(fmt::format("Can not squeeze dim[{}], expected a dimension of 1, got {}", d, size));
      continue;
    }
    shape.push_back(size);
  }
  return ShareWithShape(c, std::move(shape));
}

// TensorFlow's ReshapeOp (reshape_op.h), its checks and texts: at most one
// -1, inferred from the dimensions that are not 0.
Status ReshapeKernel(KernelContext& c) {
  const Tensor& input = c.inputs[0];
  const Tensor& sizes = c.inputs[1];
  if (!IsVector(sizes)) {
    return c.Fail("sizes input must be 1-D, not " + ShapeDebugString(sizes.shape()));
  }
  Shape shape;
  int64_t product = 1;         // the sizes but 0 and -1
  int64_t shape_elements = 1;  // the shape's elements so far, the -1 as 1
  int unknown_index = -1;
  bool sizes_have_zero = false;
  for (int64_t d = 0; d < sizes.num_elements(); ++d) {
    const int64_t size = IntAt(sizes, d);
    if (size == -1) {
      if (unknown_index != -1) {
        return c.Fail(fmt::format("Only one input size may be -1, not both {} and {}", unknown_index, d));
      }
      unknown_index = static_cast<int>(d);
      shape.push_back(1);
    } else if (size < 0) {
      return c.Fail(fmt::format("Size {} must be non-negative, not {}", d, size));
    } else {
      shape.push_back(size);
      if (size == 0) {
        sizes_have_zero = true;  // left out of the product, so the -1 can still be inferred
        shape_elements = 0;
      } else if (__builtin_mul_overflow(shape_elements, size, &shape_elements) ||
                 __builtin_mul_overflow(product, size, &product)) {
        // ValidateSizes' text; it checks the first product only, and its
        // second overflows (a zero before two huge sizes): the same text.
        std::vector<int64_t> all;
        for (int64_t i = 0; i < sizes.num_elements(); ++i) all.push_back(IntAt(sizes, i));
        return c.Fail(fmt::format("Shape [{}] has too many elements", fmt::join(all, ", ")));
      }
    }
  }
  if (unknown_index != -1) {
    int64_t input_elements = 1;
    bool input_has_zero = false;
    for (int64_t dim : input.shape()) {
      if (dim > 0 || !sizes_have_zero) {
        input_elements *= dim;
      } else {
        input_has_zero = true;
      }
    }
    const int64_t missing = input_elements / product;
    if (!input_has_zero && product * missing != input_elements) {
      return c.Fail(fmt::format(
          "Input to reshape is a tensor with {} values, but the requested shape requires a multiple of {}",
          input_elements, product));
    }
    shape[unknown_index] = missing;
  }
  const int64_t elements = NumElements(shape).value_or(-1);
  if (elements != input.num_elements()) {
    return c.Fail(fmt::format("Input to reshape is a tensor with {} values, but the requested shape has {}",
                              input.num_elements(), elements));
  }
  c.output = input.Reshaped(std::move(shape));
  return Status::Ok();
}

// Shape: the input's dimensions, in the node's out_type (int32 or int64),
// in host memory (HostMemory("output") on GPUs).
Status ShapeKernel(KernelContext& c) {
  const Shape& dims = c.inputs[0].shape();
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({static_cast<int64_t>(dims.size())}));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (c.node.dtype == DType::kInt64) {
      c.output.data<int64_t>()[i] = dims[i];
    } else {
      c.output.data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
    }
  }
  return Status::Ok();
}

// TensorFlow's FillOp (constant_op.cc): `value` repeated over `dims`. The
// bytes are written on the host and copied to the device's memory where
// that is not the host's.
Status FillKernel(KernelContext& c) {
  const Tensor& dims = c.inputs[0];
  const Tensor& value = c.inputs[1];
  if (!IsVector(dims)) return c.Fail("dims must represent a vector, got shape " + ShapeDebugString(dims.shape()));
  if (value.rank() != 0) return c.Fail("value must represent a scalar, got shape " + ShapeDebugString(value.shape()));
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, ShapeFromVector(c, dims));
  TFRUN_ASSIGN_OR_RETURN(const Tensor host_value, HostCopy(c, value));
  TFRUN_ASSIGN_OR_RETURN(Tensor filled, Tensor::AllocateHost(value.dtype(), shape));
  const size_t element = Info(value.dtype()).size;
  auto* out = static_cast<char*>(filled.raw());
  for (int64_t i = 0; i < filled.num_elements(); ++i) std::memcpy(out + i * element, host_value.raw(), element);
  return OutputFromHost(c, std::move(filled));
}


// PhiloxRandomOp (random_op.cc): the output's shape from a vector of
// int32 or int64, 256 samples per output reserved from the node's
// generator.
// A random op's `shape` input (random_op.cc AllocateOutputWithShape).
StatusOr<Shape> RandomOutputShape(KernelContext& c) {
  const Tensor& dims = c.inputs[0];
  if (!IsVector(dims)) {
    return c.Fail("shape must be a vector of {int32,int64}, got shape " + ShapeDebugString(dims.shape()));
  }
  return ShapeFromVector(c, dims);
}

Status RandomKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, RandomOutputShape(c));
  TFRUN_ASSIGN_OR_RETURN(Tensor drawn, Tensor::AllocateHost(c.node.dtype, shape));
  const PhiloxRandom gen =
      c.random_generators->Reserve(c.node.id, c.IntAttr("seed"), c.IntAttr("seed2"), drawn.num_elements());
  const int64_t n = drawn.num_elements();
  const bool single = c.node.dtype == DType::kFloat32;
  if (c.node.op == "RandomUniform") {
    single ? FillUniform(gen, drawn.data<float>(), n) : FillUniform(gen, drawn.data<double>(), n);
  } else if (c.node.op == "RandomStandardNormal") {
    single ? FillStandardNormal(gen, drawn.data<float>(), n) : FillStandardNormal(gen, drawn.data<double>(), n);
  } else {
    single ? FillTruncatedNormal(gen, drawn.data<float>(), n) : FillTruncatedNormal(gen, drawn.data<double>(), n);
  }
  return OutputFromHost(c, std::move(drawn));
}

namespace {

// The stateless ops' fill (StatelessRandomOpBase::Fill), from `gen`, by op.
Status FillStateless(KernelContext& c, std::string_view distribution, PhiloxRandom gen, Tensor& out) {
  const int64_t n = out.num_elements();
  const bool single = out.dtype() == DType::kFloat32;
  if (distribution == "uniform") {
    single ? FillUniform(gen, out.data<float>(), n) : FillUniform(gen, out.data<double>(), n);
  } else if (distribution == "normal") {
    single ? FillStandardNormal(gen, out.data<float>(), n) : FillStandardNormal(gen, out.data<double>(), n);
  } else {
    single ? FillTruncatedNormal(gen, out.data<float>(), n) : FillTruncatedNormal(gen, out.data<double>(), n);
  }
  return OutputFromHost(c, std::move(out));
}

// "uniform", "normal" or "truncated" from the op's name.
std::string_view StatelessDistribution(std::string_view op) {
  if (op.find("Uniform") != std::string_view::npos) return "uniform";
  if (op.find("Truncated") != std::string_view::npos) return "truncated";
  return "normal";
}

// GenerateKey's seeds: a [2] vector of int32 or int64 (an int32 seed
// sign-extended to 64 bits, as its C++ conversion does).
StatusOr<StatelessKeyCounter> KeyFromSeed(KernelContext& c, const Tensor& seed_input) {
  if (!(seed_input.rank() == 1 && seed_input.shape()[0] == 2)) {
    return c.Fail("seed must have shape [2], not " + ShapeDebugString(seed_input.shape()));
  }
  TFRUN_ASSIGN_OR_RETURN(const Tensor seed, HostCopy(c, seed_input));
  return GenerateStatelessKey(static_cast<uint64_t>(IntAt(seed, 0)), static_cast<uint64_t>(IntAt(seed, 1)));
}

// The Philox and auto-select algorithms' ids (rng_alg.h).
constexpr int64_t kRngAlgPhilox = 1;
constexpr int64_t kRngAlgAutoSelect = 3;

}  // namespace

// StatelessRandomUniform/Normal/TruncatedNormal(shape, seed): the V1
// stateless ops (stateless_random_ops.cc).
Status StatelessRandomKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, RandomOutputShape(c));
  TFRUN_ASSIGN_OR_RETURN(const StatelessKeyCounter key, KeyFromSeed(c, c.inputs[1]));
  TFRUN_ASSIGN_OR_RETURN(Tensor drawn, Tensor::AllocateHost(c.node.dtype, shape));
  return FillStateless(c, StatelessDistribution(c.node.op), PhiloxRandom(key.counter, key.key), drawn);
}

// StatelessRandomGetKeyCounter(seed) -> key [1], counter [2], both uint64
// (stateless_random_ops_v2.cc): the Philox key and counter, each pair of
// 32-bit words one uint64, the first word low. Host memory on every device.
Status StatelessGetKeyCounterKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const StatelessKeyCounter kc, KeyFromSeed(c, c.inputs[0]));
  TFRUN_ASSIGN_OR_RETURN(Tensor key, Tensor::AllocateHost(DType::kUInt64, {1}));
  TFRUN_ASSIGN_OR_RETURN(Tensor counter, Tensor::AllocateHost(DType::kUInt64, {2}));
  const auto words = [](uint32_t lo, uint32_t hi) { return static_cast<uint64_t>(hi) << 32 | lo; };
  key.data<uint64_t>()[0] = words(kc.key[0], kc.key[1]);
  counter.data<uint64_t>()[0] = words(kc.counter[0], kc.counter[1]);
  counter.data<uint64_t>()[1] = words(kc.counter[2], kc.counter[3]);
  c.outputs = {std::move(key), std::move(counter)};
  return Status::Ok();
}

// StatelessRandomUniformV2/NormalV2/TruncatedNormalV2(shape, key, counter,
// alg) (StatelessRandomOpBaseWithKeyCounter), as TensorFlow 2.21 runs it,
// measured: the checks in its order, nothing drawn for an empty output, the
// counter's length checked against the algorithm's id itself (Philox: at
// least 1; its second word, missing, read as 0), and no algorithm but
// Philox (ThreeFry too is "Unsupported algorithm id: 2" on CPU).
Status StatelessRandomV2Kernel(KernelContext& c) {
  const Tensor& alg_input = c.inputs[3];
  if (alg_input.rank() != 0) {
    return c.Fail(fmt::format("input 3 (0-based) must have shape [], not {}", ShapeDebugString(alg_input.shape())));
  }
  TFRUN_ASSIGN_OR_RETURN(const Tensor alg_host, HostCopy(c, alg_input));
  int64_t alg = IntAt(alg_host, 0);
  if (alg == kRngAlgAutoSelect) alg = kRngAlgPhilox;
  const Tensor& key_input = c.inputs[1];
  const Tensor& counter_input = c.inputs[2];
  if (!(key_input.rank() == 1 && key_input.shape()[0] == 1)) {
    return c.Fail(fmt::format("key must have shape [1], not {}. (Note that batched keys are not supported yet.)",
                              ShapeDebugString(key_input.shape())));
  }
  if (!(counter_input.rank() == 1 && counter_input.shape()[0] >= alg)) {
    return c.Fail(fmt::format("counter must be a vector with length at least {}; got shape: {}. (Note that "
                              "batched counters are not supported yet.)",
                              alg, ShapeDebugString(counter_input.shape())));
  }
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, RandomOutputShape(c));
  TFRUN_ASSIGN_OR_RETURN(Tensor drawn, Tensor::AllocateHost(c.node.dtype, shape));
  if (drawn.num_elements() == 0) return OutputFromHost(c, std::move(drawn));
  if (alg != kRngAlgPhilox) return c.Fail(fmt::format("Unsupported algorithm id: {}", alg));
  TFRUN_ASSIGN_OR_RETURN(const Tensor key, HostCopy(c, key_input));
  TFRUN_ASSIGN_OR_RETURN(const Tensor counter, HostCopy(c, counter_input));
  const uint64_t k = key.data<uint64_t>()[0];
  const uint64_t c0 = counter.data<uint64_t>()[0];
  const uint64_t c1 = counter.num_elements() > 1 ? counter.data<uint64_t>()[1] : 0;
  const PhiloxRandom gen(
      {static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32), static_cast<uint32_t>(c1),
       static_cast<uint32_t>(c1 >> 32)},
      {static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)});
  return FillStateless(c, StatelessDistribution(c.node.op), gen, drawn);
}

// Assert(condition, data...) (logging_ops.cc): nothing when the condition
// holds, else InvalidArgumentError "assertion failed: [...] [...]", each
// data tensor's first `summarize` elements space-separated (strings as
// they are, floats in six significant digits, as StrCat writes them),
// "..." after a cut. Its inputs are host memory on every device.
Status AssertKernel(KernelContext& c) {
  const Tensor& condition = c.inputs[0];
  if (condition.num_elements() != 1 || condition.rank() > 1) {
    return c.Fail("In[0] expected to be a scalar, got: " + ShapeDebugString(condition.shape()));
  }
  if (condition.GetAsDouble(0) != 0) return Status::Ok();
  const int64_t summarize = c.IntAttr("summarize", 3);
  std::string message = "assertion failed: ";
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    const Tensor& t = c.inputs[i];
    std::string values;
    for (int64_t k = 0; k < t.num_elements() && k < summarize; ++k) {
      if (k > 0) values += " ";
      if (t.dtype() == DType::kString) {
        values += std::string(t.StringAt(k));
      } else if (Info(t.dtype()).is_float) {
        values += fmt::format("{:.6g}", t.GetAsDouble(k));
      } else {
        values += fmt::format("{}", t.GetAsInt64(k));
      }
    }
    if (t.num_elements() > summarize) values += "...";
    message += "[" + values + "]" + (i + 1 < c.inputs.size() ? " " : "");
  }
  return c.Fail(message);
}


// RandomUniformInt(shape, minval, maxval) (random_op.cc).
Status RandomUniformIntKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, RandomOutputShape(c));
  const Tensor& minval = c.inputs[1];
  const Tensor& maxval = c.inputs[2];
  if (minval.rank() != 0) return c.Fail("minval must be 0-D, got shape " + ShapeDebugString(minval.shape()));
  if (maxval.rank() != 0) return c.Fail("maxval must be 0-D, got shape " + ShapeDebugString(maxval.shape()));
  TFRUN_ASSIGN_OR_RETURN(Tensor drawn, Tensor::AllocateHost(c.node.dtype, shape));
  const int64_t n = drawn.num_elements();
  if (n > 0) {
    // Checked after the early exit for an empty output, as TensorFlow does.
    const int64_t lo = IntAt(minval, 0), hi = IntAt(maxval, 0);
    if (lo >= hi) return c.Fail(fmt::format("Need minval < maxval, got {} >= {}", lo, hi));
    const PhiloxRandom gen = c.random_generators->Reserve(c.node.id, c.IntAttr("seed"), c.IntAttr("seed2"), n);
    if (c.node.dtype == DType::kInt32) {
      FillUniformInt(gen, drawn.data<int32_t>(), n, static_cast<int32_t>(lo), static_cast<int32_t>(hi));
    } else {
      FillUniformInt(gen, drawn.data<int64_t>(), n, lo, hi);
    }
  }
  return OutputFromHost(c, std::move(drawn));
}

namespace {

constexpr std::string_view kResourceContainer = "localhost/";

}  // namespace

// A resource variable's handle: its name in the session's resource manager
// (container "localhost", then the op's shared_name, or its node name
// without one), a string scalar in host memory, where TensorFlow keeps
// resource handles on every device.
Status VarHandleKernel(KernelContext& c) {
  const std::string shared = c.StringAttr("shared_name");
  const std::string name = !shared.empty() ? shared : c.node.name;
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {std::string(kResourceContainer) + name}));
  return Status::Ok();
}

StatusOr<std::string> ResourceKey(KernelContext& c, int i) {
  const Tensor& handle = c.inputs[i];
  if (!handle.is_valid() || handle.dtype() != DType::kString || handle.num_elements() != 1) {
    return c.Fail(fmt::format("input {} of {} must be a resource handle (a VarHandleOp's output); got a {} tensor of "
                              "shape {}",
                              i, c.node.op, Info(handle.dtype()).tf_name, ShapeDebugString(handle.shape())));
  }
  return std::string(handle.StringAt(0));
}

StatusOr<Tensor*> LookupResourceVariable(KernelContext& c, int i) {
  TFRUN_ASSIGN_OR_RETURN(const std::string key, ResourceKey(c, i));
  auto& variables = c.variables->resource;
  const auto it = variables.find(key);
  if (it != variables.end()) return &it->second;
  // lookup_util's text; the container exists once any resource does.
  const std::string name = key.compare(0, kResourceContainer.size(), kResourceContainer) == 0
                               ? key.substr(kResourceContainer.size())
                               : key;
  c.op_error = true;
  return RuntimeError(fmt::format(
      "FailedPreconditionError: Could not find variable {}. This could mean that the variable has been deleted. In "
      "TF1, it can also mean the variable is uninitialized. Debug info: container=localhost, status error "
      "message={}",
      name,
      !variables.empty() ? fmt::format("Resource localhost/{}/N10tensorflow3VarE does not exist.", name)
                         : fmt::format("Container localhost does not exist. (Could not find resource: localhost/{})",
                                       name)));
}

// The read shares the variable's buffer; an update that finds it shared
// writes a copy (optimizer_kernels.cc), so this value never changes.
// ReadVariableOp's check (resource_variable_ops.cc): its dtype attr, the
// node's dtype, is the variable's.
Status ReadVariableKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(Tensor* variable, LookupResourceVariable(c, 0));
  if (variable->dtype() != c.node.dtype) {
    return c.Fail(fmt::format("Trying to read variable with wrong dtype. Expected {} got {}",
                              Info(c.node.dtype).tf_name, Info(variable->dtype()).tf_name));
  }
  c.output = *variable;
  return Status::Ok();
}

// A copy, as for Assign: later updates write into the variable's buffer.
// AssignVariableOp's check: a variable keeps its first dtype (the value's
// is the op's dtype attr, which the importer checked).
Status AssignVariableKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const std::string key, ResourceKey(c, 0));
  const Tensor& value = c.inputs[1];
  auto it = c.variables->resource.find(key);
  if (it != c.variables->resource.end() && it->second.dtype() != value.dtype()) {
    return c.Fail(fmt::format("Trying to assign variable with wrong dtype. Expected {} got {}",
                              Info(it->second.dtype()).tf_name, Info(value.dtype()).tf_name));
  }
  // Its validate_shape (false by default) against the variable's value.
  if (it != c.variables->resource.end() && c.BoolAttr("validate_shape") && it->second.shape() != value.shape()) {
    return c.Fail(fmt::format("Trying to assign to variable with tensor with wrong shape. Expected {} got {}",
                              ShapeDebugString(it->second.shape()), ShapeDebugString(value.shape())));
  }
  TFRUN_ASSIGN_OR_RETURN(Tensor stored, value.CopyTo(value.allocator(), c.device_name));
  c.variables->resource[key] = std::move(stored);
  return Status::Ok();
}

// PartitionedCall and StatefulPartitionedCall kept as nodes (a Session
// graph without do_function_inlining): the function run as TensorFlow's
// kernel runs it, instantiated for the node's device by the session's
// function runtime; its results are the node's outputs.
Status PartitionedCallKernel(KernelContext& c) {
  if (c.functions == nullptr || c.graph == nullptr) {
    return RuntimeError(fmt::format("{} '{}': no function runtime runs calls here", c.node.op, c.node.name));
  }
  TFRUN_ASSIGN_OR_RETURN(std::vector<Tensor> results,
                         c.functions->Call(*c.graph, c.node, c.device_name, c.inputs, c.variables));
  if (static_cast<int>(results.size()) != c.node.num_outputs) {
    return RuntimeError(fmt::format("{} '{}': the function returned {} results for {} outputs", c.node.op, c.node.name,
                                    results.size(), c.node.num_outputs));
  }
  c.outputs = std::move(results);
  return Status::Ok();
}

// A call's boundary (_Arg, _Retval and their _Device forms): the session
// feeds every _Arg and reads what each _Retval reads, so neither runs; an
// _Arg that did would be one nothing fed.
Status UnfedArgKernel(KernelContext& c) {
  return c.Fail(fmt::format("the call's argument '{}' (index {}) was not fed", c.node.name, c.IntAttr("index")));
}

Status VarIsInitializedKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const std::string key, ResourceKey(c, 0));
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DType::kBool, {}));
  out.data<bool>()[0] = c.variables->resource.count(key) > 0;
  return OutputFromHost(c, std::move(out));
}

// IsVariableInitialized(ref): whether the reference variable has a value.
Status IsVariableInitializedKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DType::kBool, {}));
  out.data<bool>()[0] = c.inputs[0].is_valid();
  return OutputFromHost(c, std::move(out));
}

void BindHandleKernels(KernelRegistry* registry, std::string_view device_type, DTypeSet dtypes) {
  // Tensor lists (variants) move through identities and control flow as
  // any tensor does (a TensorArray in a while loop).
  const DTypeSet moved = dtypes | DTypeSet{DType::kVariant};
  registry->Bind("Const", device_type, dtypes, ConstKernel);
  registry->Bind("Identity", device_type, moved, IdentityKernel);
  registry->Bind("IdentityN", device_type, moved, IdentityNKernel);
  // Identities to a forward run; only tf.gradients reads them.
  registry->Bind("StopGradient", device_type, dtypes, IdentityKernel);
  registry->Bind("PreventGradient", device_type, dtypes, IdentityKernel);
  // Its default when not fed (a fed node does not run).
  registry->Bind("PlaceholderWithDefault", device_type, dtypes, IdentityKernel);
  registry->Bind("NoOp", device_type, dtypes, NoOpKernel);
  for (const char* op : {"_Arg", "_DeviceArg"}) registry->Bind(op, device_type, kEveryDType | moved, UnfedArgKernel);
  for (const char* op : {"PartitionedCall", "StatefulPartitionedCall"}) {
    registry->Bind(op, device_type, kEveryDType | moved, PartitionedCallKernel);
  }
  for (const char* op : {"_Retval", "_DeviceRetval"}) registry->Bind(op, device_type, kEveryDType | moved, NoOpKernel);
  registry->Bind("VariableV2", device_type, dtypes, VariableKernel);
  registry->Bind("Assign", device_type, dtypes, AssignKernel);
  registry->Bind("Placeholder", device_type, dtypes, PlaceholderKernel);
  BindControlFlowKernels(registry, device_type, moved);
  BindListKernels(registry, device_type);
  BindCollectiveKernels(registry, device_type);
  BindRewriteKernels(registry, device_type, dtypes);
  registry->Bind("Reshape", device_type, dtypes, ReshapeKernel);
  registry->Bind("ExpandDims", device_type, dtypes, ExpandDimsKernel);
  registry->Bind("Squeeze", device_type, dtypes, SqueezeKernel);
  registry->Bind("Shape", device_type, DTypeSet{DType::kInt32, DType::kInt64}, ShapeKernel);
  registry->Bind("Fill", device_type, dtypes & kMovedTypes, FillKernel);
  // Resource variables. VarHandleOp's node dtype is tfrun's default (its
  // output is a resource), AssignVariableOp has no output.
  registry->Bind("VarHandleOp", device_type, kEveryDType, VarHandleKernel);
  registry->Bind("ReadVariableOp", device_type, dtypes, ReadVariableKernel);
  registry->Bind("AssignVariableOp", device_type, dtypes, AssignVariableKernel);
  registry->Bind("VarIsInitializedOp", device_type, DTypeSet{DType::kBool}, VarIsInitializedKernel);
  registry->Bind("IsVariableInitialized", device_type, DTypeSet{DType::kBool}, IsVariableInitializedKernel);
  const DTypeSet floats = dtypes & DTypeSet{DType::kFloat32, DType::kFloat64};
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    registry->Bind(op, device_type, floats, RandomKernel);
  }
  registry->Bind("RandomUniformInt", device_type, dtypes & DTypeSet{DType::kInt32, DType::kInt64},
                 RandomUniformIntKernel);
  registry->Bind("Assert", device_type, kEveryDType, AssertKernel);
  for (const char* op : {"StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"}) {
    registry->Bind(op, device_type, floats, StatelessRandomKernel);
  }
  for (const char* op : {"StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"}) {
    registry->Bind(op, device_type, floats, StatelessRandomV2Kernel);
  }
  // Its outputs are host memory on every device: the CPU kernel runs it.
  if (device_type == kCpu) {
    registry->Bind("StatelessRandomGetKeyCounter", device_type, DTypeSet{DType::kUInt64},
                   StatelessGetKeyCounterKernel);
  }
}

bool TakesUninitializedRef(const Node& node, size_t input) {
  return input == 0 && (node.op == "Assign" || node.op == "IsVariableInitialized" || node.op == "RefSwitch");
}

bool QueuesDeviceWork(const Node& node) {
  if (IsControlFlow(node.cls)) return false;
  return node.op != "Identity" && node.op != "IdentityN" && node.op != "StopGradient" && node.op != "PreventGradient" && node.op != "NoOp" && node.op != "VariableV2" && node.op != "Placeholder" &&
         node.op != "PlaceholderWithDefault" && node.op != "Reshape" && node.op != "ExpandDims" &&
         node.op != "Squeeze" && node.op != "Shape" && node.op != "TemporaryVariable" &&
         node.op != "DestroyTemporaryVariable" &&
         node.op != "VarHandleOp" && node.op != "ReadVariableOp" && node.op != "AssignVariableOp";
}

}  // namespace tfrun
