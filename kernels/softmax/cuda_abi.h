#pragma once
// The C entry point of softmax's cuda kernels (cuda_kernels.cu), found by name in the
// cuda DSL's kernels library (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Softmax (or, with `log` set, log-softmax) of each contiguous row of `width` elements.
typedef int (*NativeOpsSoftmaxRowsFn)(int dtype, int log, const void* in, void* out, int64_t rows, int64_t width,
                                      void* stream);
#define NATIVE_OPS_SOFTMAX_ROWS_SYMBOL "native_ops_cuda_softmax_rows"

#ifdef __cplusplus
}
#endif
