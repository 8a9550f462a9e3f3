// The summary ops a TF1 training program fetches (summary_op.cc):
// ScalarSummary and HistogramSummary write a serialized tensorflow.Summary,
// MergeSummary joins several; a program's summary writer is not tfrun's to run, but a fetched
// summary is TensorFlow's bytes. The Summary proto is written and read at
// the wire level: `repeated Value value = 1`, and in a Value `string tag =
// 1`, `float simple_value = 2`.
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include <string_view>
#include <unordered_set>

#include "kernels/cpu/cpu_eigen.h"

namespace tfrun {
namespace cpu {
namespace {

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A length-delimited field: its key, length and bytes.
void AppendBytesField(int field, std::string_view bytes, std::string* out) {
  AppendVarint(static_cast<uint64_t>(field) << 3 | 2, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

bool ReadVarint(std::string_view* in, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// One field of a message: its number, wire type and, for a
// length-delimited one, its bytes; false where the message is malformed.
bool ReadField(std::string_view* in, int* field, int* wire, std::string_view* bytes) {
  uint64_t key = 0, n = 0;
  if (!ReadVarint(in, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff) return false;
  *field = static_cast<int>(key >> 3);
  *wire = static_cast<int>(key & 7);
  switch (*wire) {
    case 0: return ReadVarint(in, &n);
    case 1: n = 8; break;
    case 5: n = 4; break;
    case 2:
      if (!ReadVarint(in, &n)) return false;
      break;
    default: return false;
  }
  if (n > in->size()) return false;
  *bytes = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

Status ScalarSummaryKernel(KernelContext& c) {
  const Tensor& tags = c.inputs[0];
  const Tensor& values = c.inputs[1];
  if (tags.shape() != values.shape()) {
    return c.Fail(fmt::format("tags and values are not the same shape: {} != {}{}", ShapeDebugString(tags.shape()),
                              ShapeDebugString(values.shape()),
                              tags.num_elements() == 1 ? fmt::format(" (tag '{}')", tags.StringAt(0)) : ""));
  }
  std::string summary;
  for (int64_t i = 0; i < tags.num_elements(); ++i) {
    std::string value;
    AppendBytesField(1, tags.StringAt(i), &value);
    const float simple = static_cast<float>(values.GetAsDouble(i));
    uint32_t bits = 0;
    std::memcpy(&bits, &simple, sizeof bits);
    // Written also when 0: simple_value is a member of a oneof.
    value.push_back(static_cast<char>(2 << 3 | 5));
    for (int b = 0; b < 4; ++b) value.push_back(static_cast<char>(bits >> (8 * b)));
    AppendBytesField(1, value, &summary);
  }
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {summary}));
  return Status::Ok();
}

void AppendDouble(double v, std::string* out) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  for (int b = 0; b < 8; ++b) out->push_back(static_cast<char>(bits >> (8 * b)));
}

// A double field of a proto3 message: left out when its bits are zero.
void AppendDoubleField(int field, double v, std::string* out) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  if (bits == 0) return;
  AppendVarint(static_cast<uint64_t>(field) << 3 | 1, out);
  AppendDouble(v, out);
}

// TensorFlow's default histogram buckets (histogram.cc): limits growing by
// 10% from 1e-12 to 1e20 and their negatives, 0 between, DBL_MAX at
// either end.
const std::vector<double>& DefaultBucketLimits() {
  static const std::vector<double>* limits = [] {
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    auto* all = new std::vector<double>();
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all->push_back(-*it);
    all->push_back(0.0);
    all->insert(all->end(), positive.begin(), positive.end());
    return all;
  }();
  return *limits;
}

// HistogramSummary(tag, values): a Summary of one Value whose `histo`
// (field 5) is TensorFlow's HistogramProto of the values: min, max, num,
// sum, sum_squares (doubles, fields 1-5), then packed bucket_limit (6) and
// bucket (7) with each run of empty buckets folded into its last one.
Status HistogramSummaryKernel(KernelContext& c) {
  const Tensor& tags = c.inputs[0];
  const Tensor& values = c.inputs[1];
  if (tags.rank() != 0) return c.Fail("tags must be scalar");
  const std::vector<double>& limits = DefaultBucketLimits();
  std::vector<double> buckets(limits.size(), 0.0);
  double min = limits.back(), max = -DBL_MAX, num = 0, sum = 0, sum_squares = 0;
  for (int64_t i = 0; i < values.num_elements(); ++i) {
    const double v = values.GetAsDouble(i);
    if (std::isnan(v)) return c.Fail(fmt::format("Nan in summary histogram for: {}", c.node.name));
    if (std::isinf(v)) return c.Fail(fmt::format("Infinity in summary histogram for: {}", c.node.name));
    buckets[std::upper_bound(limits.begin(), limits.end(), v) - limits.begin()] += 1.0;
    if (min > v) min = v;
    if (max < v) max = v;
    num += 1;
    sum += v;
    sum_squares += v * v;
  }
  std::string kept_limits, kept_buckets;
  for (size_t i = 0; i < buckets.size();) {
    double end = limits[i], count = buckets[i];
    ++i;
    if (count <= 0.0) {
      while (i < buckets.size() && buckets[i] <= 0.0) {
        end = limits[i];
        count = buckets[i];
        ++i;
      }
    }
    AppendDouble(end, &kept_limits);
    AppendDouble(count, &kept_buckets);
  }
  std::string histo;
  AppendDoubleField(1, min, &histo);
  AppendDoubleField(2, max, &histo);
  AppendDoubleField(3, num, &histo);
  AppendDoubleField(4, sum, &histo);
  AppendDoubleField(5, sum_squares, &histo);
  AppendBytesField(6, kept_limits, &histo);
  AppendBytesField(7, kept_buckets, &histo);
  std::string value;
  AppendBytesField(1, tags.StringAt(0), &value);
  AppendBytesField(5, histo, &value);
  std::string summary;
  AppendBytesField(1, value, &summary);
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {summary}));
  return Status::Ok();
}

Status MergeSummaryKernel(KernelContext& c) {
  std::string merged;
  std::unordered_set<std::string> tags;
  for (const Tensor& input : c.inputs) {
    for (int64_t i = 0; i < input.num_elements(); ++i) {
      std::string_view summary = input.StringAt(i);
      while (!summary.empty()) {
        int field = 0, wire = 0;
        std::string_view value;
        if (!ReadField(&summary, &field, &wire, &value)) return c.Fail("Could not parse one of the summary inputs");
        if (field != 1 || wire != 2) continue;  // not a Value
        std::string_view rest = value, tag;
        while (!rest.empty()) {
          int f = 0, w = 0;
          std::string_view bytes;
          if (!ReadField(&rest, &f, &w, &bytes)) return c.Fail("Could not parse one of the summary inputs");
          if (f == 1 && w == 2) tag = bytes;
        }
        if (!tag.empty() && !tags.insert(std::string(tag)).second) {
          return c.Fail(fmt::format("Duplicate tag {} found in summary inputs ", tag));
        }
        AppendBytesField(1, value, &merged);
      }
    }
  }
  TFRUN_ASSIGN_OR_RETURN(c.output, Tensor::FromStrings({}, {merged}));
  return Status::Ok();
}

}  // namespace

void RegisterSummaryKernels(KernelRegistry* registry) {
  const DTypeSet string{DType::kString};
  registry->Bind("ScalarSummary", kCpu, string, ScalarSummaryKernel);
  registry->Bind("MergeSummary", kCpu, string, MergeSummaryKernel);
  registry->Bind("HistogramSummary", kCpu, string, HistogramSummaryKernel);
}

}  // namespace cpu
}  // namespace tfrun
