#pragma once
// The cuda DSL's kernels library (abi.h), loaded on the first call of a cuda impl (never by
// init(), so initialisation does not touch CUDA), its entry points found by name, and the
// launch context an impl hands them: the tensor's device and its current stream.

#include <ATen/core/Tensor.h>

#include "dsls/cuda/abi.h"

namespace native_ops::cuda {

/// The address of the entry point `symbol` of the kernels library, loading the library the
/// first time (thread-safe). Throws native_ops::KernelUnavailable naming the library and
/// the fix when it cannot be loaded or lacks the symbol.
void* kernel_symbol(const char* symbol);

/// An entry point as its type (an op folder's cuda_abi.h declares both). Impls keep it:
///   static const auto softmax_rows = cuda::kernel<NativeOpsSoftmaxRowsFn>(NATIVE_OPS_SOFTMAX_ROWS_SYMBOL);
template <class Fn>
Fn kernel(const char* symbol) {
  return reinterpret_cast<Fn>(kernel_symbol(symbol));
}

/// The cudaStream_t current on the tensor's device: where a kernel must run so that it is
/// ordered with the caller's other work.
void* current_stream(const at::Tensor& tensor);

/// The kernels' code for a tensor's dtype; throws native_ops::Error for another dtype.
int dtype_code(const at::Tensor& tensor);

/// Throws native_ops::KernelUnavailable with CUDA's message when `error` is not 0.
void check(int error, const char* kernel);

}  // namespace native_ops::cuda
