#include "kernels/cpu/cpu_eigen.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/base/kernel_threads.h"
#include "kernels/cpu/cpu_kernels.h"

namespace tfrun {

void SetCpuThreads(int threads) { SetKernelThreads(threads); }

Status StartCpuThreads(int threads) {
  static std::atomic<bool> pool_started{false};
  if (pool_started.load()) return Status::Ok();  // the pool is made once; a later size cannot change it
  SetCpuThreads(threads);
  const int wanted = cpu::Threads();
  // Each trial thread waits until all have started (or one could not), so
  // they exist at the same time, as the pool's will.
  std::promise<void> go;
  std::shared_future<void> started = go.get_future().share();
  std::vector<std::thread> trial;
  std::string refused;
  try {
    trial.reserve(wanted);
    for (int i = 0; i < wanted; ++i) trial.emplace_back([started] { started.wait(); });
  } catch (const std::system_error& e) {
    refused = e.code().message();
  } catch (const std::bad_alloc&) {
    refused = "out of memory";
  }
  go.set_value();
  for (std::thread& t : trial) t.join();
  if (!refused.empty()) {
    return RuntimeError(fmt::format("cannot start {} CPU threads (--intra-op-threads, or one per core): {} (the "
                                    "system refused thread {})",
                                    wanted, refused, trial.size() + 1));
  }
  (void)cpu::PoolDevice();
  pool_started.store(true);
  return Status::Ok();
}

namespace cpu {

const Eigen::ThreadPoolDevice& PoolDevice() {
  // Sized by the kernel threads when first used (StartCpuThreads); a
  // kernel on one thread (ScopedKernelThreads, --intra-op-threads 1) gets
  // a device of one, which Eigen runs inline on the calling thread.
  static auto* pool = new KernelThreadPool(Threads());
  static auto* device = new Eigen::ThreadPoolDevice(pool, pool->NumThreads());
  static auto* one = new Eigen::ThreadPoolDevice(pool, 1);
  return Threads() == 1 ? *one : *device;
}

int Threads() { return KernelThreads(); }

std::vector<int64_t> IntsOf(const Tensor& t) {
  std::vector<int64_t> values(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) values[i] = IntAt(t, i);
  return values;
}

}  // namespace cpu
}  // namespace tfrun
