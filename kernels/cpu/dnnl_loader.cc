// oneDNN, loaded when the first convolution runs: libdnnl.so.2 (Debian's
// libdnnl2) is opened with dlopen and the C functions that dnnl.hpp's
// wrappers call are defined here as trampolines into it. Why not link it:
// tfrun links the C++ runtime statically (.bazelrc) and libdnnl brings the
// shared one; in one link map the two copies' iostream and locale state
// mixed (a gtest name printed as ''), and loading its 40 MB at start-up
// would cost every run, convolutions or not. RTLD_DEEPBIND keeps libdnnl
// (and its libstdc++) bound to its own symbols, never to tfrun's.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include <oneapi/dnnl/dnnl.h>

#include "core/base/parallel.h"
#include "kernels/cpu/dnnl_loader.h"

// The sanitizers (address, thread) refuse RTLD_DEEPBIND
// (google/sanitizers#611). Without it the library still binds to its own
// libstdc++: tfrun's executable exports none of the static runtime's
// symbols (nothing linked against it asked for them, unlike the earlier
// -ldnnl link).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TFRUN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TFRUN_SANITIZED 1
#endif
#endif
#ifdef TFRUN_SANITIZED
constexpr int kDeepBind = 0;
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif

namespace tfrun {
namespace cpu {
namespace {

struct Library {
  void* handle = nullptr;
  std::string error;
};

const Library& Loaded() {
  static const Library* library = [] {
    auto* l = new Library();
    // oneDNN's OpenMP threads spin briefly after each parallel region, then
    // sleep. libgomp's default spin (300,000 rounds, milliseconds) took the
    // cores from the Eigen pool's next kernel (perf: 8% of a training step
    // on two cores); never spinning (PASSIVE) made each of the hundreds of
    // small convolutions and batch norms of a step wake a sleeping thread
    // (resnet20 on two towers of 4: 33 ms a step, 20 with the short spin;
    // bench/RESULTS.md). A user's own setting of either wins.
    if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
      setenv("OMP_WAIT_POLICY", "ACTIVE", /*overwrite=*/0);
      setenv("GOMP_SPINCOUNT", "20000", /*overwrite=*/0);
    }
    // Its team is the kernels' thread count (--intra-op-threads), read by
    // libgomp when it loads: with one, convolutions run beside other nodes
    // instead of taking turns (MultiThreadedSection). Fixed from here on,
    // as the Eigen pool's size is. A user's OMP_NUM_THREADS wins.
    if (std::getenv("OMP_NUM_THREADS") == nullptr) {
      setenv("OMP_NUM_THREADS", std::to_string(KernelThreads()).c_str(), /*overwrite=*/0);
    }
    l->handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL | kDeepBind);
    if (l->handle == nullptr) {
      const char* e = dlerror();
      l->error = std::string("cannot load oneDNN (libdnnl.so.2, Debian's libdnnl2): ") + (e != nullptr ? e : "");
    }
    return l;
  }();
  return *library;
}

template <typename Fn>
Fn Lookup(const char* name) {
  const Library& l = Loaded();
  return l.handle == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(l.handle, name));
}

}  // namespace

bool DnnlAvailable(std::string* why) {
  const Library& l = Loaded();
  if (l.handle == nullptr && why != nullptr) *why = l.error;
  return l.handle != nullptr;
}

}  // namespace cpu
}  // namespace tfrun

extern "C" dnnl_status_t dnnl_sgemm(char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K, float alpha,
                                    const float* A, dnnl_dim_t lda, const float* B, dnnl_dim_t ldb, float beta,
                                    float* C, dnnl_dim_t ldc);

namespace tfrun {
namespace cpu {

bool DnnlMatMulF32(const float* a, int64_t a_rows, int64_t a_cols, bool transpose_a, const float* b, int64_t b_rows,
                   int64_t b_cols, bool transpose_b, float* out) {
  if (!DnnlAvailable(nullptr)) return false;
  MultiThreadedSection section;  // oneDNN's OpenMP team
  const int64_t m = transpose_a ? a_cols : a_rows;
  const int64_t k = transpose_a ? a_rows : a_cols;
  const int64_t n = transpose_b ? b_rows : b_cols;
  return dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a, a_cols, b, b_cols, 0.0f, out,
                    n) == dnnl_success;
}

}  // namespace cpu
}  // namespace tfrun

