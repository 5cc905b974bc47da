// Softmax and log-softmax over the last dimension on the GPU, one block per row. The row
// is read twice: the first pass keeps a running (max, sum of exp) per thread, the second
// writes the result. A row is at most a few hundred KiB and the second read follows the
// first at once, so it hits L2: DRAM sees one read and one write per element, the floor.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cuda_common.cuh"

namespace native_ops::cuda {
namespace {

// exp that is accurate enough for the dtype: float keeps expf; 16-bit types take the
// hardware approximation, whose error is far below their rounding.
template <class T>
__device__ __forceinline__ float exp_for(float x) {
  return __expf(x);
}
template <>
__device__ __forceinline__ float exp_for<float>(float x) {
  return expf(x);
}

struct MaxSum {
  float max;
  float sum;  // of exp(x - max)
};

// Merges two partial (max, sum) pairs; an empty part (max -inf) adds nothing.
template <class T>
__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float max = fmaxf(a.max, b.max);
  const float sa = a.max == -INFINITY ? 0.f : a.sum * exp_for<T>(a.max - max);
  const float sb = b.max == -INFINITY ? 0.f : b.sum * exp_for<T>(b.max - max);
  return {max, sa + sb};
}

template <class T, int THREADS>
__device__ MaxSum block_merge(MaxSum part) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const MaxSum other{__shfl_xor_sync(0xffffffff, part.max, offset), __shfl_xor_sync(0xffffffff, part.sum, offset)};
    part = merge<T>(part, other);
  }
  if (THREADS == 32) return part;
  __shared__ MaxSum warps[THREADS / 32];
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) warps[warp] = part;
  __syncthreads();
  if (warp == 0) {
    part = threadIdx.x < THREADS / 32 ? warps[threadIdx.x] : MaxSum{-INFINITY, 0.f};
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      const MaxSum other{__shfl_xor_sync(0xffffffff, part.max, offset), __shfl_xor_sync(0xffffffff, part.sum, offset)};
      part = merge<T>(part, other);
    }
    if (threadIdx.x == 0) warps[0] = part;
  }
  __syncthreads();
  return warps[0];
}

template <class T, int VEC, int THREADS>
__global__ void __launch_bounds__(THREADS) softmax_rows(const T* __restrict__ in, T* __restrict__ out, int64_t width,
                                                         int log) {
  const T* x = in + int64_t{blockIdx.x} * width;
  T* y = out + int64_t{blockIdx.x} * width;

  MaxSum part{-INFINITY, 0.f};
  for (int64_t c = int64_t{threadIdx.x} * VEC; c < width; c += int64_t{THREADS} * VEC) {
    const Vec<T, VEC> v = *reinterpret_cast<const Vec<T, VEC>*>(x + c);
    float chunk_max = -INFINITY;
#pragma unroll
    for (int k = 0; k < VEC; ++k) chunk_max = fmaxf(chunk_max, to_float(v.v[k]));
    const float max = fmaxf(part.max, chunk_max);
    if (max == -INFINITY) continue;  // everything so far is -inf: it adds nothing
    float sum = part.max == -INFINITY ? 0.f : part.sum * exp_for<T>(part.max - max);
#pragma unroll
    for (int k = 0; k < VEC; ++k) sum += exp_for<T>(to_float(v.v[k]) - max);
    part = {max, sum};
  }
  const MaxSum row = block_merge<T, THREADS>(part);
  const float inverse = 1.f / row.sum;
  const float log_sum = logf(row.sum);

  for (int64_t c = int64_t{threadIdx.x} * VEC; c < width; c += int64_t{THREADS} * VEC) {
    const Vec<T, VEC> v = *reinterpret_cast<const Vec<T, VEC>*>(x + c);
    Vec<T, VEC> result;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      const float shifted = to_float(v.v[k]) - row.max;
      result.v[k] = from_float<T>(log ? shifted - log_sum : exp_for<T>(shifted) * inverse);
    }
    *reinterpret_cast<Vec<T, VEC>*>(y + c) = result;
  }
}

template <class T, int VEC>
int launch(const void* in, void* out, int log, int64_t rows, int64_t width, cudaStream_t stream) {
  const int64_t vectors = (width + VEC - 1) / VEC;
  // Enough threads that each loads at most about 8 vectors per pass.
  auto go = [&](auto threads) {
    constexpr int kThreadsPerBlock = decltype(threads)::value;
    softmax_rows<T, VEC, kThreadsPerBlock><<<static_cast<unsigned>(rows), kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), width, log);
    return static_cast<int>(cudaGetLastError());
  };
  if (vectors <= 64 * 8) return go(std::integral_constant<int, 64>{});
  if (vectors <= 128 * 8) return go(std::integral_constant<int, 128>{});
  if (vectors <= 256 * 8) return go(std::integral_constant<int, 256>{});
  if (vectors <= 512 * 8) return go(std::integral_constant<int, 512>{});
  return go(std::integral_constant<int, 1024>{});
}

}  // namespace
}  // namespace native_ops::cuda

extern "C" __attribute__((visibility("default"))) int native_ops_cuda_softmax_rows(int dtype, int log, const void* in,
                                                                                  void* out, int64_t rows,
                                                                                  int64_t width, void* stream) {
  using namespace native_ops::cuda;
  if (rows == 0 || width == 0) return cudaSuccess;
  if (rows > 0x7fffffff) return static_cast<int>(cudaErrorInvalidValue);
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    const bool aligned = width % kVec == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(out) % 16 == 0;
    return aligned ? launch<T, kVec>(in, out, log, rows, width, static_cast<cudaStream_t>(stream))
                   : launch<T, 1>(in, out, log, rows, width, static_cast<cudaStream_t>(stream));
  });
}
