#include "cli/npy_outputs.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cerrno>
#include <cstring>

#include "core/base/atomic_file.h"
#include "core/base/npy.h"

namespace tfrun {
namespace {

// `*created`: the folder is new, so a failed write removes it again.
Status EnsureDirectory(const std::string& dir, bool* created) {
  *created = false;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? Status::Ok() : BadInput(fmt::format("--out {}: not a directory", dir));
  }
  if (mkdir(dir.c_str(), 0777) != 0) {
    return BadInput(fmt::format("--out {}: cannot create directory: {}", dir, std::strerror(errno)));
  }
  *created = true;
  return Status::Ok();
}

// The folder `dir` would be made in ("a/b/" -> "a", "x" -> ".").
std::string ParentFolder(const std::string& dir) {
  const size_t slash = dir.find_last_of('/', dir.find_last_not_of('/'));
  return slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
}

}  // namespace

// Injective, so two tensors never share a file ('/' as "__" made a/b and
// a__b one file): every byte but letters, digits, '.', '_', '-' and ':' as
// %XX, as a URL escapes it (scope/w:1 -> scope%2Fw:1.npy). A NUL can no
// longer end the name early, nor a '/' leave the folder.
std::string NpyFileName(std::string_view tensor_name) {
  std::string file;
  for (const char ch : tensor_name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == ':') {
      file += ch;
    } else {
      file += fmt::format("%{:02X}", c);
    }
  }
  return file + ".npy";
}

Status CheckNpyOutputDir(const std::string& dir) {
  if (dir == "-") return BadInput("--out -: standard output cannot hold a folder of .npy files; give a folder");
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return BadInput(fmt::format("--out {}: not a directory", dir));
    if (access(dir.c_str(), W_OK) != 0) return BadInput(fmt::format("--out {}: {}", dir, std::strerror(errno)));
    return Status::Ok();
  }
  const std::string parent = ParentFolder(dir);
  if (stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return BadInput(fmt::format("--out {}: no folder {} to make it in", dir, parent));
  }
  return Status::Ok();
}

Status CheckNpyOutputNames(const std::string& dir, const Graph& graph, const std::vector<NodeOutput>& fetch,
                           const std::vector<std::string>& inputs) {
  // The folder's file system says how long a name may be; a folder not made
  // yet is on its parent's.
  struct stat st;
  const std::string probe = stat(dir.c_str(), &st) == 0 ? dir : ParentFolder(dir);
  long name_max = pathconf(probe.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  for (const NodeOutput& f : fetch) {
    const std::string output = graph.OutputName(f);
    const std::string file = NpyFileName(output);
    if (file.size() > static_cast<size_t>(name_max)) {
      return BadInput(fmt::format("--out {}: the file for '{}' would have a {}-byte name; the file system allows {}",
                                  dir, ClipForMessage(output, 60), file.size(), name_max));
    }
    if (dir.size() + 1 + file.size() >= PATH_MAX) {
      return BadInput(fmt::format("--out {}: the path for '{}' would be {} bytes; the system allows {}", dir,
                                  ClipForMessage(output, 60), dir.size() + 1 + file.size(), PATH_MAX - 1));
    }
    for (const std::string& input : inputs) {
      if (IsSameFile(dir + "/" + file, input)) {
        return BadInput(fmt::format("--out {}: the file for '{}' would be {}, an input of this run; tfrun does not "
                                    "write over its inputs",
                                    dir, ClipForMessage(output, 60), input));
      }
    }
  }
  return Status::Ok();
}

Status WriteNpyOutputs(const std::string& dir, const Graph& graph, const std::vector<NodeOutput>& fetch,
                       const std::vector<Tensor>& fetched) {
  bool created = false;
  TFRUN_RETURN_IF_ERROR(EnsureDirectory(dir, &created));
  // All files or none: a failure writing the third leaves the first two
  // unwritten too.
  Status status = Status::Ok();
  {
    FileBatch batch;
    for (size_t i = 0; i < fetch.size() && status.ok(); ++i) {
      if (!fetched[i].is_valid()) continue;  // a NoOp has no value
      status = batch.Stage(dir + "/" + NpyFileName(graph.OutputName(fetch[i])), NpyWriter(fetched[i]));
    }
    if (status.ok()) status = batch.Commit();
  }
  if (!status.ok() && created) rmdir(dir.c_str());
  return status;
}

}  // namespace tfrun
