#pragma once
// Shared by the cuda DSL's kernels: element conversions and 16-byte vector access.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>

#include "dsls/cuda/abi.h"

namespace native_ops::cuda {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
// Volatile, so that the compiler converts again at each use instead of keeping a row's
// worth of converted floats alive: a bf16 row held in registers otherwise takes 80
// registers a thread where a float16 one takes 48 (float16's conversion is an instruction
// the compiler already repeats), which halves the blocks an SM holds.
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  float result;
  asm volatile("mov.b32 %0, {%1, %2};"
               : "=f"(result)
               : "h"(static_cast<unsigned short>(0)), "h"(__bfloat16_as_ushort(x)));
  return result;
}

template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// exp accurate enough for elements of T: float keeps expf; 16-bit types take the
/// hardware approximation, whose error is far below their rounding.
template <class T>
__device__ __forceinline__ float exp_for(float x) {
  return __expf(x);
}
template <>
__device__ __forceinline__ float exp_for<float>(float x) {
  return expf(x);
}

/// VEC elements of T in one aligned 16-byte (or smaller) access.
template <class T, int VEC>
struct alignas(sizeof(T) * VEC) Vec {
  T v[VEC];
};

/// Calls `launch.template operator()<T>()` with T the element type of `dtype`.
template <class Launch>
int dispatch_dtype(int dtype, Launch&& launch) {
  switch (dtype) {
    case kNativeOpsFloat32: return launch(float{});
    case kNativeOpsFloat16: return launch(__half{});
    case kNativeOpsBFloat16: return launch(__nv_bfloat16{});
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

/// Answers about a device that never change (its SM count, how many blocks or clusters of a
/// kernel fit at once), asked of the runtime the first time and kept, a relaxed atomic a
/// device and key: launches read them without a lock (two threads asking at once both ask,
/// alike). Devices past the first 64 are asked every time.
template <int kKeys = 1>
class DeviceAnswers {
 public:
  /// Sets `answer` (>= 0) for the current device and `key` (0 to kKeys - 1): kept, or
  /// `ask(device, answer)`'s, which returns a cudaError_t. Returns a cudaError_t; after an
  /// error nothing is kept.
  template <class Ask>
  int get(int key, int* answer, Ask&& ask) {
    int device = 0;
    if (const cudaError_t error = cudaGetDevice(&device); error != cudaSuccess) return static_cast<int>(error);
    std::atomic<int>* kept = device < kDevices ? &known_[device][key] : nullptr;
    if (kept != nullptr) {
      if (const int known = kept->load(std::memory_order_relaxed); known != 0) {
        *answer = known - 1;
        return cudaSuccess;
      }
    }
    if (const int error = ask(device, answer); error != cudaSuccess) return error;
    if (kept != nullptr) kept->store(*answer + 1, std::memory_order_relaxed);
    return cudaSuccess;
  }

 private:
  static constexpr int kDevices = 64;
  std::atomic<int> known_[kDevices][kKeys] = {};  // 0: not asked, else the answer + 1
};

/// The SMs of the current device into `sms`, asked of the runtime once a device; returns a
/// cudaError_t.
inline int current_device_sms(int* sms) {
  static DeviceAnswers<> answers;
  return answers.get(0, sms, [](int device, int* count) {
    return static_cast<int>(cudaDeviceGetAttribute(count, cudaDevAttrMultiProcessorCount, device));
  });
}

/// Whether the current device runs the library's sm_90 code, asked once a device. The
/// library holds sm_90 code and compute_80 PTX (dsl.cmake); a GPU that cannot run sm_90 code
/// (a later architecture, or any with CUDA_FORCE_PTX_JIT=1) runs the PTX, where clusters,
/// their barriers and bulk copies are compiled out, so its kernels must not take those paths.
/// Defined in kernels_library.cu.
bool runs_sm90_code();

/// The launch configuration of `clusters` clusters of `blocks` blocks of `threads` threads
/// on `stream` (config points into it: neither copied nor moved).
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  ClusterLaunch(int64_t clusters, int blocks, int threads, cudaStream_t stream) {
    config.gridDim = dim3(static_cast<unsigned>(clusters * blocks));
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.stream = stream;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim = {static_cast<unsigned>(blocks), 1, 1};
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

/// How many clusters of `blocks` blocks of kThreads threads of kKernel run at once on the
/// current device (none where it does not run sm_90 code; a GPC holds whole clusters only, so
/// fewer than its SMs / blocks), asked once a device and size; 0 where the runtime cannot say.
template <auto kKernel, int kThreads, int kMaxBlocks>
int resident_clusters(int blocks) {
  static DeviceAnswers<kMaxBlocks + 1> answers;  // a key a cluster size
  int clusters = 0;
  if (blocks < 1 || blocks > kMaxBlocks) return 0;
  const int error = answers.get(blocks, &clusters, [&](int, int* count) {
    const ClusterLaunch launch(1, blocks, kThreads, nullptr);
    *count = 0;
    if (runs_sm90_code() && cudaOccupancyMaxActiveClusters(count, kKernel, &launch.config) != cudaSuccess) {
      cudaGetLastError();  // not sticky: the caller's other kernels run instead
      *count = 0;
    }
    return static_cast<int>(cudaSuccess);
  });
  if (error != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return clusters;
}

}  // namespace native_ops::cuda
