#pragma once
// Timing helpers of the CUDA probes (bench/cuda_rows_variants.cu, docs/design/data/*.cu):
// CUDA events around one call, medians after warm-ups, and an L2 flush for cold-cache times.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                   \
  do {                                                             \
    cudaError_t e = (x);                                           \
    if (e != cudaSuccess) {                                        \
      printf("ERR %s line %d\n", cudaGetErrorString(e), __LINE__); \
      exit(1);                                                     \
    }                                                              \
  } while (0)

/// The median time in us of `f()` over `repeats` calls after `warmups`, each call between
/// two events and `before()` (outside them) ahead of it.
template <class F, class Before = void (*)()>
float median_us(
    F f, Before before = [] {}, int warmups = 5, int repeats = 40) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < warmups; ++i) f();
  std::vector<float> t;
  for (int i = 0; i < repeats; ++i) {
    before();
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1000);
  }
  CHECK(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Reads `n` words so that the L2 holds none of the next call's data (the grid bench's flush).
__global__ void read_through(const uint4* p, size_t n, uint4* sink) {
  uint4 acc{};
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint4 v = p[i];
    acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
  }
  if (acc.x == 0x9e3779b9u) *sink = acc;
}
