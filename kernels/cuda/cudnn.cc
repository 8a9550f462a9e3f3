#include "kernels/cuda/cudnn.h"

#include <fmt/format.h>

#include <mutex>

#include "kernels/cuda/library_loader.h"

namespace tfrun {
namespace cuda {

std::vector<std::string> CudnnSearchList() { return LibrarySearchList("TFRUN_CUDNN", "libcudnn.so.9"); }

StatusOr<CudnnApi> LoadCudnn(const std::vector<std::string>& search) {
  return LoadLibrary<CudnnApi>(search, "cuDNN", "TFRUN_CUDNN", [](CudnnApi& api, auto&& bind) {
    bind(api.create, "cudnnCreate");
    bind(api.set_stream, "cudnnSetStream");
    bind(api.error_string, "cudnnGetErrorString");
    bind(api.create_tensor, "cudnnCreateTensorDescriptor");
    bind(api.destroy_tensor, "cudnnDestroyTensorDescriptor");
    bind(api.set_tensor_4d, "cudnnSetTensor4dDescriptor");
    bind(api.create_filter, "cudnnCreateFilterDescriptor");
    bind(api.destroy_filter, "cudnnDestroyFilterDescriptor");
    bind(api.set_filter_4d, "cudnnSetFilter4dDescriptor");
    bind(api.create_conv, "cudnnCreateConvolutionDescriptor");
    bind(api.destroy_conv, "cudnnDestroyConvolutionDescriptor");
    bind(api.set_conv_2d, "cudnnSetConvolution2dDescriptor");
    bind(api.set_math_type, "cudnnSetConvolutionMathType");
    bind(api.forward_algorithms, "cudnnGetConvolutionForwardAlgorithm_v7");
    bind(api.forward_workspace, "cudnnGetConvolutionForwardWorkspaceSize");
    bind(api.forward, "cudnnConvolutionForward");
    bind(api.backward_data_algorithms, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    bind(api.backward_data_workspace, "cudnnGetConvolutionBackwardDataWorkspaceSize");
    bind(api.backward_data, "cudnnConvolutionBackwardData");
    bind(api.backward_filter_algorithms, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    bind(api.backward_filter_workspace, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    bind(api.backward_filter, "cudnnConvolutionBackwardFilter");
  });
}

StatusOr<const CudnnApi*> Cudnn() {
  static std::once_flag once;
  static StatusOr<CudnnApi>* loaded = nullptr;
  std::call_once(once, [] { loaded = new StatusOr<CudnnApi>(LoadCudnn(CudnnSearchList())); });
  if (!loaded->ok()) return loaded->status();
  return &loaded->value();
}

namespace {

// The three descriptors of a problem, destroyed with it.
class Descriptors {
 public:
  explicit Descriptors(const CudnnApi& api) : api_(api) {}
  ~Descriptors() {
    if (x_ != nullptr) api_.destroy_tensor(x_);
    if (y_ != nullptr) api_.destroy_tensor(y_);
    if (w_ != nullptr) api_.destroy_filter(w_);
    if (conv_ != nullptr) api_.destroy_conv(conv_);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  Status Set(const ConvProblem& p, bool tf32) {
    TFRUN_RETURN_IF_ERROR(Check(api_.create_tensor(&x_), "cudnnCreateTensorDescriptor"));
    TFRUN_RETURN_IF_ERROR(Check(api_.create_tensor(&y_), "cudnnCreateTensorDescriptor"));
    TFRUN_RETURN_IF_ERROR(Check(api_.create_filter(&w_), "cudnnCreateFilterDescriptor"));
    TFRUN_RETURN_IF_ERROR(Check(api_.create_conv(&conv_), "cudnnCreateConvolutionDescriptor"));
    TFRUN_RETURN_IF_ERROR(Check(api_.set_tensor_4d(x_, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, p.batch, p.in_depth,
                                                   p.in_rows, p.in_cols),
                                "cudnnSetTensor4dDescriptor (input)"));
    TFRUN_RETURN_IF_ERROR(Check(api_.set_tensor_4d(y_, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, p.batch, p.out_depth,
                                                   p.out_rows, p.out_cols),
                                "cudnnSetTensor4dDescriptor (output)"));
    TFRUN_RETURN_IF_ERROR(Check(api_.set_filter_4d(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, p.out_depth, p.in_depth,
                                                   p.filter_rows, p.filter_cols),
                                "cudnnSetFilter4dDescriptor"));
    TFRUN_RETURN_IF_ERROR(Check(api_.set_conv_2d(conv_, p.pad_rows, p.pad_cols, p.stride_rows, p.stride_cols,
                                                 p.dilation_rows, p.dilation_cols, CUDNN_CROSS_CORRELATION,
                                                 CUDNN_DATA_FLOAT),
                                "cudnnSetConvolution2dDescriptor"));
    return Check(api_.set_math_type(conv_, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  }

  Status Check(cudnnStatus_t s, const char* call) const {
    if (s == CUDNN_STATUS_SUCCESS) return Status::Ok();
    return RuntimeError(fmt::format("{} failed: {}", call, api_.error_string(s)));
  }

  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnTensorDescriptor_t y() const { return y_; }
  cudnnFilterDescriptor_t w() const { return w_; }
  cudnnConvolutionDescriptor_t conv() const { return conv_; }

 private:
  const CudnnApi& api_;
  cudnnTensorDescriptor_t x_ = nullptr;
  cudnnTensorDescriptor_t y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
};

// The heuristic's candidates in its order; the first that succeeds with a
// workspace that allocates runs. `size(algo, &bytes)` and `run(algo, ws,
// bytes)` are the pass's two calls.
template <typename Perf, typename Size, typename Run>
Status RunFirst(const Descriptors& d, const Perf* perf, int count, const Workspace& workspace, Size&& size,
                Run&& run, const char* what) {
  Status last = RuntimeError(fmt::format("{}: cuDNN offers no algorithm for this convolution", what));
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    size_t bytes = 0;
    if (size(perf[i].algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    void* scratch = nullptr;
    if (bytes > 0) {
      StatusOr<void*> got = workspace(bytes);
      if (!got.ok()) {
        last = got.status();
        continue;
      }
      scratch = *got;
    }
    return d.Check(run(perf[i].algo, scratch, bytes), what);
  }
  return last;
}

}  // namespace

Status RunConvolution(const CudnnApi& api, cudnnHandle_t handle, ConvPass pass, const ConvProblem& p, bool tf32,
                      const void* a, const void* b, void* out, const Workspace& workspace) {
  Descriptors d(api);
  TFRUN_RETURN_IF_ERROR(d.Set(p, tf32));
  const float one = 1, zero = 0;
  constexpr int kMaxAlgorithms = 16;
  int count = 0;
  switch (pass) {
    case ConvPass::kForward: {
      cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgorithms];
      TFRUN_RETURN_IF_ERROR(d.Check(api.forward_algorithms(handle, d.x(), d.w(), d.conv(), d.y(), kMaxAlgorithms,
                                                           &count, perf),
                                    "cudnnGetConvolutionForwardAlgorithm_v7"));
      return RunFirst(
          d, perf, count, workspace,
          [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
            return api.forward_workspace(handle, d.x(), d.w(), d.conv(), d.y(), algo, bytes);
          },
          [&](cudnnConvolutionFwdAlgo_t algo, void* ws, size_t bytes) {
            return api.forward(handle, &one, d.x(), a, d.w(), b, d.conv(), algo, ws, bytes, &zero, d.y(), out);
          },
          "cudnnConvolutionForward");
    }
    case ConvPass::kBackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgorithms];
      TFRUN_RETURN_IF_ERROR(d.Check(api.backward_data_algorithms(handle, d.w(), d.y(), d.conv(), d.x(),
                                                                 kMaxAlgorithms, &count, perf),
                                    "cudnnGetConvolutionBackwardDataAlgorithm_v7"));
      return RunFirst(
          d, perf, count, workspace,
          [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
            return api.backward_data_workspace(handle, d.w(), d.y(), d.conv(), d.x(), algo, bytes);
          },
          [&](cudnnConvolutionBwdDataAlgo_t algo, void* ws, size_t bytes) {
            return api.backward_data(handle, &one, d.w(), a, d.y(), b, d.conv(), algo, ws, bytes, &zero, d.x(), out);
          },
          "cudnnConvolutionBackwardData");
    }
    case ConvPass::kBackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgorithms];
      TFRUN_RETURN_IF_ERROR(d.Check(api.backward_filter_algorithms(handle, d.x(), d.y(), d.conv(), d.w(),
                                                                   kMaxAlgorithms, &count, perf),
                                    "cudnnGetConvolutionBackwardFilterAlgorithm_v7"));
      return RunFirst(
          d, perf, count, workspace,
          [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
            return api.backward_filter_workspace(handle, d.x(), d.y(), d.conv(), d.w(), algo, bytes);
          },
          [&](cudnnConvolutionBwdFilterAlgo_t algo, void* ws, size_t bytes) {
            return api.backward_filter(handle, &one, d.x(), a, d.y(), b, d.conv(), algo, ws, bytes, &zero, d.w(),
                                       out);
          },
          "cudnnConvolutionBackwardFilter");
    }
  }
  return RuntimeError("unknown convolution pass");
}

}  // namespace cuda
}  // namespace tfrun
