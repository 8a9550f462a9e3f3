#include "kernels/cuda/cuda_backend.h"

#include "core/runtime/kernel_shapes.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/base/block_pool.h"
#include "kernels/cuda/cublas.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/cuda_platform.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/staging_pool.h"

namespace tfrun {
namespace {

// One logical GPU's memory: a BlockPool over cudaMalloc'd regions (the
// whole limit on first use, or growing regions with allow_growth; nothing is
// cudaFree'd before exit, since cudaFree waits for the whole device). Work
// on one device runs on one stream in order, so a block freed by a queued
// node is safe for the next node there; copies from other streams wait for
// this stream first (CopyBetweenGpus).
class CudaAllocator final : public Allocator {
 public:
  // `limit` may be LogicalGpu::kLimitOnFirstUse: TensorFlow's default limit,
  // from the free memory measured on the first allocation.
  CudaAllocator(std::string name, std::shared_ptr<CudaContext> context, int64_t limit, int cc_major,
                bool allow_growth)
      : name_(std::move(name)), context_(std::move(context)), limit_(limit), cc_major_(cc_major),
        allow_growth_(allow_growth) {}
  const std::string& name() const override { return name_; }
  bool host_accessible() const override { return false; }
  int64_t limit_bytes() const override { return limit_; }
  CudaContext& context() const { return *context_; }
  Status CopyDeviceBytes(Allocator* dst_allocator, void* dst, Allocator* src_allocator, const void* src,
                         size_t bytes) override;

  void* Allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!context_->Activate().ok()) return nullptr;
    if (pool_ == nullptr) {
      if (limit_ == LogicalGpu::kLimitOnFirstUse) {
        StatusOr<int64_t> free_bytes = CudaFreeBytes(context_->ordinal);
        if (!free_bytes.ok()) return nullptr;
        limit_ = DefaultMemoryLimit(*free_bytes, cc_major_);
      }
      const int ordinal = context_->ordinal;
      pool_ = std::make_unique<BlockPool>(
          static_cast<size_t>(limit_), allow_growth_,
          [ordinal](size_t region) -> void* {
            void* p = nullptr;
            if (cudaSetDevice(ordinal) != cudaSuccess || cudaMalloc(&p, region) != cudaSuccess) {
              cudaGetLastError();  // the refusal becomes TensorFlow's OOM error, not a sticky one
              return nullptr;
            }
            return p;
          },
          [ordinal](void* region) {
            // cudaFree acts on the current device: make it the region's.
            if (cudaSetDevice(ordinal) == cudaSuccess) cudaFree(region);
          });
    }
    void* p = pool_->Allocate(bytes);
    if (p != nullptr) {
      sizes_[p] = bytes;
      RecordAllocate(bytes);
    }
    return p;
  }

  void Deallocate(void* ptr, size_t) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.find(ptr);
    if (it == sizes_.end()) return;
    RecordDeallocate(it->second);
    sizes_.erase(it);
    pool_->Deallocate(ptr);
  }

  int64_t reserved_bytes() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return pool_ ? static_cast<int64_t>(pool_->reserved_bytes()) : 0;
  }

 private:
  std::string name_;
  std::shared_ptr<CudaContext> context_;
  int64_t limit_;
  int cc_major_;
  bool allow_growth_;
  mutable std::mutex mu_;
  std::unique_ptr<BlockPool> pool_;
  std::map<void*, size_t> sizes_;  // live allocations, as requested
};


// Peer access from CUDA device `from` to `to`'s memory, enabled once per
// ordered pair when the hardware has it (TensorFlow enables every pair both
// ways at start-up; here only pairs that copy pay for it).
bool PeerAccess(int from, int to) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, bool> enabled;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = enabled.try_emplace({from, to}, false);
  if (inserted) {
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, from, to) == cudaSuccess && can != 0 && cudaSetDevice(from) == cudaSuccess) {
      const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
      it->second = e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled;
    }
    cudaGetLastError();  // a refused enable is not an error of the next call
  }
  return it->second;
}

