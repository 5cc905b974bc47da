#pragma once
// The C entry point of topk's kernel (cuda_kernels.cu), found by name in the cuda DSL's
// kernels library (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// For each contiguous row of `width` elements, the `k` largest (`largest` 1) or smallest
/// (0) elements, NaN ordered above every number as aten orders it: written to `values`
/// (rows x k, the input's dtype) and their columns to `indices` (rows x k, int64), sorted
/// (largest first, or smallest first; equal elements by column). Of equal elements at the
/// boundary the first columns are taken. 1 <= k <= NATIVE_OPS_TOPK_MAX_K, k <= width < 2^31.
/// `workspace`: topk_workspace(dtype, largest, rows, width, k) bytes of device memory, 8-byte aligned
/// (null where that is 0).
typedef int (*NativeOpsTopkRowsFn)(int dtype, int largest, const void* in, void* values, int64_t* indices, int64_t rows,
                                   int64_t width, int64_t k, void* workspace, int64_t workspace_bytes, void* stream);
#define NATIVE_OPS_TOPK_ROWS_SYMBOL "native_ops_cuda_topk_rows"
/// Sets `bytes` to the workspace topk_rows needs on the current device: rows too few to fill
/// it are split over several blocks, whose selections are kept there.
typedef int (*NativeOpsTopkWorkspaceFn)(int dtype, int largest, int64_t rows, int64_t width, int64_t k, int64_t* bytes);
#define NATIVE_OPS_TOPK_WORKSPACE_SYMBOL "native_ops_cuda_topk_workspace"
/// The largest k the kernel takes: its exact path sorts the selection in shared memory.
#define NATIVE_OPS_TOPK_MAX_K 1024

#ifdef __cplusplus
}
#endif
