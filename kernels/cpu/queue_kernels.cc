// TensorFlow's queues (data_flow_ops.cc, fifo_queue.cc,
// padding_fifo_queue.cc, random_shuffle_queue.cc): FIFOQueueV2,
// PaddingFIFOQueueV2 and RandomShuffleQueueV2 with their enqueue, dequeue,
// close and size ops, on the CPU (TensorFlow has no GPU kernels for them).
//
// A queue is a session resource: made by its op's first run, kept across
// runs in the executor's store (VariableStore::queues), found by the handle
// the op outputs. tfrun runs one op at a time, so an op TensorFlow would
// block on (a dequeue from a queue with too few elements that is not
// closed, an enqueue into a full one) can never be woken by another
// thread: it fails at once, saying so, where TensorFlow would wait.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/runtime/queue_resource.h"
#include "core/tables/tf_tables.h"
#include "kernels/cpu/cpu_eigen.h"

namespace tfrun {

// A FixedLengthRecordReader (fixed_length_record_reader_op.cc, ReaderBase):
// the file it reads (a name dequeued from a queue) and where it is.
struct ReaderResource {
  std::string name;  // "FixedLengthRecordReader 'node'", as TensorFlow's messages
  int64_t header_bytes = 0, record_bytes = 0, footer_bytes = 0;
  bool working = false;  // a file is open
  std::string work;      // its name
  std::string contents;  // the whole file (read at work start)
  int64_t position = 0, limit = 0, record_number = 0;
};

namespace cpu {
namespace {

constexpr std::string_view kContainer = "localhost/";

// "(2x-1)", "()" or "?" (tf_tables.h) as a shape; nullopt for unknown rank.
std::optional<Shape> ParseShapeItem(const std::string& item) {
  if (item.size() < 2 || item.front() != '(' || item.back() != ')') return std::nullopt;
  Shape shape;
  const std::string inner = item.substr(1, item.size() - 2);
  size_t at = 0;
  while (at < inner.size()) {
    const size_t x = inner.find('x', at);
    const std::string dim = inner.substr(at, x == std::string::npos ? std::string::npos : x - at);
    shape.push_back(std::strtoll(dim.c_str(), nullptr, 10));
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return shape;
}

bool FullyDefined(const std::optional<Shape>& shape) {
  return shape && std::all_of(shape->begin(), shape->end(), [](int64_t d) { return d >= 0; });
}

// FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2: the queue's handle,
// the queue made at the first run.
template <QueueKind Kind>
Status QueueOpKernel(KernelContext& c) {
  const std::string shared = c.StringAttr("shared_name");
  const std::string key = shared.empty() ? "node:" + c.node.name : "shared:" + shared;
  auto& queue = c.variables->queues[key];
  if (queue == nullptr) {
    auto q = std::make_shared<QueueResource>();
    q->kind = Kind;
    q->name = !shared.empty() ? shared : fmt::format("_{}_{}", c.variables->queues_made++, c.node.name);
    for (const std::string& t : c.ListAttrItems("component_types")) {
      const std::optional<DType> dtype = DTypeOfTableType(t);
      if (!dtype) return c.Fail(fmt::format("tfrun's queues hold no {} components", t));
      q->types.push_back(*dtype);
    }
    for (const std::string& s : c.ListAttrItems("shapes")) q->shapes.push_back(ParseShapeItem(s));
    if (!q->shapes.empty() && q->shapes.size() != q->types.size()) {
      return c.Fail("All shapes must be fully defined, or none: the number of shapes must match the number of types");
    }
    if (q->shapes.empty()) q->shapes.assign(q->types.size(), std::nullopt);
    const int64_t capacity = c.IntAttr("capacity", -1);
    if (capacity >= 0) q->capacity = capacity;
    if constexpr (Kind == QueueKind::kRandomShuffle) {
      q->min_after_dequeue = c.IntAttr("min_after_dequeue", 0);
      int64_t seed = c.IntAttr("seed", 0), seed2 = c.IntAttr("seed2", 0);
      if (seed == 0 && seed2 == 0) {
        // TensorFlow seeds such a queue nondeterministically.
        seed = static_cast<int64_t>(std::random_device{}()) << 32 | std::random_device{}();
        seed2 = static_cast<int64_t>(std::random_device{}()) << 32 | std::random_device{}();
      }
      q->generator = PhiloxRandom(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
    }
    queue = std::move(q);
  }
  c.variables->queues_by_node[c.node.name] = queue;
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {std::string(kContainer) + key}));
  return Status::Ok();
}

// The session resource (a queue, a reader) input `input`'s handle names in
// `store`, or TensorFlow's NotFound text.
template <typename Resource>
StatusOr<Resource*> LookupResource(KernelContext& c, int input,
                                   const std::map<std::string, std::shared_ptr<Resource>>& store) {
  TFRUN_ASSIGN_OR_RETURN(const std::string handle, ResourceKey(c, input));
  const std::string key = handle.compare(0, kContainer.size(), kContainer) == 0 ? handle.substr(kContainer.size())
                                                                               : handle;
  auto it = store.find(key);
  if (it == store.end()) {
    c.op_error = true;
    return RuntimeError(fmt::format("NotFoundError: Resource {} does not exist.", handle));
  }
  return it->second.get();
}

StatusOr<QueueResource*> LookupQueue(KernelContext& c, int input = 0) {
  return LookupResource(c, input, c.variables->queues);
}

// Where TensorFlow would wait for another thread, which tfrun has none of.
Status WouldWait(KernelContext& c, const QueueResource& q, std::string_view what) {
  return RuntimeError(fmt::format(
      "node '{}': {} '{}' {}; TensorFlow waits here for another thread (a queue runner) to change that; tfrun "
      "runs one op at a time and fills a .meta's queue runners' queues only before each run",
      c.node.name, q.KindName(), q.name, what));
}

// The components of an enqueue (inputs 1...), checked against the queue's
// types ("Signature mismatch") and, where the queue knows them, shapes:
// for EnqueueMany each without its leading dimension, `count` rows each.
StatusOr<int64_t> CheckComponents(KernelContext& c, const QueueResource& q, bool many) {
  const size_t n = c.inputs.size() - 1;
  bool types_match = n == q.types.size();
  for (size_t i = 0; types_match && i < n; ++i) types_match = c.inputs[i + 1].dtype() == q.types[i];
  if (!types_match) {
    std::string have = "resource", expected = "resource";
    for (size_t i = 0; i < n; ++i) have += fmt::format(", {}", Info(c.inputs[i + 1].dtype()).tf_name);
    for (DType t : q.types) expected += fmt::format(", {}", Info(t).tf_name);
    return c.Fail(fmt::format("Signature mismatch, have: {}-> expected: {}->", have, expected));
  }
  int64_t count = 1;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = c.inputs[i + 1];
    Shape shape = t.shape();
    if (many) {
      if (t.rank() == 0) return c.Fail("Expected tensor with at least one dimension for EnqueueMany");
      if (i == 0) count = shape[0];
      if (shape[0] != count) {
        return c.Fail(fmt::format("Expected first dimension of all components to match, got {} and {}", count,
                                  shape[0]));
      }
      shape.erase(shape.begin());
    }
    const std::optional<Shape>& want = q.shapes[i];
    bool ok = !want || want->size() == shape.size();
    for (size_t d = 0; ok && want && d < shape.size(); ++d) ok = (*want)[d] < 0 || (*want)[d] == shape[d];
    if (!ok) {
      return c.Fail(fmt::format("Shape mismatch in tuple component {}. Expected {}, got {}", i,
                                ShapeDebugString(*want), ShapeDebugString(shape)));
    }
  }
  return count;
}

template <bool Many>
Status EnqueueKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(QueueResource * q, LookupQueue(c));
  TFRUN_ASSIGN_OR_RETURN(const int64_t count, CheckComponents(c, *q, Many));
  if (q->closed) {
    c.op_error = true;
    return RuntimeError(fmt::format("CancelledError: {} '{}' is closed.", q->KindName(), q->name));
  }
  // A queue runner's enqueue that does not fit whole goes in whole: its
  // blocked thread would put the rest in before anything else.
  const int64_t room = c.variables->queue_runner_enqueue ? 1 : count;
  if (static_cast<int64_t>(q->elements.size()) + room > q->capacity) {
    return WouldWait(c, *q, fmt::format("is full ({} of {} elements)", q->elements.size(), q->capacity));
  }
  for (int64_t row = 0; row < count; ++row) {
    std::vector<Tensor> tuple;
    for (size_t i = 1; i < c.inputs.size(); ++i) {
      const Tensor& t = c.inputs[i];
      if (!Many) {
        TFRUN_ASSIGN_OR_RETURN(Tensor copy, t.CopyTo(CpuAllocator(), c.device_name));
        tuple.push_back(std::move(copy));
        continue;
      }
      Shape shape(t.shape().begin() + 1, t.shape().end());
      TFRUN_ASSIGN_OR_RETURN(Tensor slice, c.Allocate(t.dtype(), shape));
      if (t.dtype() == DType::kString) {
        std::vector<std::string> strings;
        const int64_t per = slice.num_elements();
        for (int64_t k = 0; k < per; ++k) strings.emplace_back(t.StringAt(row * per + k));
        TFRUN_ASSIGN_OR_RETURN(slice, Tensor::FromStrings(shape, strings));
      } else {
        std::memcpy(slice.raw(), static_cast<const char*>(t.raw()) + row * slice.num_bytes(), slice.num_bytes());
      }
      tuple.push_back(std::move(slice));
    }
    q->elements.push_back(std::move(tuple));
  }
  return Status::Ok();
}

// The next element: the front, or for a RandomShuffleQueue one drawn at
// random and swapped with the last (random_shuffle_queue.cc).
std::vector<Tensor> TakeOne(QueueResource& q) {
  size_t index = 0;
  if (q.kind == QueueKind::kRandomShuffle) {
    index = q.NextSample() % q.elements.size();
    std::swap(q.elements[index], q.elements.back());
    std::vector<Tensor> tuple = std::move(q.elements.back());
    q.elements.pop_back();
    return tuple;
  }
  std::vector<Tensor> tuple = std::move(q.elements.front());
  q.elements.pop_front();
  return tuple;
}

// Dequeue (`kind` 0), DequeueMany (1), DequeueUpTo (2).
template <int Kind>
Status DequeueKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(QueueResource * q, LookupQueue(c));
  int64_t wanted = 1;
  if constexpr (Kind != 0) {
    const Tensor& n = c.inputs[1];
    if (n.rank() != 0) return c.Fail("n must be a scalar");
    wanted = n.GetAsInt64(0);
    if (wanted < 0) return c.Fail(fmt::format("{}'s {} requested {} < 0 elements", q->KindName(),
                                              Kind == 1 ? "DequeueMany" : "DequeueUpTo", wanted));
    for (size_t i = 0; i < q->types.size(); ++i) {
      if (q->kind != QueueKind::kPaddingFifo && !FullyDefined(q->shapes[i])) {
        return c.Fail(fmt::format("{}'s DequeueMany and DequeueUpTo require the components to have specified "
                                  "shapes.",
                                  q->KindName()));
      }
    }
  }
  const int64_t size = static_cast<int64_t>(q->elements.size());
  // An open RandomShuffleQueue keeps min_after_dequeue elements back.
  const int64_t available = q->closed ? size : std::max<int64_t>(0, size - q->min_after_dequeue);
  int64_t take = wanted;
  if (available < wanted) {
    if (!q->closed) {
      return WouldWait(c, *q, fmt::format("has {} elements{} and {} asked for {}", size,
                                          q->min_after_dequeue > 0
                                              ? fmt::format(" (min_after_dequeue {})", q->min_after_dequeue)
                                              : "",
                                          c.node.op, wanted));
    }
    if (Kind != 2 || size == 0) {
      c.op_error = true;
      return RuntimeError(fmt::format("OutOfRangeError: {} '{}' is closed and has insufficient elements (requested "
                                      "{}, current size {})",
                                      q->KindName(), q->name, wanted, size));
    }
    take = size;
  }
  std::vector<std::vector<Tensor>> tuples;
  for (int64_t k = 0; k < take; ++k) tuples.push_back(TakeOne(*q));
  c.outputs.clear();
  for (size_t i = 0; i < q->types.size(); ++i) {
    if constexpr (Kind == 0) {
      c.outputs.push_back(std::move(tuples[0][i]));
      continue;
    }
    // Stacked along a new first dimension; a padding queue pads each to the
    // largest of each dimension with zeros (or empty strings).
    Shape shape;
    if (q->shapes[i] && FullyDefined(q->shapes[i])) {
      shape = *q->shapes[i];
    } else {
      for (const std::vector<Tensor>& t : tuples) {
        const Shape& s = t[i].shape();
        if (shape.size() < s.size()) shape.resize(s.size(), 0);
        for (size_t d = 0; d < s.size(); ++d) shape[d] = std::max(shape[d], s[d]);
      }
      if (tuples.empty() && q->shapes[i]) {
        shape = *q->shapes[i];
        for (int64_t& d : shape) d = std::max<int64_t>(d, 0);
      }
    }
    Shape out_shape = shape;
    out_shape.insert(out_shape.begin(), take);
    const DType dtype = q->types[i];
    int64_t per = 1;
    for (int64_t d : shape) per *= d;
    // Where element e of a source of shape `s` goes in the stacked output
    // (its coordinates in the padded shape).
    auto position = [&](const Shape& s, int64_t e) {
      if (s == shape) return e;
      int64_t rest = e, at = 0, stride = 1;
      for (size_t d = s.size(); d-- > 0;) {
        at += (rest % s[d]) * stride;
        rest /= s[d];
        stride *= shape[d];
      }
      return at;
    };
    Tensor out;
    if (dtype == DType::kString) {
      std::vector<std::string> strings(static_cast<size_t>(take * per));
      for (int64_t k = 0; k < take; ++k) {
        const Tensor& t = tuples[k][i];
        for (int64_t e = 0; e < t.num_elements(); ++e) {
          strings[k * per + position(t.shape(), e)] = std::string(t.StringAt(e));
        }
      }
      TFRUN_ASSIGN_OR_RETURN(out, Tensor::FromStrings(out_shape, strings));
    } else {
      TFRUN_ASSIGN_OR_RETURN(out, c.Allocate(dtype, out_shape));
      std::memset(out.raw(), 0, out.num_bytes());
      const size_t element = Info(dtype).size;
      for (int64_t k = 0; k < take; ++k) {
        const Tensor& t = tuples[k][i];
        for (int64_t e = 0; e < t.num_elements(); ++e) {
          std::memcpy(static_cast<char*>(out.raw()) + (k * per + position(t.shape(), e)) * element,
                      static_cast<const char*>(t.raw()) + e * element, element);
        }
      }
    }
    c.outputs.push_back(std::move(out));
  }
  return Status::Ok();
}

