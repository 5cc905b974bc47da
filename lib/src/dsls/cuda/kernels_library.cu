// The cuda DSL's own entry point in its kernels library (abi.h).
#include <cuda_runtime.h>

#include "dsls/cuda/abi.h"

NATIVE_OPS_CUDA_ENTRY const char* native_ops_cuda_error_string(int error) {
  return cudaGetErrorString(static_cast<cudaError_t>(error));
}
