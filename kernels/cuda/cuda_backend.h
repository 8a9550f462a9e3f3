// The CUDA backend for real GPUs: per logical GPU an allocator (TensorFlow's
// limit, reserved up front unless allow_growth), one stream and a cuBLAS
// handle; copies between host and GPUs; the GPU kernels of the kernel table.
#pragma once

#include "core/devices/device_set.h"
#include "core/runtime/kernel_registry.h"

namespace tfrun {

// The DeviceSet::GpuBackendFactory for real GPUs; each context keeps its
// GPU's TensorFloat-32 switch (LogicalGpu::tf32).
DeviceSet::GpuBackendParts MakeCudaBackend(const LogicalGpu& gpu);

// Binds the GPU kernels: the handle kernels (Const, Identity, VariableV2,
// Assign, Reshape, Shape, Fill, ...), MatMul (cuBLAS), AddN, BiasAdd, Relu,
// Cast (kernels/cuda/elementwise.cu), Split, ConcatV2, and the kernels of
// training graphs (training_kernels.cc: cuDNN convolutions, the
// elementwise, reduction, softmax, pooling and optimizer kernels of
// kernels/cuda/training.cu), each with the dtypes it runs.
void RegisterCudaKernels(KernelRegistry* registry);

}  // namespace tfrun
