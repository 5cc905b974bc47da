#pragma once
// The C entry point of embedding_dense_backward's kernel (cuda_kernels.cu), found by name in
// the cuda DSL's kernels library (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Writes grad_weight ([num_weights, width], the dtype of grad, contiguous): row w is the
/// sum, in position order, of the rows of `grad` ([count, width], contiguous) at the
/// positions whose index is w, divided by their number where `scale_by_freq` is set; zeros
/// where no index is w or w is `padding_idx`. `indices`: count integers of `index_bytes` 4
/// or 8; one outside [0, num_weights) adds to no row. `count` and `num_weights` are at most
/// NATIVE_OPS_EMBEDDING_BACKWARD_MAX_ROWS. `width` is a multiple of 16 bytes and
/// `grad` and `grad_weight` are 16-byte aligned. `workspace`: embedding_backward_workspace
/// (index_bytes, count, num_weights) bytes of device memory, 8-byte aligned (null where that
/// is 0), where the indices are sorted.
typedef int (*NativeOpsEmbeddingBackwardFn)(int dtype, int index_bytes, const void* grad, const void* indices,
                                            int64_t count, int64_t num_weights, int64_t width, int64_t padding_idx,
                                            int scale_by_freq, void* grad_weight, void* workspace,
                                            int64_t workspace_bytes, void* stream);
#define NATIVE_OPS_EMBEDDING_BACKWARD_SYMBOL "native_ops_cuda_embedding_backward"
/// Sets `bytes` to the workspace embedding_backward needs for `count` indices into
/// `num_weights` rows.
typedef int (*NativeOpsEmbeddingBackwardWorkspaceFn)(int index_bytes, int64_t count, int64_t num_weights,
                                                     int64_t* bytes);
#define NATIVE_OPS_EMBEDDING_BACKWARD_WORKSPACE_SYMBOL "native_ops_cuda_embedding_backward_workspace"
/// The most indices and weight rows embedding_backward takes (2^31 - 1): it sorts them as
/// 32-bit keys and positions.
#define NATIVE_OPS_EMBEDDING_BACKWARD_MAX_ROWS 0x7fffffff

#ifdef __cplusplus
}
#endif
