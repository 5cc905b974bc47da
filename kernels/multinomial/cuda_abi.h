#pragma once
// The C entry point of multinomial's kernel (cuda_kernels.cu), found by name in the cuda
// DSL's kernels library (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// For each contiguous row of `categories` probabilities `p` (`dtype`) and draws `q` of
/// Exp(1) (the same dtype and shape): writes to `indices` (int64, one a row) the first
/// column of the largest p / q, the quotient rounded to `dtype` as aten's division rounds
/// it. A row with an element that is negative, infinite or NaN, or with no positive one,
/// stops the kernel with a device-side assertion, as aten's checks do. `categories` is at
/// most 2^24.
typedef int (*NativeOpsSampleOneFn)(int dtype, const void* p, const void* q, int64_t* indices, int64_t rows,
                                    int64_t categories, void* stream);
#define NATIVE_OPS_SAMPLE_ONE_SYMBOL "native_ops_cuda_sample_one"

#ifdef __cplusplus
}
#endif
