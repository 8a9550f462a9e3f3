// Eigen's thread pool for threads that run kernels: each worker flushes
// denormals from its start, as TensorFlow's intra-op threads do
// (denormals.h), so a kernel computes the same on any of them.
#pragma once

#define EIGEN_USE_THREADS
#include <functional>
#include <unsupported/Eigen/CXX11/ThreadPool>
#include <utility>

#include "core/base/denormals.h"

namespace tfrun {

struct KernelThreadEnvironment : Eigen::StlThreadEnvironment {
  EnvThread* CreateThread(std::function<void()> f) {
    return new EnvThread([f = std::move(f)] {
      FlushDenormalsOnThisThread();
      f();
    });
  }
};

using KernelThreadPool = Eigen::ThreadPoolTempl<KernelThreadEnvironment>;

}  // namespace tfrun
