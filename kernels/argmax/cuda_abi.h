#pragma once
// The C entry point of the arg-extreme kernels (cuda_kernels.cu): argmax, argmin, max.dim
// and min.dim over the last dimension, found by name in the cuda DSL's kernels library
// (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// For each contiguous row of `width` elements: the index of its largest element
/// (`largest` 1) or smallest (0), a NaN before any number and the first of equal ones, as
/// aten picks them; written to `indices` (int64, one a row) and, where `values` is not
/// null, the element itself to `values` (the input's dtype). `width` < 2^31.
typedef int (*NativeOpsArgExtremeRowsFn)(int dtype, int largest, const void* in, void* values, int64_t* indices,
                                         int64_t rows, int64_t width, void* stream);
#define NATIVE_OPS_ARG_EXTREME_ROWS_SYMBOL "native_ops_cuda_arg_extreme_rows"
/// The entry itself, for the kernels library's other kernels: topk's k 1 (largest).
NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_arg_extreme_rows(int dtype, int largest, const void* in, void* values,
                                                           int64_t* indices, int64_t rows, int64_t width, void* stream);

#ifdef __cplusplus
}
#endif
