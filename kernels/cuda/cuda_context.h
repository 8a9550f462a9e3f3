// What the CUDA kernels share (cuda_backend.cc, training_kernels.cc): a
// logical GPU's context (its stream, library handles and timing events)
// and the steps every kernel takes before its launch.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/devices/device_queue.h"
#include "core/runtime/kernel_registry.h"
#include "kernels/cuda/cublas.h"
#include "kernels/cuda/cudnn.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/staging_pool.h"

namespace tfrun {

#define TFRUN_CUDA_CHECK(call)                                                                        \
  do {                                                                                                \
    cudaError_t _e = (call);                                                                          \
    if (_e != cudaSuccess) return RuntimeError(fmt::format("{} failed: {}", #call, cudaGetErrorString(_e))); \
  } while (0)

// What a logical GPU's kernels need: its CUDA ordinal, stream and cuBLAS
// handle (made on first use), and the events that time its nodes and order
// its stream against the others (DeviceQueue).
struct CudaContext final : DeviceQueue {
  int ordinal = 0;
  bool tf32 = false;
  std::mutex mu;  // held by kernels while they use the cuBLAS or cuDNN handle
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cudaEvent_t order_event = nullptr;        // "the stream got this far", for other streams to wait on
  std::vector<cudaEvent_t> timing_events;   // a (start, end) pair per span, reused across runs
  int spans = 0;
  std::unique_ptr<StagingPool> staging;     // pinned buffers for copies onto this device, made on first use

  ~CudaContext() override {
    // Process exit: the driver may already be shutting down, so errors are moot.
    for (cudaEvent_t e : timing_events) cudaEventDestroy(e);
    if (order_event != nullptr) cudaEventDestroy(order_event);
  }

  Status Activate() {
    TFRUN_CUDA_CHECK(cudaSetDevice(ordinal));
    if (stream == nullptr) TFRUN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (order_event == nullptr) TFRUN_CUDA_CHECK(cudaEventCreateWithFlags(&order_event, cudaEventDisableTiming));
    return Status::Ok();
  }
  StagingPool& Staging() {
    if (staging == nullptr) {
      const int device = ordinal;
      staging = std::make_unique<StagingPool>(StagingHooks{
          [](size_t bytes) -> void* {
            void* p = nullptr;
            if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
              cudaGetLastError();
              return nullptr;
            }
            return p;
          },
          [](void* p) { cudaFreeHost(p); },
          [device]() -> void* {
            cudaEvent_t e = nullptr;  // an event belongs to the device whose stream records it
            if (cudaSetDevice(device) != cudaSuccess ||
                cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
              cudaGetLastError();
              return nullptr;
            }
            return e;
          },
          [](void* e) { return cudaEventQuery(static_cast<cudaEvent_t>(e)) == cudaSuccess; },
          [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); },
      });
    }
    return *staging;
  }
  // Copies `bytes` from `src` (host memory in any state) to `dst` on this
  // device through a staging buffer: the host source may be freed as soon
  // as this returns; the buffer is reused once the copy is done.
  Status CopyFromHost(void* dst, const void* src, size_t bytes) {
    TFRUN_RETURN_IF_ERROR(Activate());
    TFRUN_ASSIGN_OR_RETURN(StagingPool::Lease lease, Staging().Borrow(bytes));
    std::memcpy(lease.data, src, bytes);
    TFRUN_RETURN_IF_ERROR(Activate());  // the pool may have made an event on this device
    const cudaError_t copied = cudaMemcpyAsync(dst, lease.data, bytes, cudaMemcpyHostToDevice, stream);
    const cudaError_t marked = copied == cudaSuccess ? cudaEventRecord(static_cast<cudaEvent_t>(lease.marker), stream)
                                                     : copied;
    Staging().Return(lease);
    if (marked != cudaSuccess) {
      return RuntimeError(fmt::format("copy to GPU failed: {}", cudaGetErrorString(marked)));
    }
    return Status::Ok();
  }
  // cuBLAS and cuDNN handles on this stream, made on first use.
  Status Cublas(const cuda::CublasApi** api) {
    TFRUN_ASSIGN_OR_RETURN(*api, cuda::Cublas());
    auto check = [&](cublasStatus_t s, const char* call) {
      return s == CUBLAS_STATUS_SUCCESS ? Status::Ok()
                                        : RuntimeError(fmt::format("{} failed: {}", call, (*api)->status_string(s)));
    };
    if (cublas == nullptr) TFRUN_RETURN_IF_ERROR(check((*api)->create(&cublas), "cublasCreate"));
    return check((*api)->set_stream(cublas, stream), "cublasSetStream");
  }
  Status Cudnn(const cuda::CudnnApi** api) {
    TFRUN_ASSIGN_OR_RETURN(*api, cuda::Cudnn());
    auto check = [&](cudnnStatus_t s, const char* call) {
      return s == CUDNN_STATUS_SUCCESS ? Status::Ok()
                                       : RuntimeError(fmt::format("{} failed: {}", call, (*api)->error_string(s)));
    };
    if (cudnn == nullptr) TFRUN_RETURN_IF_ERROR(check((*api)->create(&cudnn), "cudnnCreate"));
    return check((*api)->set_stream(cudnn, stream), "cudnnSetStream");
  }
  // Makes this stream wait until `other`'s work queued so far is done,
  // without blocking the host.
  Status WaitFor(CudaContext& other) {
    TFRUN_RETURN_IF_ERROR(other.Activate());
    TFRUN_CUDA_CHECK(cudaEventRecord(other.order_event, other.stream));
    TFRUN_RETURN_IF_ERROR(Activate());
    TFRUN_CUDA_CHECK(cudaStreamWaitEvent(stream, other.order_event, 0));
    return Status::Ok();
  }

  StatusOr<int> BeginSpan() override {
    TFRUN_RETURN_IF_ERROR(Activate());
    const size_t first = 2 * static_cast<size_t>(spans);
    while (timing_events.size() < first + 2) {
      cudaEvent_t e = nullptr;
      TFRUN_CUDA_CHECK(cudaEventCreate(&e));
      timing_events.push_back(e);
    }
    TFRUN_CUDA_CHECK(cudaEventRecord(timing_events[first], stream));
    return spans++;
  }
  Status EndSpan(int span) override {
    TFRUN_RETURN_IF_ERROR(Activate());
    TFRUN_CUDA_CHECK(cudaEventRecord(timing_events[2 * static_cast<size_t>(span) + 1], stream));
    return Status::Ok();
  }
  StatusOr<std::vector<SpanTime>> Finish() override {
    // The spans are forgotten whatever happens: a failed run must not leave
    // the next one unrecorded events (or this run's times).
    std::vector<SpanTime> times(static_cast<size_t>(spans));
    spans = 0;
    TFRUN_RETURN_IF_ERROR(Activate());
    TFRUN_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (size_t i = 0; i < times.size(); ++i) {
      float start = 0, elapsed = 0;
      TFRUN_CUDA_CHECK(cudaEventElapsedTime(&start, timing_events[0], timing_events[2 * i]));
      TFRUN_CUDA_CHECK(cudaEventElapsedTime(&elapsed, timing_events[2 * i], timing_events[2 * i + 1]));
      times[i] = {start, elapsed};
    }
    return times;
  }
};

// The context of the device a kernel runs on (Device::context).
inline CudaContext& ContextOf(KernelContext& c) { return *static_cast<CudaContext*>(c.device_context); }

std::optional<cuda::ElementType> ElementTypeOf(DType d);

// A launch's cudaError_t (0: success) as a Status naming `what`.
Status LaunchResult(int error, const char* what);

// What every elementwise kernel does before its launch: the element type
// of the node's dtype, its device's context made current, the output of
// `shape` (computed from the inputs, kernel_shapes.h) allocated.
struct Elementwise {
  cuda::ElementType type;
  CudaContext* ctx;
};
StatusOr<Elementwise> PrepareElementwise(KernelContext& c, const StatusOr<Shape>& shape);

// Binds the kernels of training graphs (training_kernels.cc).
void RegisterCudaTrainingKernels(KernelRegistry* registry);

}  // namespace tfrun