// Each trampoline finds its function once; without the library it fails
// as oneDNN fails (dnnl.hpp turns the status into an exception the
// kernels report), after DnnlAvailable has said why.
#define TFRUN_DNNL(ret, name, params, args, fallback)                                      \
  extern "C" ret name params {                                                             \
    static const auto fn = tfrun::cpu::Lookup<ret(*) params>(#name);                       \
    return fn == nullptr ? fallback : fn args;                                             \
  }

#define TFRUN_DNNL_STATUS(name, params, args) TFRUN_DNNL(dnnl_status_t, name, params, args, dnnl_runtime_error)

TFRUN_DNNL_STATUS(dnnl_dilated_convolution_forward_desc_init,
                  (dnnl_convolution_desc_t * conv_desc, dnnl_prop_kind_t prop_kind, dnnl_alg_kind_t alg_kind,
                   const dnnl_memory_desc_t* src_desc, const dnnl_memory_desc_t* weights_desc,
                   const dnnl_memory_desc_t* bias_desc, const dnnl_memory_desc_t* dst_desc, const dnnl_dims_t strides,
                   const dnnl_dims_t dilates, const dnnl_dims_t padding_l, const dnnl_dims_t padding_r),
                  (conv_desc, prop_kind, alg_kind, src_desc, weights_desc, bias_desc, dst_desc, strides, dilates,
                   padding_l, padding_r))
TFRUN_DNNL_STATUS(dnnl_dilated_convolution_backward_data_desc_init,
                  (dnnl_convolution_desc_t * conv_desc, dnnl_alg_kind_t alg_kind,
                   const dnnl_memory_desc_t* diff_src_desc, const dnnl_memory_desc_t* weights_desc,
                   const dnnl_memory_desc_t* diff_dst_desc, const dnnl_dims_t strides, const dnnl_dims_t dilates,
                   const dnnl_dims_t padding_l, const dnnl_dims_t padding_r),
                  (conv_desc, alg_kind, diff_src_desc, weights_desc, diff_dst_desc, strides, dilates, padding_l,
                   padding_r))
TFRUN_DNNL_STATUS(dnnl_dilated_convolution_backward_weights_desc_init,
                  (dnnl_convolution_desc_t * conv_desc, dnnl_alg_kind_t alg_kind, const dnnl_memory_desc_t* src_desc,
                   const dnnl_memory_desc_t* diff_weights_desc, const dnnl_memory_desc_t* diff_bias_desc,
                   const dnnl_memory_desc_t* diff_dst_desc, const dnnl_dims_t strides, const dnnl_dims_t dilates,
                   const dnnl_dims_t padding_l, const dnnl_dims_t padding_r),
                  (conv_desc, alg_kind, src_desc, diff_weights_desc, diff_bias_desc, diff_dst_desc, strides, dilates,
                   padding_l, padding_r))
TFRUN_DNNL_STATUS(dnnl_engine_create, (dnnl_engine_t * engine, dnnl_engine_kind_t kind, size_t index),
                  (engine, kind, index))
TFRUN_DNNL_STATUS(dnnl_engine_destroy, (dnnl_engine_t engine), (engine))
TFRUN_DNNL_STATUS(dnnl_memory_create,
                  (dnnl_memory_t * memory, const dnnl_memory_desc_t* memory_desc, dnnl_engine_t engine, void* handle),
                  (memory, memory_desc, engine, handle))
TFRUN_DNNL(int, dnnl_memory_desc_equal, (const dnnl_memory_desc_t* lhs, const dnnl_memory_desc_t* rhs), (lhs, rhs), 0)
TFRUN_DNNL_STATUS(dnnl_memory_desc_init_by_tag,
                  (dnnl_memory_desc_t * memory_desc, int ndims, const dnnl_dims_t dims, dnnl_data_type_t data_type,
                   dnnl_format_tag_t tag),
                  (memory_desc, ndims, dims, data_type, tag))
TFRUN_DNNL_STATUS(dnnl_memory_destroy, (dnnl_memory_t memory), (memory))
TFRUN_DNNL_STATUS(dnnl_memory_get_engine, (const_dnnl_memory_t memory, dnnl_engine_t* engine), (memory, engine))
TFRUN_DNNL_STATUS(dnnl_memory_get_memory_desc, (const_dnnl_memory_t memory, const dnnl_memory_desc_t** memory_desc),
                  (memory, memory_desc))
TFRUN_DNNL_STATUS(dnnl_primitive_attr_create, (dnnl_primitive_attr_t * attr), (attr))
TFRUN_DNNL_STATUS(dnnl_primitive_attr_destroy, (dnnl_primitive_attr_t attr), (attr))
TFRUN_DNNL_STATUS(dnnl_primitive_create, (dnnl_primitive_t * primitive, const_dnnl_primitive_desc_t primitive_desc),
                  (primitive, primitive_desc))
TFRUN_DNNL_STATUS(dnnl_primitive_desc_destroy, (dnnl_primitive_desc_t primitive_desc), (primitive_desc))
TFRUN_DNNL_STATUS(dnnl_primitive_desc_iterator_create,
                  (dnnl_primitive_desc_iterator_t * iterator, const_dnnl_op_desc_t op_desc,
                   const_dnnl_primitive_attr_t attr, dnnl_engine_t engine,
                   const_dnnl_primitive_desc_t hint_forward_primitive_desc),
                  (iterator, op_desc, attr, engine, hint_forward_primitive_desc))
TFRUN_DNNL_STATUS(dnnl_primitive_desc_iterator_destroy, (dnnl_primitive_desc_iterator_t iterator), (iterator))
TFRUN_DNNL(dnnl_primitive_desc_t, dnnl_primitive_desc_iterator_fetch, (const_dnnl_primitive_desc_iterator_t iterator),
           (iterator), nullptr)
TFRUN_DNNL(const dnnl_memory_desc_t*, dnnl_primitive_desc_query_md,
           (const_dnnl_primitive_desc_t primitive_desc, dnnl_query_t what, int index), (primitive_desc, what, index),
           nullptr)
TFRUN_DNNL_STATUS(dnnl_primitive_destroy, (dnnl_primitive_t primitive), (primitive))
TFRUN_DNNL_STATUS(dnnl_primitive_execute,
                  (const_dnnl_primitive_t primitive, dnnl_stream_t stream, int nargs, const dnnl_exec_arg_t* args),
                  (primitive, stream, nargs, args))
TFRUN_DNNL_STATUS(dnnl_reorder_primitive_desc_create,
                  (dnnl_primitive_desc_t * reorder_primitive_desc, const dnnl_memory_desc_t* src_desc,
                   dnnl_engine_t src_engine, const dnnl_memory_desc_t* dst_desc, dnnl_engine_t dst_engine,
                   const_dnnl_primitive_attr_t attr),
                  (reorder_primitive_desc, src_desc, src_engine, dst_desc, dst_engine, attr))
TFRUN_DNNL_STATUS(dnnl_stream_create, (dnnl_stream_t * stream, dnnl_engine_t engine, unsigned flags),
                  (stream, engine, flags))
TFRUN_DNNL_STATUS(dnnl_stream_destroy, (dnnl_stream_t stream), (stream))
TFRUN_DNNL_STATUS(dnnl_stream_wait, (dnnl_stream_t stream), (stream))
TFRUN_DNNL_STATUS(dnnl_sgemm,
                  (char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K, float alpha, const float* A,
                   dnnl_dim_t lda, const float* B, dnnl_dim_t ldb, float beta, float* C, dnnl_dim_t ldc),
                  (transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc))
TFRUN_DNNL_STATUS(dnnl_batch_normalization_forward_desc_init,
                  (dnnl_batch_normalization_desc_t * bnrm_desc, dnnl_prop_kind_t prop_kind,
                   const dnnl_memory_desc_t* data_desc, float epsilon, unsigned flags),
                  (bnrm_desc, prop_kind, data_desc, epsilon, flags))
TFRUN_DNNL_STATUS(dnnl_batch_normalization_backward_desc_init,
                  (dnnl_batch_normalization_desc_t * bnrm_desc, dnnl_prop_kind_t prop_kind,
                   const dnnl_memory_desc_t* diff_data_desc, const dnnl_memory_desc_t* data_desc, float epsilon,
                   unsigned flags),
                  (bnrm_desc, prop_kind, diff_data_desc, data_desc, epsilon, flags))
