#include "core/base/npy.h"

#include "core/base/atomic_file.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string_view>

namespace tfrun {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct NpyDescr {
  const char* descr;
  DType dtype;
};
constexpr NpyDescr kDescrs[] = {
    {"<f4", DType::kFloat32}, {"<f8", DType::kFloat64},
    {"<f2", DType::kFloat16}, {"<i4", DType::kInt32},
    {"<i8", DType::kInt64},   {"|b1", DType::kBool},
    {"|u1", DType::kUInt8},   {"<u8", DType::kUInt64},
};

// NumPy's header limit (numpy/lib/format.py, _MAX_HEADER_SIZE).
constexpr uint32_t kMaxHeaderBytes = 10000;

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// The header is a Python dict literal, e.g. "{'descr': '<f4',
// 'fortran_order': False, 'shape': (2, 3), }", which NumPy reads with
// ast.literal_eval. Parsed by hand in one pass (libstdc++'s regular expressions recursed once per
// character and overflowed the stack on long headers). Returns "" or what
// is wrong.
std::string ParseNpyHeader(std::string_view h, NpyHeader* out) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r')) ++i;
  };
  auto take = [&](char c) {
    skip_space();
    if (i < h.size() && h[i] == c) {
      ++i;
      return true;
    }
    return false;
  };
  // A quoted string without escapes (NumPy writes none in these keys).
  auto quoted = [&](std::string* s) {
    skip_space();
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) return false;
    const char q = h[i++];
    const size_t end = h.find(q, i);
    if (end == std::string_view::npos) return false;
    s->assign(h.substr(i, end - i));
    i = end + 1;
    return true;
  };
  if (!take('{')) return "header is not a dictionary";
  bool has_descr = false, has_order = false, has_shape = false;
  while (!take('}')) {
    std::string key;
    if (!quoted(&key) || !take(':')) return "cannot parse the header";
    skip_space();
    if (key == "descr") {
      has_descr = true;
      if (!quoted(&out->descr)) {
        // NumPy's texts: a list is a structured dtype, anything else no dtype.
        if (i < h.size() && h[i] == '[') return "unsupported dtype: a structured dtype (a list of fields)";
        return "descr is not a valid dtype descriptor";
      }
    } else if (key == "fortran_order") {
      has_order = true;
      if (h.substr(i, 4) == "True") {
        out->fortran_order = true;
        i += 4;
      } else if (h.substr(i, 5) == "False") {
        i += 5;
      } else {
        return "fortran_order is not a valid bool";
      }
    } else if (key == "shape") {
      has_shape = true;
      if (!take('(')) return "shape is not valid";
      while (!take(')')) {
        skip_space();
        const size_t start = i;
        while (i < h.size() && h[i] >= '0' && h[i] <= '9') ++i;
        if (i == start) return "shape is not valid";
        if (i - start > 18) return "dimension too large";
        out->shape.push_back(std::stoll(std::string(h.substr(start, i - start))));
        if (!take(',')) {
          if (!take(')')) return "shape is not valid";
          break;
        }
      }
    } else {
      return "header does not contain the correct keys";
    }
    if (!take(',')) {
      if (!take('}')) return "cannot parse the header";
      break;
    }
  }
  if (!has_descr) return "header has no 'descr'";
  if (!has_order) return "header has no 'fortran_order'";
  if (!has_shape) return "header has no 'shape'";
  return "";
}

}  // namespace

