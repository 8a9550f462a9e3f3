// cuDNN, loaded with dlopen on first use as cuBLAS is (library_loader.h):
// graphs without convolutions never load it. Search order: $TFRUN_CUDNN,
// libcudnn.so.9, /usr/local/cuda/lib64/libcudnn.so.9. Only the legacy
// convolution API (cudnn_cnn.h), which cuDNN 9 still ships.
#pragma once

#include <cudnn.h>

#include <functional>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tfrun {
namespace cuda {

struct CudnnApi {
  std::string path;  // the library that was loaded
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor_4d = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) set_filter_4d = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) set_conv_2d = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math_type = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forward_algorithms = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) forward_workspace = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) backward_data_algorithms = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) backward_data_workspace = nullptr;
  decltype(&cudnnConvolutionBackwardData) backward_data = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) backward_filter_algorithms = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) backward_filter_workspace = nullptr;
  decltype(&cudnnConvolutionBackwardFilter) backward_filter = nullptr;
};

std::vector<std::string> CudnnSearchList();
StatusOr<CudnnApi> LoadCudnn(const std::vector<std::string>& search);
// LoadCudnn(CudnnSearchList()), once per process.
StatusOr<const CudnnApi*> Cudnn();

// One float32 2-D convolution in cuDNN's terms: NHWC activations, KRSC
// filters (cuDNN's NHWC filter layout; TensorFlow's HWIO is transposed by
// the caller), symmetric padding (the caller pads an odd total itself).
struct ConvProblem {
  int batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int out_depth = 0, filter_rows = 0, filter_cols = 0;
  int pad_rows = 0, pad_cols = 0, stride_rows = 1, stride_cols = 1, dilation_rows = 1, dilation_cols = 1;
  int out_rows = 0, out_cols = 0;
};

enum class ConvPass {
  kForward,         // y = conv(x, w)
  kBackwardData,    // dx from w and dy
  kBackwardFilter,  // dw from x and dy
};

// Device scratch for an algorithm: a pointer to `bytes` valid until the
// stream has run the convolution, or an error (out of memory).
using Workspace = std::function<StatusOr<void*>(size_t bytes)>;

// Runs `pass` on the handle's stream: `a` and `b` are its two operands in
// the order above (x and w; w and dy; x and dy), `out` its result. The
// algorithm is cuDNN's heuristic first choice whose workspace allocates;
// `tf32` lets float32 use TensorFloat-32 tensor cores (CUDNN_DEFAULT_MATH),
// else exact float32 arithmetic (CUDNN_FMA_MATH).
Status RunConvolution(const CudnnApi& api, cudnnHandle_t handle, ConvPass pass, const ConvProblem& problem,
                      bool tf32, const void* a, const void* b, void* out, const Workspace& workspace);

}  // namespace cuda
}  // namespace tfrun
