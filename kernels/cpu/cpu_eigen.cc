#include "kernels/cpu/cpu_eigen.h"

#include <algorithm>
#include <thread>

#include "kernels/cpu/cpu_kernels.h"

namespace tfrun {
namespace {

int g_threads = 0;  // SetCpuThreads: 0 is one per core

}  // namespace

void SetCpuThreads(int threads) { g_threads = threads; }

namespace cpu {

const Eigen::ThreadPoolDevice& PoolDevice() {
  static auto* pool = new Eigen::ThreadPool(Threads());
  static auto* device = new Eigen::ThreadPoolDevice(pool, pool->NumThreads());
  return *device;
}

int Threads() { return g_threads > 0 ? g_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::vector<int64_t> IntsOf(const Tensor& t) {
  std::vector<int64_t> values(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) values[i] = IntAt(t, i);
  return values;
}

}  // namespace cpu
}  // namespace tfrun