// FixedLengthRecordReaderV2: the reader's handle, the reader made at the
// first run. hop_bytes and compressed encodings are not read.
Status FixedLengthRecordReaderKernel(KernelContext& c) {
  const std::string shared = c.StringAttr("shared_name");
  const std::string key = "reader:" + (shared.empty() ? "node:" + c.node.name : "shared:" + shared);
  auto& reader = c.variables->readers[key];
  if (reader == nullptr) {
    auto r = std::make_shared<ReaderResource>();
    r->name = fmt::format("FixedLengthRecordReader '{}'", c.node.name);
    r->header_bytes = c.IntAttr("header_bytes");
    r->record_bytes = c.IntAttr("record_bytes");
    r->footer_bytes = c.IntAttr("footer_bytes");
    for (auto [attr, value] : {std::pair<const char*, int64_t>{"header_bytes", r->header_bytes},
                               {"record_bytes", r->record_bytes}, {"footer_bytes", r->footer_bytes}}) {
      if (value < 0) return c.Fail(fmt::format("{} must be >= 0 not {}", attr, value));
    }
    if (c.IntAttr("hop_bytes") != 0 || !c.StringAttr("encoding").empty()) {
      return RuntimeError(fmt::format("node '{}': tfrun's FixedLengthRecordReader reads no hop_bytes and no "
                                      "compressed encoding", c.node.name));
    }
    reader = std::move(r);
  }
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {std::string(kContainer) + key}));
  return Status::Ok();
}

