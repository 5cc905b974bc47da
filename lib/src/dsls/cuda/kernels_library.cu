// The cuda DSL's own entry point in its kernels library (abi.h), and what every kernel of the
// library asks of the device it runs on (common.cuh).
#include <atomic>

#include <cuda_runtime.h>

#include "dsls/cuda/abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

// Compiled as every kernel of the library is: its PTX version says which code the device runs.
__global__ void sm90_code_probe() {}

}  // namespace

bool runs_sm90_code() {
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices] = {};  // 0: not asked, 1: no, 2: yes
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (device < kDevices) {
    if (const int answer = known[device].load(std::memory_order_relaxed); answer != 0) return answer == 2;
  }
  cudaFuncAttributes attributes{};
  const bool sm90 = cudaFuncGetAttributes(&attributes, sm90_code_probe) == cudaSuccess && attributes.ptxVersion >= 90;
  cudaGetLastError();  // not sticky: the kernels take their paths of any GPU instead
  if (device < kDevices) known[device].store(sm90 ? 2 : 1, std::memory_order_relaxed);
  return sm90;
}

}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY const char* native_ops_cuda_error_string(int error) {
  return cudaGetErrorString(static_cast<cudaError_t>(error));
}
