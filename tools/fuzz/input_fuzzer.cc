// libFuzzer target for the readers of inputs outside graph files, run under
// a 1 MB stack (tools/fuzz.sh): the first byte of an input chooses
//   odd:  the rest is a .npy file (`npy:` constants, --feed NAME=@FILE.npy);
//   0xb0: the rest is a tensor bundle (a checkpoint: CheckBundle);
//   other even: the rest is an error message, as --json's "error" reads it.
// Findings besides crashes and sanitizer reports (Check below):
//   .npy: a file that reads writes back and reads again as the same tensor;
//   message: the report is a JSON object whose "message" decodes to the
//   message, and whose "file", "line", "column" and "node" are in it.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "cli/report.h"
#include "core/base/npy.h"
#include "core/checkpoint/tensor_bundle.h"

namespace {

void Check(bool ok, const char* invariant, std::string_view detail) {
  if (ok) return;
  std::fprintf(stderr, "invariant broken: %s\n%.*s\n", invariant, static_cast<int>(std::min<size_t>(detail.size(), 2000)),
               detail.data());
  std::abort();
}

// The JSON string that starts at json[at] (the opening quote), decoded;
// nullopt if it is not one. \u00XX escapes decode to the byte.
std::optional<std::string> DecodeString(std::string_view json, size_t at, size_t* end) {
  if (at >= json.size() || json[at] != '"') return std::nullopt;
  std::string out;
  for (size_t i = at + 1; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      *end = i + 1;
      return out;
    }
    if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;  // JSON forbids raw control characters
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= json.size()) return std::nullopt;
    switch (json[i]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        if (i + 4 >= json.size()) return std::nullopt;
        const unsigned long code = std::strtoul(std::string(json.substr(i + 1, 4)).c_str(), nullptr, 16);
        if (code > 0xff) return std::nullopt;  // ErrorJson escapes control bytes only
        out += static_cast<char>(code);
        i += 4;
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

// The value of `"key":` in the report, as text (strings decoded).
std::optional<std::string> Field(std::string_view json, std::string_view key) {
  const std::string needle = "\"" + std::string(key) + "\":";
  // Keys come after the message, whose decoded text may contain the needle:
  // look after the message's end.
  size_t from = 0;
  const std::string message_key = "\"message\":";
  const size_t message_at = json.find(message_key);
  if (key != "message" && key != "kind" && key != "exit_code" && message_at != std::string_view::npos) {
    size_t end = 0;
    if (!DecodeString(json, message_at + message_key.size(), &end)) return std::nullopt;
    from = end;
  }
  const size_t at = json.find(needle, from);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t value = at + needle.size();
  if (value < json.size() && json[value] == '"') {
    size_t end = 0;
    return DecodeString(json, value, &end);
  }
  size_t end = value;
  while (end < json.size() && json[end] >= '0' && json[end] <= '9') ++end;
  return std::string(json.substr(value, end - value));
}

void CheckMessage(std::string_view message) {
  const std::string json = tfrun::ErrorJson(tfrun::Status(tfrun::ErrorKind::kBadInput, std::string(message)));
  Check(json.rfind("{\"kind\":\"bad_input\",\"exit_code\":2,\"message\":", 0) == 0 && json.back() == '}',
        "the error report is one JSON object", json);
  const std::optional<std::string> decoded = Field(json, "message");
  Check(decoded && *decoded == message, "the report's message decodes to the message", json);
  for (const char* key : {"file", "line", "column", "node"}) {
    if (const std::optional<std::string> v = Field(json, key)) {
      Check(!v->empty() && message.find(*v) != std::string_view::npos, "the report's location is in the message", json);
    }
  }
}

void CheckNpy(std::string_view bytes) {
  static const std::string dir = [] {
    char path[] = "/tmp/tfrun-input-fuzzer-XXXXXX";
    return std::string(mkdtemp(path) ? path : "/tmp");
  }();
  const std::string in = dir + "/in.npy", again = dir + "/again.npy";
  FILE* f = std::fopen(in.c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  tfrun::StatusOr<tfrun::Tensor> t = tfrun::ReadNpy(in);
  if (!t.ok()) {
    Check(t.status().kind() == tfrun::ErrorKind::kBadInput && t.status().message().find('\n') == std::string::npos &&
              t.status().message().size() < 1000,
          "a bad .npy file is one readable line of bad input", t.status().message());
    return;
  }
  Check(tfrun::WriteNpy(again, *t).ok(), "a .npy file that reads can be written", in);
  tfrun::StatusOr<tfrun::Tensor> back = tfrun::ReadNpy(again);
  Check(back.ok(), "a written .npy file reads", back.ok() ? "" : back.status().message());
  Check(back->dtype() == t->dtype() && back->shape() == t->shape() && back->num_bytes() == t->num_bytes() &&
            std::memcmp(back->raw(), t->raw(), t->num_bytes()) == 0,
        "a .npy file reads back as what was written", in);
}

}  // namespace

// A tensor bundle (core/checkpoint): two little-endian bytes giving the
// index's length, the index, then data shard 0. Every tensor it lists is
// read as its own dtype and as float32: a value or an error, never a read
// outside a buffer.
void CheckBundle(std::string_view body) {
  if (body.size() < 2) return;
  const size_t index_size = static_cast<uint8_t>(body[0]) | static_cast<size_t>(static_cast<uint8_t>(body[1])) << 8;
  if (index_size > body.size() - 2) return;
  const std::string index(body.substr(2, index_size));
  const std::string data(body.substr(2 + index_size));
  tfrun::StatusOr<tfrun::TensorBundleReader> reader = tfrun::TensorBundleReader::FromIndex(
      index, "fuzz", [&](int, int64_t offset, int64_t bytes, std::string* out) -> tfrun::Status {
        if (offset < 0 || bytes < 0 || offset > static_cast<int64_t>(data.size()) ||
            bytes > static_cast<int64_t>(data.size()) - offset) {
          return tfrun::RuntimeError("OutOfRangeError: Read less bytes than requested");
        }
        *out = data.substr(static_cast<size_t>(offset), static_cast<size_t>(bytes));
        return tfrun::Status::Ok();
      });
  if (!reader.ok()) return;
  for (const std::string& name : reader->Names()) {
    for (tfrun::DType dtype : tfrun::kAllDTypes) {
      tfrun::StatusOr<tfrun::Tensor> t = reader->Read(name, dtype);
      Check(!t.ok() || t->dtype() == dtype, "a tensor read as another dtype", name);
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] == 0xb0) {
    CheckBundle(body);
  } else if (data[0] & 1) {
    CheckNpy(body);
  } else {
    CheckMessage(body);
  }
  return 0;
}