// GPU to GPU. The copy runs on the source stream, after the producer, and
// after the destination stream's work so far (the destination block may
// have been freed by a node still queued there); the destination stream
// then waits for the copy. No stream blocks the host.
Status CopyBetweenGpus(CudaContext& dst_ctx, void* dst, CudaContext& src_ctx, const void* src, size_t bytes) {
  TFRUN_RETURN_IF_ERROR(src_ctx.WaitFor(dst_ctx));
  if (dst_ctx.ordinal == src_ctx.ordinal) {  // two logical GPUs on one physical GPU
    TFRUN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, src_ctx.stream));
  } else if (PeerAccess(src_ctx.ordinal, dst_ctx.ordinal) && PeerAccess(dst_ctx.ordinal, src_ctx.ordinal)) {
    TFRUN_RETURN_IF_ERROR(src_ctx.Activate());
    TFRUN_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_ctx.ordinal, src, src_ctx.ordinal, bytes, src_ctx.stream));
  } else {
    // No peer path: through a pinned staging buffer of the destination's
    // pool. The destination stream waits for the source's half with an
    // event, and the buffer is lent again once its second half is done: no
    // allocation and no host wait per copy.
    TFRUN_ASSIGN_OR_RETURN(StagingPool::Lease lease, dst_ctx.Staging().Borrow(bytes));
    TFRUN_RETURN_IF_ERROR(src_ctx.Activate());
    cudaError_t e = cudaMemcpyAsync(lease.data, src, bytes, cudaMemcpyDeviceToHost, src_ctx.stream);
    Status ordered = e == cudaSuccess ? dst_ctx.WaitFor(src_ctx) : Status::Ok();
    if (e == cudaSuccess && ordered.ok()) {
      e = cudaMemcpyAsync(dst, lease.data, bytes, cudaMemcpyHostToDevice, dst_ctx.stream);
      if (e == cudaSuccess) e = cudaEventRecord(static_cast<cudaEvent_t>(lease.marker), dst_ctx.stream);
    }
    dst_ctx.Staging().Return(lease);
    TFRUN_RETURN_IF_ERROR(ordered);
    if (e != cudaSuccess) return RuntimeError(fmt::format("copy between GPUs failed: {}", cudaGetErrorString(e)));
    return Status::Ok();
  }
  return dst_ctx.WaitFor(src_ctx);
}

Status CudaAllocator::CopyDeviceBytes(Allocator* dst_allocator, void* dst, Allocator* src_allocator, const void* src,
                                      size_t bytes) {
  auto* dst_gpu = dynamic_cast<CudaAllocator*>(dst_allocator);
  auto* src_gpu = dynamic_cast<CudaAllocator*>(src_allocator);
  if (dst_gpu != nullptr && src_gpu != nullptr) {
    return CopyBetweenGpus(dst_gpu->context(), dst, src_gpu->context(), src, bytes);
  }
  if (dst_gpu != nullptr) {
    // The executor frees the host source right after this returns, which
    // CUDA's contract for pageable memory does not cover: stage it.
    return dst_gpu->context().CopyFromHost(dst, src, bytes);
  }
  // To the host: the reader is host code, so wait for this stream only.
  CudaContext& ctx = src_gpu->context();
  TFRUN_RETURN_IF_ERROR(ctx.Activate());
  TFRUN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx.stream));
  TFRUN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return Status::Ok();
}

Status MatMulKernel(KernelContext& c) {
  static const std::map<DType, cuda::GemmType> kTypes = {{DType::kFloat32, cuda::GemmType::kFloat32},
                                                          {DType::kFloat64, cuda::GemmType::kFloat64},
                                                          {DType::kFloat16, cuda::GemmType::kFloat16},
                                                          {DType::kBFloat16, cuda::GemmType::kBFloat16}};
  auto type = kTypes.find(c.node.dtype);
  if (type == kTypes.end()) return RuntimeError(fmt::format("no GPU MatMul for {}", Name(c.node.dtype)));
  CudaContext& ctx = ContextOf(c);
  std::lock_guard<std::mutex> lock(ctx.mu);
  TFRUN_RETURN_IF_ERROR(ctx.Activate());
  TFRUN_ASSIGN_OR_RETURN(const Shape shape, MatMulShape(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(shape));
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  if (c.output.num_elements() == 0) return Status::Ok();
  if (a.num_elements() == 0) {  // k = 0: a sum of nothing (cuBLAS refuses a leading dimension of 0)
    TFRUN_CUDA_CHECK(cudaMemsetAsync(c.output.raw(), 0, c.output.num_bytes(), ctx.stream));
    return Status::Ok();
  }
  const cuda::CublasApi* api = nullptr;
  TFRUN_RETURN_IF_ERROR(ctx.Cublas(&api));
  return cuda::GpuMatMul(*api, ctx.cublas, type->second, a.raw(), a.shape()[0], a.shape()[1], c.node.transpose_a,
                         b.raw(), b.shape()[0], b.shape()[1], c.node.transpose_b, c.output.raw(), ctx.tf32);
}

Status AddNKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Elementwise e, PrepareElementwise(c, AddNShape(c)));
  std::vector<const void*> inputs;
  for (const Tensor& t : c.inputs) inputs.push_back(t.raw());
  return LaunchResult(cuda::AddN(e.type, inputs.data(), static_cast<int>(inputs.size()), c.output.num_elements(),
                                 c.output.raw(), e.ctx->stream),
                      "AddN kernel launch");
}

Status BiasAddKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Elementwise e, PrepareElementwise(c, BiasAddShape(c)));
  return LaunchResult(cuda::BiasAdd(e.type, c.inputs[0].raw(), c.inputs[1].raw(), c.output.num_elements(),
                                    c.inputs[1].num_elements(), c.output.raw(), e.ctx->stream),
                      "BiasAdd kernel launch");
}

Status ReluKernel(KernelContext& c) {
  TFRUN_ASSIGN_OR_RETURN(const Elementwise e, PrepareElementwise(c, c.inputs[0].shape()));
  return LaunchResult(cuda::Relu(e.type, c.inputs[0].raw(), c.output.num_elements(), c.output.raw(), e.ctx->stream),
                      "Relu kernel launch");
}