StatusOr<Tensor> ReadNpy(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return BadInput(fmt::format("{}: not a readable .npy file: {}", path, why));
  };
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return bad(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return bad(S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return bad(std::strerror(errno));
  char magic[8];
  if (!in.read(magic, 8)) return bad("truncated before the header");
  if (std::memcmp(magic, kMagic, 6) != 0) return bad("bad magic string");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) return bad("truncated header");
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) return bad("truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return bad(fmt::format("unsupported format version {}", major));
  }
  // NumPy refuses longer headers (numpy/lib/format.py, _MAX_HEADER_SIZE),
  // so no file it wrote has one; reading them first would cost the memory.
  const off_t prefix_bytes = major == 1 ? 10 : 12;
  if (st.st_size < prefix_bytes + static_cast<off_t>(header_len)) return bad("truncated header");
  if (header_len > kMaxHeaderBytes) {
    return bad(fmt::format("Header info length ({}) is large and may not be safe to load securely.", header_len));
  }
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return bad("truncated header");

  NpyHeader parsed;
  if (std::string why = ParseNpyHeader(header, &parsed); !why.empty()) return bad(why);
  const std::string& descr = parsed.descr;
  const bool fortran = parsed.fortran_order;
  const Shape& shape = parsed.shape;

  const NpyDescr* found = nullptr;
  for (const NpyDescr& d : kDescrs) {
    if (descr == d.descr || (descr.size() == 3 && descr[0] == '=' &&
                             descr.substr(1) == std::string(d.descr).substr(1))) {
      found = &d;
    }
  }
  if (found == nullptr) {
    return bad(fmt::format("unsupported dtype '{}' (supported: <f4 <f8 <f2 <i4 <i8 |b1 |u1 <u8)", ClipForMessage(descr)));
  }
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    return bad(fmt::format("rank {} exceeds the maximum of {}", shape.size(), kMaxRank));
  }
  std::optional<int64_t> n = NumElements(shape);
  if (!n) return bad("element count overflows");

  in.seekg(0, std::ios::end);
  const std::streamoff file_size = in.tellg();
  const std::streamoff data_start = (major == 1 ? 10 : 12) + header_len;
  const size_t elem = Info(found->dtype).size;
  int64_t data_bytes = 0;
  if (__builtin_mul_overflow(*n, static_cast<int64_t>(elem), &data_bytes)) return bad("byte count overflows");
  if (file_size - data_start < static_cast<std::streamoff>(data_bytes)) {
    return bad(fmt::format("truncated data: shape {} needs {} bytes, file has {}",
                           ShapeTupleString(shape), data_bytes, file_size - data_start));
  }
  in.seekg(data_start);
  TFRUN_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateHost(found->dtype, shape));
  if (!fortran || shape.size() < 2) {
    in.read(static_cast<char*>(t.raw()), t.num_bytes());
    return t;
  }
  // Fortran order: element (i0, i1, ...) is at sum(i_k * prod(d_<k)).
  std::vector<char> raw(t.num_bytes());
  in.read(raw.data(), raw.size());
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t c = 0; c < *n; ++c) {
    int64_t f = 0, stride = 1;
    for (int k = 0; k < rank; ++k) {
      f += idx[k] * stride;
      stride *= shape[k];
    }
    std::memcpy(static_cast<char*>(t.raw()) + c * elem, raw.data() + f * elem, elem);
    for (int k = rank - 1; k >= 0; --k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return t;
}

std::function<bool(FILE*)> NpyWriter(const Tensor& t) {
  const bool widen = t.dtype() == DType::kBFloat16;
  const bool strings = t.dtype() == DType::kString;
  // NumPy's S dtype: every element NUL-padded to the longest (at least 1).
  size_t string_width = 1;
  for (int64_t i = 0; strings && i < t.num_elements(); ++i) string_width = std::max(string_width, t.StringAt(i).size());
  const std::string descr = strings ? fmt::format("|S{}", string_width) : std::string(Info(t.dtype()).npy_descr);
  std::string shape_text;
  for (int64_t d : t.shape()) shape_text += fmt::format("{}, ", d);
  if (t.rank() > 1) shape_text.resize(shape_text.size() - 2);
  if (t.rank() == 1) shape_text.resize(shape_text.size() - 1);
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   descr, shape_text);
  // Pad so the data starts at a multiple of 64 bytes, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  uint16_t len = static_cast<uint16_t>(header.size());
  const unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                    static_cast<unsigned char>(len & 0xff), static_cast<unsigned char>(len >> 8)};
  const std::string head = std::string(reinterpret_cast<const char*>(prefix), sizeof prefix) + header;
  return [t, widen, strings, string_width, head](FILE* f) {
    bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size();
    if (ok && widen) {
      const Eigen::bfloat16* src = t.data<Eigen::bfloat16>();
      std::vector<float> chunk;
      for (int64_t i = 0; ok && i < t.num_elements(); i += 65536) {
        const int64_t n = std::min<int64_t>(65536, t.num_elements() - i);
        chunk.resize(n);
        for (int64_t j = 0; j < n; ++j) chunk[j] = static_cast<float>(src[i + j]);
        ok = std::fwrite(chunk.data(), sizeof(float), n, f) == static_cast<size_t>(n);
      }
    } else if (ok && strings) {
      std::string padded;
      for (int64_t i = 0; ok && i < t.num_elements(); ++i) {
        padded.assign(t.StringAt(i));
        padded.resize(string_width, '\0');
        ok = std::fwrite(padded.data(), 1, string_width, f) == string_width;
      }
    } else if (ok) {
      ok = std::fwrite(t.raw(), 1, t.num_bytes(), f) == t.num_bytes();
    }
    return ok;
  };
}

Status WriteNpy(const std::string& path, const Tensor& t) { return WriteFileAtomically(path, NpyWriter(t)); }

}  // namespace tfrun
