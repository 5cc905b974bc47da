#pragma once
// The C interface of libnative_ops_cuda_kernels.so: the cuda DSL's device code, built by
// nvcc without libtorch and loaded on the first call of a cuda impl (never at init()).
// Tensors cross it as raw pointers and strides; every function launches on `stream` (a
// cudaStream_t) on the current device and returns a cudaError_t (0: success).

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Element types the kernels take.
enum NativeOpsCudaDtype { kNativeOpsFloat32 = 0, kNativeOpsFloat16 = 1, kNativeOpsBFloat16 = 2 };

/// out[b, i, j] = a[b, i] * m[b, j]: a batched outer product (bmm with an inner dimension
/// of 1). `a` and `m` may have any strides (in elements); `out` is contiguous [batch, rows, cols].
typedef int (*NativeOpsOuterProductFn)(int dtype, const void* a, int64_t a_batch_stride, int64_t a_row_stride,
                                       const void* m, int64_t m_batch_stride, int64_t m_col_stride, void* out,
                                       int64_t batch, int64_t rows, int64_t cols, void* stream);
#define NATIVE_OPS_OUTER_PRODUCT_SYMBOL "native_ops_cuda_outer_product"

/// Softmax (or, with `log` set, log-softmax) of each contiguous row of `width` elements.
typedef int (*NativeOpsSoftmaxRowsFn)(int dtype, int log, const void* in, void* out, int64_t rows, int64_t width,
                                      void* stream);
#define NATIVE_OPS_SOFTMAX_ROWS_SYMBOL "native_ops_cuda_softmax_rows"

/// Layer norm (`centered` set) or RMS norm of each contiguous row of `width` elements, in
/// float: out = (x - mean) * rstd * weight + bias, with rstd = 1 / sqrt(mean((x - mean)^2) + eps)
/// and mean taken as 0 when not centered. `weight` and `bias` (`width` elements, the input's
/// dtype) may be null; `mean` (null when not centered) and `rstd` get one float per row.
typedef int (*NativeOpsNormRowsFn)(int dtype, int centered, const void* in, const void* weight, const void* bias,
                                   void* out, float* mean, float* rstd, int64_t rows, int64_t width, float eps,
                                   void* stream);
#define NATIVE_OPS_NORM_ROWS_SYMBOL "native_ops_cuda_norm_rows"

/// The message of a cudaError_t.
typedef const char* (*NativeOpsCudaErrorStringFn)(int error);
#define NATIVE_OPS_CUDA_ERROR_STRING_SYMBOL "native_ops_cuda_error_string"

#ifdef __cplusplus
}
#endif