// A whole file's bytes, or TensorFlow's NotFound text. Only a regular
// file of at most 2 GiB: a device or a pipe (/dev/zero) could be read
// forever, and /proc/kcore claims terabytes.
StatusOr<std::string> ReadWholeFile(KernelContext& c, const std::string& path) {
  constexpr uintmax_t kMaxBytes = uintmax_t{1} << 31;
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    c.op_error = true;
    return RuntimeError(fmt::format("FailedPreconditionError: {} is not a regular file; tfrun reads only files",
                                    path));
  }
  if (const uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxBytes) {
    c.op_error = true;
    return RuntimeError(fmt::format("ResourceExhaustedError: {} has {} bytes; tfrun reads files of at most 2 GiB",
                                    path, size));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    c.op_error = true;
    return RuntimeError(fmt::format("NotFoundError: {}; No such file or directory", path));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// ReaderReadV2(reader, queue) -> key, value (ReaderBase::Read): the next
// record, starting the next file (a one-string element dequeued from the
// queue) when there is none or it is done. The record's key is
// "<file>:<record number>".
Status ReaderReadKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(ReaderResource * reader, LookupResource(c, 0, c.variables->readers));
  ReaderResource& r = *reader;
  while (true) {
    if (!r.working) {
      TFRUN_ASSIGN_OR_RETURN(QueueResource * q, LookupQueue(c, 1));
      if (q->elements.empty()) {
        if (!q->closed) return WouldWait(c, *q, fmt::format("is empty and {} asked for a file name", r.name));
        c.op_error = true;
        return RuntimeError(fmt::format("OutOfRangeError: {} '{}' is closed and has insufficient elements (requested "
                                        "1, current size 0)",
                                        q->KindName(), q->name));
      }
      const std::vector<Tensor> tuple = TakeOne(*q);
      if (tuple.size() != 1) return c.Fail("Expected single component queue");
      if (tuple[0].dtype() != DType::kString) return c.Fail("Expected queue with single string component");
      if (tuple[0].num_elements() != 1) return c.Fail("Expected to dequeue a one-element string tensor");
      r.work = std::string(tuple[0].StringAt(0));
      TFRUN_ASSIGN_OR_RETURN(r.contents, ReadWholeFile(c, r.work));
      r.working = true;
      r.record_number = 0;
      r.limit = static_cast<int64_t>(r.contents.size()) - r.footer_bytes;
      r.position = r.header_bytes;
      if (r.position > static_cast<int64_t>(r.contents.size())) {
        c.op_error = true;
        return RuntimeError("OutOfRangeError: reached end of file");
      }
    }
    if (r.position >= r.limit) {  // at its end: the next file
      r.working = false;
      r.contents.clear();
      continue;
    }
    if (r.position + r.record_bytes > static_cast<int64_t>(r.contents.size())) {
      c.op_error = true;
      return RuntimeError("OutOfRangeError: reached end of file");
    }
    c.outputs.clear();
    TFRUN_ASSIGN_OR_RETURN(Tensor record_key,
                           Tensor::FromStrings({}, {fmt::format("{}:{}", r.work, r.record_number)}));
    TFRUN_ASSIGN_OR_RETURN(Tensor value, Tensor::FromStrings({}, {r.contents.substr(r.position, r.record_bytes)}));
    c.outputs.push_back(std::move(record_key));
    c.outputs.push_back(std::move(value));
    r.position += r.record_bytes;
    ++r.record_number;
    return Status::Ok();
  }
}

