// The cuda DSL's own entry point in its kernels library (abi.h), and what every kernel of the
// library asks of the device it runs on (common.cuh).
#include <cuda_runtime.h>

#include "dsls/cuda/abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

// Compiled as every kernel of the library is: its PTX version says which code the device runs.
__global__ void sm90_code_probe() {}

}  // namespace

bool runs_sm90_code() {
  static DeviceAnswers<> answers;
  int sm90 = 0;
  const int error = answers.get(0, &sm90, [](int, int* yes) {
    cudaFuncAttributes attributes{};
    *yes = cudaFuncGetAttributes(&attributes, sm90_code_probe) == cudaSuccess && attributes.ptxVersion >= 90;
    cudaGetLastError();  // not sticky: the kernels take their paths of any GPU instead
    return static_cast<int>(cudaSuccess);
  });
  if (error != cudaSuccess) cudaGetLastError();
  return error == cudaSuccess && sm90 == 1;
}

}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY const char* native_ops_cuda_error_string(int error) {
  return cudaGetErrorString(static_cast<cudaError_t>(error));
}
