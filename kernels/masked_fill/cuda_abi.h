#pragma once
// The C entry point of masked_fill's kernel (cuda_kernels.cu), found by name in the cuda
// DSL's kernels library (dsls/cuda/abi.h says how entry points behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Writes `out` (`outer` x `repeats` x `width` elements of `dtype`, contiguous): element
/// (a, r, j) is the element of `value_bits` (the fill value's bits in `dtype`, in the low
/// bits) where `mask[a * width + j]` is true (non-zero), else `in`'s element (a, r, j).
/// `in` is contiguous and may be `out` (in place); `mask` holds `outer` x `width` bools.
/// Any alignment; aligned rows of a multiple of 16 bytes go vectorised. `outer` x `width` /
/// 256 under 2^31.
typedef int (*NativeOpsMaskedFillFn)(int dtype, const void* in, const uint8_t* mask, uint32_t value_bits, void* out,
                                     int64_t outer, int64_t repeats, int64_t width, void* stream);
#define NATIVE_OPS_MASKED_FILL_SYMBOL "native_ops_cuda_masked_fill"

#ifdef __cplusplus
}
#endif
