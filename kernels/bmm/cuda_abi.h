#pragma once
// The C entry point of bmm's cuda kernels (cuda_kernels.cu), found by name in the cuda
// DSL's kernels library (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// out[b, i, j] = a[b, i] * m[b, j]: a batched outer product (bmm with an inner dimension
/// of 1). `a` and `m` may have any strides (in elements); `out` is contiguous [batch, rows, cols].
typedef int (*NativeOpsOuterProductFn)(int dtype, const void* a, int64_t a_batch_stride, int64_t a_row_stride,
                                       const void* m, int64_t m_batch_stride, int64_t m_col_stride, void* out,
                                       int64_t batch, int64_t rows, int64_t cols, void* stream);
#define NATIVE_OPS_OUTER_PRODUCT_SYMBOL "native_ops_cuda_outer_product"

#ifdef __cplusplus
}
#endif