// ReadFile(filename) -> its contents.
Status ReadFileKernel(KernelContext& c) {
  const Tensor& name = c.inputs[0];
  if (name.dtype() != DType::kString || name.rank() != 0) {
    return c.Fail(fmt::format("Input filename tensor must be scalar, but had shape: {}",
                              ShapeDebugString(name.shape())));
  }
  TFRUN_ASSIGN_OR_RETURN(const std::string contents, ReadWholeFile(c, std::string(name.StringAt(0))));
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {contents}));
  return Status::Ok();
}

// DecodeRaw(bytes, out_type, little_endian) (decode_raw_op.cc): each
// string's bytes as a vector of out_type, all strings one size.
Status DecodeRawKernel(KernelContext& c) {
  const Tensor& in = c.inputs[0];
  if (in.dtype() != DType::kString) return c.Fail("DecodeRaw decodes strings");
  int64_t size = -1;
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    const int64_t n = static_cast<int64_t>(in.StringAt(i).size());
    if (size == -1) {
      size = n;
    } else if (n != size) {
      return c.Fail(fmt::format("DecodeRaw requires input strings to all be the same size, but element {} has size "
                                "{} != {}",
                                i, size, n));
    }
  }
  Shape shape = in.shape();
  const int64_t element = static_cast<int64_t>(Info(c.node.dtype).size);
  if (size <= 0) {
    shape.push_back(0);
    return c.AllocateOutput(shape);
  }
  if (size % element != 0) {
    return c.Fail(fmt::format("Input to DecodeRaw has length {} that is not a multiple of {}, the size of {}", size,
                              element, Info(c.node.dtype).tf_name));
  }
  shape.push_back(size / element);
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  char* out = static_cast<char*>(c.output.raw());
  for (int64_t i = 0; i < in.num_elements(); ++i) std::memcpy(out + i * size, in.StringAt(i).data(), size);
  if (!c.BoolAttr("little_endian", true) && element > 1) {  // this machine is little-endian: swap each element
    for (int64_t e = 0; e < c.output.num_elements(); ++e) std::reverse(out + e * element, out + (e + 1) * element);
  }
  return Status::Ok();
}

