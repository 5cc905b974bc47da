#pragma once
// Reductions over the threads of a row (a warp or a block), and the operators the row
// kernels reduce with.
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {

/// Warp shuffles of the values reductions combine.
__device__ __forceinline__ float shuffle_xor(float value, int offset) {
  return __shfl_xor_sync(0xffffffff, value, offset);
}
__device__ __forceinline__ float2 shuffle_xor(float2 value, int offset) {
  return {__shfl_xor_sync(0xffffffff, value.x, offset), __shfl_xor_sync(0xffffffff, value.y, offset)};
}

template <int WIDTH, class V, class Op>
__device__ __forceinline__ V warp_reduce(V value, Op op) {
#pragma unroll
  for (int offset = WIDTH / 2; offset > 0; offset >>= 1) value = op(value, shuffle_xor(value, offset));
  return value;
}

/// Combines one value per thread over the threads of a row (a warp or a block) and gives
/// every one of them the result. `op` must be associative and commutative.
template <int THREADS, bool WARP_PER_ROW>
struct RowReduce {
  template <class V, class Op>
  __device__ __forceinline__ V operator()(V value, Op op) const {
    value = warp_reduce<32>(value, op);
    if constexpr (WARP_PER_ROW || THREADS == 32) {
      return value;
    } else {
      __shared__ V warps[THREADS / 32];
      __syncthreads();  // the previous reduction's readers are done with `warps`
      if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = value;
      __syncthreads();
      value = warps[threadIdx.x % (THREADS / 32)];
      return warp_reduce<THREADS / 32>(value, op);
    }
  }
};

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
  __device__ float2 operator()(float2 a, float2 b) const { return {a.x + b.x, a.y + b.y}; }
};
/// Combines (mean, variance) pairs of two equally many elements: the mean of the means, and
/// the mean of the variances plus the squared half gap between the means (Chan et al.'s
/// parallel update for equal counts: no E[x^2] - E[x]^2 cancellation). Exactly commutative,
/// so both lanes of a butterfly get the same bits. Every combination must be of equal
/// counts: a butterfly over threads that hold the same number of elements.
struct MeanVariance {
  __device__ float2 operator()(float2 a, float2 b) const {
    const float half_gap = (a.x - b.x) * 0.5f;
    return {(a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f + half_gap * half_gap};
  }
};

}  // namespace native_ops::cuda
