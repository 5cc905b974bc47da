#pragma once
// The C entry point of the softmax backward cuda kernels (cuda_kernels.cu), found by name
// in the cuda DSL's kernels library (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The gradient of softmax (or, with `log` set, of log-softmax) over each contiguous row
/// of `width` elements: from the forward's `out` and the incoming `grad_out`, into
/// `grad_in` (all three laid out alike).
typedef int (*NativeOpsSoftmaxBackwardRowsFn)(int dtype, int log, const void* grad_out, const void* out, void* grad_in,
                                              int64_t rows, int64_t width, void* stream);
#define NATIVE_OPS_SOFTMAX_BACKWARD_ROWS_SYMBOL "native_ops_cuda_softmax_backward_rows"

#ifdef __cplusplus
}
#endif