Status QueueCloseKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(QueueResource * q, LookupQueue(c));
  q->closed = true;
  return Status::Ok();
}

Status QueueSizeKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(QueueResource * q, LookupQueue(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({}));
  c.output.data<int32_t>()[0] = static_cast<int32_t>(q->elements.size());
  return Status::Ok();
}

Status QueueIsClosedKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(QueueResource * q, LookupQueue(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput({}));
  c.output.data<bool>()[0] = q->closed;
  return Status::Ok();
}

}  // namespace

void RegisterQueueKernels(KernelRegistry* registry) {
  // A resource output's node has no dtype of its own to bind by: any.
  registry->Bind("FIFOQueueV2", kCpu, kEveryDType, QueueOpKernel<QueueKind::kFifo>);
  registry->Bind("PaddingFIFOQueueV2", kCpu, kEveryDType, QueueOpKernel<QueueKind::kPaddingFifo>);
  registry->Bind("RandomShuffleQueueV2", kCpu, kEveryDType, QueueOpKernel<QueueKind::kRandomShuffle>);
  registry->Bind("QueueEnqueueV2", kCpu, kEveryDType, EnqueueKernel<false>);
  registry->Bind("QueueEnqueueManyV2", kCpu, kEveryDType, EnqueueKernel<true>);
  registry->Bind("QueueDequeueV2", kCpu, kEveryDType, DequeueKernel<0>);
  registry->Bind("QueueDequeueManyV2", kCpu, kEveryDType, DequeueKernel<1>);
  registry->Bind("QueueDequeueUpToV2", kCpu, kEveryDType, DequeueKernel<2>);
  registry->Bind("QueueCloseV2", kCpu, kEveryDType, QueueCloseKernel);
  registry->Bind("QueueSizeV2", kCpu, DTypeSet{DType::kInt32}, QueueSizeKernel);
  registry->Bind("QueueIsClosedV2", kCpu, DTypeSet{DType::kBool}, QueueIsClosedKernel);
  registry->Bind("FixedLengthRecordReaderV2", kCpu, kEveryDType, FixedLengthRecordReaderKernel);
  registry->Bind("ReaderReadV2", kCpu, DTypeSet{DType::kString}, ReaderReadKernel);
  registry->Bind("ReadFile", kCpu, DTypeSet{DType::kString}, ReadFileKernel);
  registry->Bind("DecodeRaw", kCpu, kMovedTypes, DecodeRawKernel);
}

}  // namespace cpu
}  // namespace tfrun
