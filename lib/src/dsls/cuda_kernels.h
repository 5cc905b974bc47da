#pragma once
// The cuda DSL's device code, libnative_ops_cuda_kernels.so, loaded on the first call of a
// cuda impl (never by init(), so initialisation does not touch CUDA), and the launch
// context an impl hands it: the tensor's device and its current stream.

#include <ATen/core/Tensor.h>

#include "cuda_abi.h"

namespace native_ops::cuda {

/// The kernels' entry points.
struct Kernels {
  NativeOpsOuterProductFn outer_product;
  NativeOpsSoftmaxRowsFn softmax_rows;
  NativeOpsNormRowsFn norm_rows;
  NativeOpsRmsNormBackwardRowsFn rms_norm_backward_rows;
  NativeOpsRmsNormBackwardWorkspaceFn rms_norm_backward_workspace;
  NativeOpsCudaErrorStringFn error_string;
};

/// Loads the kernels library the first time (thread-safe) and returns its entry points.
/// Throws native_ops::KernelUnavailable naming the library and the fix when it cannot be
/// loaded.
const Kernels& kernels();

/// The cudaStream_t current on the tensor's device: where a kernel must run so that it is
/// ordered with the caller's other work.
void* current_stream(const at::Tensor& tensor);

/// The kernels' code for a tensor's dtype; throws native_ops::Error for another dtype.
int dtype_code(const at::Tensor& tensor);

/// Throws native_ops::KernelUnavailable with CUDA's message when `error` is not 0.
void check(int error, const char* kernel);

}  // namespace native_ops::cuda
