#pragma once
// The C entry points of the norms' cuda kernels (cuda_kernels.cu, cuda_backward_kernels.cu),
// found by name in the cuda DSL's kernels library (dsls/cuda/abi.h says how entry points
// behave).

#include <stdint.h>

#include "dsls/cuda/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Layer norm (`centered` set) or RMS norm of each contiguous row of `width` elements, in
/// float: out = (x - mean) * rstd * weight + bias, with rstd = 1 / sqrt(mean((x - mean)^2) + eps)
/// and mean taken as 0 when not centered. `weight` and `bias` (`width` elements, the input's
/// dtype) may be null; `mean` (null when not centered) and `rstd` get one float per row.
/// `workspace`: NATIVE_OPS_NORM_ROWS_WORKSPACE_BYTES of device memory, 8-byte aligned, for
/// this call alone (any contents), where the persistent kernel of the widest layer norms
/// hands out rows; null: those rows take the other kernels.
typedef int (*NativeOpsNormRowsFn)(int dtype, int centered, const void* in, const void* weight, const void* bias,
                                   void* out, float* mean, float* rstd, int64_t rows, int64_t width, float eps,
                                   void* workspace, void* stream);
#define NATIVE_OPS_NORM_ROWS_WORKSPACE_BYTES 16
#define NATIVE_OPS_NORM_ROWS_SYMBOL "native_ops_cuda_norm_rows"

/// The gradients of layer norm (`mean` given) or RMS norm (`mean` null) over contiguous
/// rows of `width` elements (a multiple of 16 bytes, at most NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS
/// 16-byte vectors), given the forward's `mean` and `rstd` (one float per row each). With
/// xhat = (in - mean) * rstd (mean 0 for RMS norm):
///   grad_in = rstd * (grad_out * weight - mean(grad_out * weight) - xhat * mean(grad_out * weight * xhat)),
///     without the mean(grad_out * weight) term for RMS norm;
///   grad_weight = the sum over rows of grad_out * xhat; grad_bias = the sum over rows of grad_out.
/// `weight` may be null (ones); `grad_in`, `grad_weight` and `grad_bias` may each be null (not
/// wanted; grad_bias must be null for RMS norm). Tensor pointers are 16-byte aligned. The
/// column gradients need a float `workspace` of norm_backward_workspace(dtype, centered,
/// rows, width) floats on the current device, 16-byte aligned too.
typedef int (*NativeOpsNormBackwardRowsFn)(int dtype, const void* grad_out, const void* in, const float* mean,
                                           const float* rstd, const void* weight, void* grad_in, void* grad_weight,
                                           void* grad_bias, float* workspace, int64_t workspace_floats, int64_t rows,
                                           int64_t width, void* stream);
#define NATIVE_OPS_NORM_BACKWARD_ROWS_SYMBOL "native_ops_cuda_norm_backward_rows"
/// Sets `floats` to the workspace norm_backward_rows needs for the column gradients on the
/// current device (it depends on how many blocks fit there).
typedef int (*NativeOpsNormBackwardWorkspaceFn)(int dtype, int centered, int64_t rows, int64_t width, int64_t* floats);
#define NATIVE_OPS_NORM_BACKWARD_WORKSPACE_SYMBOL "native_ops_cuda_norm_backward_workspace"
/// The widest rows norm_backward_rows takes, in 16-byte vectors (16384 16-bit elements,
/// 8192 float32): 1024 threads hold 2 vectors each of a row's grad_out and input.
#define NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS 2048

#ifdef __cplusplus
}
#endif