Status CastKernel(KernelContext& c) {
  const std::optional<cuda::ElementType> from = ElementTypeOf(c.inputs[0].dtype());
  if (!from) return RuntimeError(fmt::format("no GPU Cast from {}", Name(c.inputs[0].dtype())));
  TFRUN_ASSIGN_OR_RETURN(const Elementwise e, PrepareElementwise(c, c.inputs[0].shape()));
  return LaunchResult(cuda::Cast(*from, e.type, c.inputs[0].raw(), c.output.num_elements(), c.output.raw(),
                                 e.ctx->stream),
                      "Cast kernel launch");
}

// Split and ConcatV2 move bytes: in the [outer, axis, inner] view each
// piece is `outer` runs of equal width, one strided 2-D copy on the stream.
Status CopyRuns(CudaContext& ctx, void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                size_t rows) {
  if (width == 0 || rows == 0) return Status::Ok();
  TFRUN_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDeviceToDevice, ctx.stream));
  return Status::Ok();
}

// Split and SplitV: output i is the run of sizes[i] rows along the axis
// from each outer row.
Status SplitKernel(KernelContext& c) {
  CudaContext& ctx = ContextOf(c);
  TFRUN_RETURN_IF_ERROR(ctx.Activate());
  TFRUN_ASSIGN_OR_RETURN(const SplitPlan plan, PlanSplit(c));
  const Tensor& value = c.inputs[c.node.op == "SplitV" ? 0 : 1];
  const size_t element = Info(value.dtype()).size;
  const size_t row = plan.input[plan.layout.axis] * plan.layout.inner * element;
  c.outputs.resize(c.node.num_outputs);
  size_t offset = 0;  // bytes into each input row
  for (int i = 0; i < c.node.num_outputs; ++i) {
    TFRUN_ASSIGN_OR_RETURN(c.outputs[i], c.Allocate(c.node.dtype, plan.OutputShape(i)));
    const size_t piece = plan.sizes[i] * plan.layout.inner * element;
    TFRUN_RETURN_IF_ERROR(CopyRuns(ctx, c.outputs[i].raw(), piece, static_cast<const char*>(value.raw()) + offset,
                                   row, piece, plan.layout.outer));
    offset += piece;
  }
  return Status::Ok();
}

Status ConcatKernel(KernelContext& c) {
  CudaContext& ctx = ContextOf(c);
  TFRUN_RETURN_IF_ERROR(ctx.Activate());
  TFRUN_ASSIGN_OR_RETURN(const ConcatPlan plan, PlanConcat(c));
  TFRUN_RETURN_IF_ERROR(c.AllocateOutput(plan.output));
  const size_t element = Info(c.node.dtype).size;
  const size_t row = plan.output[plan.layout.axis] * plan.layout.inner * element;
  size_t offset = 0;
  for (size_t i = 0; i + 1 < c.inputs.size(); ++i) {
    const Tensor& in = c.inputs[i];
    const size_t piece = in.shape()[plan.layout.axis] * plan.layout.inner * element;
    TFRUN_RETURN_IF_ERROR(CopyRuns(ctx, static_cast<char*>(c.output.raw()) + offset, row, in.raw(), piece, piece,
                                   plan.layout.outer));
    offset += piece;
  }
  return Status::Ok();
}

}  // namespace

DeviceSet::GpuBackendParts MakeCudaBackend(const LogicalGpu& gpu) {
  auto context = std::make_shared<CudaContext>();
  context->ordinal = gpu.cuda_ordinal;
  context->tf32 = gpu.tf32;
  DeviceSet::GpuBackendParts parts;
  parts.allocator = std::make_unique<CudaAllocator>("GPU_" + std::to_string(gpu.tf_id) + "_bfc", context,
                                                    gpu.memory_limit_bytes, gpu.physical.cc_major, gpu.allow_growth);
  parts.context = context;
  parts.queue = context;
  return parts;
}


void RegisterCudaKernels(KernelRegistry* registry) {
  // Handles, and Split and ConcatV2 (byte copies), take any fixed-size
  // dtype (uint8 and uint64 too: a stateless random op's key and counter
  // pass through an Identity on the GPU); the elementwise kernels the
  // numeric ones (cuda::ElementType); cuBLAS the float ones. Strings never
  // live in GPU memory.
  BindHandleKernels(registry, kGpu, kMovedTypes);
  RegisterCudaTrainingKernels(registry);
  registry->Bind("MatMul", kGpu, kFloatTypes, MatMulKernel);
  registry->Bind("AddN", kGpu, kNumericTypes, AddNKernel);
  registry->Bind("BiasAdd", kGpu, kNumericTypes, BiasAddKernel);
  registry->Bind("Relu", kGpu, kNumericTypes, ReluKernel);
  registry->Bind("Cast", kGpu, kAllTypes, CastKernel);
  registry->Bind("Split", kGpu, kMovedTypes, SplitKernel);
  registry->Bind("SplitV", kGpu, kMovedTypes, SplitKernel);
  registry->Bind("ConcatV2", kGpu, kMovedTypes, ConcatKernel);
}

}  // namespace tfrun
