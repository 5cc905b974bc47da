#pragma once
// The cuda DSL's kernels library, libnative_ops_cuda_kernels.so: the device code of every
// op folder's cuda_kernels.cu, built by nvcc without libtorch and loaded on the first call
// of a cuda impl (never at init()). Each op folder declares its entry points in its own
// cuda_abi.h: extern "C" functions found by name (cuda::kernel<Fn>(symbol)). Tensors
// cross as raw pointers and strides; every entry point launches on `stream` (a
// cudaStream_t) on the current device and returns a cudaError_t (0: success).

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Element types the kernels take.
enum NativeOpsCudaDtype { kNativeOpsFloat32 = 0, kNativeOpsFloat16 = 1, kNativeOpsBFloat16 = 2 };

/// Marks an entry point of the kernels library: the library exports nothing else.
#define NATIVE_OPS_CUDA_ENTRY extern "C" __attribute__((visibility("default")))

/// The message of a cudaError_t.
typedef const char* (*NativeOpsCudaErrorStringFn)(int error);
#define NATIVE_OPS_CUDA_ERROR_STRING_SYMBOL "native_ops_cuda_error_string"

#ifdef __cplusplus
}
#endif
