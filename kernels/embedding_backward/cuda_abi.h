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
/// where no index is w or w is `padding_idx`. `sorted_indices` (count integers of
/// `index_bytes` 4 or 8, ascending) and `positions` (count int64: where each came from,
/// ascending among equal indices) are a stable sort of the indices. Indices outside
/// [0, num_weights) add to no row. `width` is a multiple of 16 bytes and `grad` and
/// `grad_weight` are 16-byte aligned.
typedef int (*NativeOpsEmbeddingBackwardFn)(int dtype, int index_bytes, const void* grad, const void* sorted_indices,
                                            const int64_t* positions, int64_t count, int64_t num_weights, int64_t width,
                                            int64_t padding_idx, int scale_by_freq, void* grad_weight, void* stream);
#define NATIVE_OPS_EMBEDDING_BACKWARD_SYMBOL "native_ops_cuda_embedding_backward"

#ifdef __cplusplus
}
#endif
