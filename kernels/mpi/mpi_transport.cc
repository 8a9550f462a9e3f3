#include "kernels/mpi/mpi_transport.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "kernels/mpi/mpi_plugin.h"

namespace tfrun {
namespace {

bool ReadIntEnv(const char* name, int* out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > INT_MAX) return false;
  *out = static_cast<int>(x);
  return true;
}

std::string ExecutableDir() {
  std::vector<char> buf(4096);
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return ".";
  std::string path(buf.data(), n);
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Where tools/install.sh puts it (PREFIX/bin/tfrun, PREFIX/lib/tfrun/),
// beside the binary, or where Bazel builds it (bazel-bin/cli/tfrun and
// bazel-bin/kernels/mpi/libtfrun_mpi.so, also in runfiles).
std::vector<std::string> PluginSearchList() {
  std::vector<std::string> search;
  if (const char* p = std::getenv("TFRUN_MPI_PLUGIN")) search.emplace_back(p);
  const std::string dir = ExecutableDir();
  search.push_back(dir + "/../lib/tfrun/libtfrun_mpi.so");
  search.push_back(dir + "/libtfrun_mpi.so");
  search.push_back(dir + "/../kernels/mpi/libtfrun_mpi.so");
  return search;
}

class MpiTransport : public Transport {
 public:
  MpiTransport(const TfrunMpiApi* api, int rank, int size, int max_tag)
      : api_(api), rank_(rank), size_(size), max_tag_(max_tag) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int max_tag() const override { return max_tag_; }

  StatusOr<int64_t> StartSend(int to, int tag, const void* data, size_t bytes) override {
    void* request = nullptr;
    TFRUN_RETURN_IF_ERROR(Check(api_->isend(to, tag, data, bytes, &request), "MPI_Isend", bytes));
    requests_[next_] = request;
    return next_++;
  }

  StatusOr<bool> SendDone(int64_t id) override {
    auto it = requests_.find(id);
    if (it == requests_.end()) return true;
    int done = 0;
    TFRUN_RETURN_IF_ERROR(Check(api_->test(it->second, &done), "MPI_Test", 0));
    if (done) requests_.erase(it);
    return done != 0;
  }

  StatusOr<std::optional<Arrived>> Probe(int from, int tag) override {
    int found = 0, source = 0;
    size_t bytes = 0;
    TFRUN_RETURN_IF_ERROR(Check(api_->iprobe(from, tag, &found, &source, &bytes), "MPI_Iprobe", 0));
    if (!found) return std::optional<Arrived>();
    return std::optional<Arrived>(Arrived{source, bytes});
  }

  Status Receive(int from, int tag, void* data, size_t bytes) override {
    return Check(api_->recv(from, tag, data, bytes), "MPI_Recv", bytes);
  }

  void Shutdown(bool abandon_sends) override {
    if (abandon_sends) {
      for (auto& [id, request] : requests_) api_->cancel(request);
      requests_.clear();
    }
    api_->finalize();
  }

 private:
  Status Check(int code, const char* call, size_t bytes) const {
    if (code == 0) return Status::Ok();
    char text[512];
    api_->error_string(code, text, sizeof text);
    if (bytes > INT_MAX) {
      return RuntimeError(fmt::format("{}: a tensor of {} bytes is over MPI's 2 GiB message limit", call, bytes));
    }
    return RuntimeError(fmt::format("{} failed: {}", call, text));
  }

  const TfrunMpiApi* api_;
  int rank_;
  int size_;
  int max_tag_;
  std::map<int64_t, void*> requests_;
  int64_t next_ = 1;
};

}  // namespace

MpiLaunch DetectMpiLaunch() {
  MpiLaunch launch;
  const std::pair<const char*, const char*> kRankAndSize[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"},
  };
  for (const auto& [rank, size] : kRankAndSize) {
    if (ReadIntEnv(rank, &launch.rank) && ReadIntEnv(size, &launch.size)) {
      launch.launched = true;
      return launch;
    }
  }
  return MpiLaunch{};
}

StatusOr<std::unique_ptr<Transport>> StartMpiTransport() {
  std::vector<std::string> tried;
  for (const std::string& path : PluginSearchList()) {
    // Global: OpenMPI's own components resolve libmpi's symbols.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      tried.push_back(fmt::format("{} ({})", path, why ? why : "cannot open"));
      continue;
    }
    using ApiFn = const TfrunMpiApi* (*)();
    auto get_api = reinterpret_cast<ApiFn>(dlsym(lib, "tfrun_mpi_api_v1"));
    if (get_api == nullptr) {
      tried.push_back(fmt::format("{} (no symbol tfrun_mpi_api_v1)", path));
      continue;
    }
    const TfrunMpiApi* api = get_api();
    int rank = 0, size = 0, max_tag = 0, cuda_aware = 0;
    if (const int rc = api->init(&rank, &size, &max_tag, &cuda_aware); rc != 0) {
      char text[512];
      api->error_string(rc, text, sizeof text);
      return RuntimeError(fmt::format("MPI_Init failed: {}", text));
    }
    // Tensors in GPU memory are staged through host memory either way
    // (executor.cc): a CUDA-aware library is not relied on yet.
    (void)cuda_aware;
    return std::unique_ptr<Transport>(new MpiTransport(api, rank, size, max_tag));
  }
  return RuntimeError(fmt::format(
      "this graph's cluster runs on MPI, but tfrun's MPI plugin libtfrun_mpi.so could not be loaded; tried {}. "
      "Install tfrun with tools/install.sh PREFIX (PREFIX/bin/tfrun finds PREFIX/lib/tfrun/libtfrun_mpi.so) or "
      "set TFRUN_MPI_PLUGIN to the plugin's path; the plugin needs OpenMPI (Debian's openmpi-bin)",
      fmt::join(tried, ", ")));
}

}  // namespace tfrun
