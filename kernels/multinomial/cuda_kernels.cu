// multinomial's one sample a row after aten's exponential draw q ~ Exp(1): each row's
// probabilities p and draws q read once, aten's checks (every p finite and not negative,
// some p positive) and argmax(p / q) (the quotient rounded to the dtype, as aten's
// division writes it; the first column of the largest) in one launch, a block a row,
// where aten runs about a dozen kernels (min, max, their comparisons, two asserts, a sum,
// the division, argmax).
#include <cmath>
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

// One thread's (then a warp's, a block's) view of a row: the largest quotient and its
// first column, whether any p was positive, whether any was negative, infinite or NaN.
struct RowScan {
  float best = -INFINITY;
  int32_t column = INT32_MAX;
  bool positive = false;
  bool invalid = false;

  __device__ __forceinline__ void merge(const RowScan& other) {
    if (other.best > best || (other.best == best && other.column < column)) {
      best = other.best;
      column = other.column;
    }
    positive |= other.positive;
    invalid |= other.invalid;
  }

  // Takes column `c` of probability `x` and draw `draw`, columns coming in increasing
  // order: a later quotient replaces the best only when larger.
  template <class T>
  __device__ __forceinline__ void take(float x, float draw, int32_t c) {
    invalid |= !(x >= 0.0f && x < INFINITY);
    positive |= x > 0.0f;
    const float quotient = to_float(from_float<T>(x / draw));
    if (quotient > best || column == INT32_MAX) {
      best = quotient;
      column = c;
    }
  }
};

__device__ __forceinline__ RowScan warp_merge(RowScan s) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    RowScan other;
    other.best = __shfl_xor_sync(0xffffffffu, s.best, offset);
    other.column = __shfl_xor_sync(0xffffffffu, s.column, offset);
    other.positive = __shfl_xor_sync(0xffffffffu, static_cast<int>(s.positive), offset) != 0;
    other.invalid = __shfl_xor_sync(0xffffffffu, static_cast<int>(s.invalid), offset) != 0;
    s.merge(other);
  }
  return s;
}

template <class T, int THREADS>
__global__ void __launch_bounds__(THREADS)
    sample_one(const T* __restrict__ p, const T* __restrict__ q, int64_t* __restrict__ indices, int64_t categories) {
  const int64_t row = blockIdx.x;
  const T* p_row = p + row * categories;
  const T* q_row = q + row * categories;
  RowScan s;
  // A row alone is latency-bound: each thread issues kInFlight columns' loads before it
  // takes the first of them.
  constexpr int kInFlight = 8;
  const int32_t columns = static_cast<int32_t>(categories);
  int32_t c = threadIdx.x;
  for (; c + (kInFlight - 1) * THREADS < columns; c += kInFlight * THREADS) {
    float x[kInFlight], draw[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) {
      x[k] = to_float(p_row[c + k * THREADS]);
      draw[k] = to_float(q_row[c + k * THREADS]);
    }
    // Without it the compiler sinks each float32 load to its division, one column at a
    // time again.
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) asm volatile("" : "+f"(x[k]), "+f"(draw[k]));
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) s.take<T>(x[k], draw[k], c + k * THREADS);
  }
  for (; c < columns; c += THREADS) s.take<T>(to_float(p_row[c]), to_float(q_row[c]), c);
  s = warp_merge(s);
  __shared__ RowScan warps[THREADS / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warps[warp] = s;
  __syncthreads();
  if (warp != 0) return;
  s = lane < THREADS / 32 ? warps[lane] : RowScan{};
  s = warp_merge(s);
  if (lane != 0) return;
  if (s.invalid)
    __assert_fail("probability tensor contains either `inf`, `nan` or element < 0", __FILE__, __LINE__, __func__);
  if (!s.positive)
    __assert_fail("invalid multinomial distribution (sum of probabilities <= 0)", __FILE__, __LINE__, __func__);
  indices[row] = s.column;
}

// Rows of up to this many categories (top-k sampling's tens) take 256-thread blocks; wider
// rows (a vocabulary) 1024, for the loads in flight a row alone must keep.
constexpr int64_t kNarrowRow = 8192;

template <class T>
int launch(const T* p, const T* q, int64_t* indices, int64_t rows, int64_t categories, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(rows);
  if (categories <= kNarrowRow) {
    sample_one<T, 256><<<blocks, 256, 0, stream>>>(p, q, indices, categories);
  } else {
    sample_one<T, 1024><<<blocks, 1024, 0, stream>>>(p, q, indices, categories);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_sample_one(int dtype, const void* p, const void* q, int64_t* indices,
                                                     int64_t rows, int64_t categories, void* stream) {
  using namespace native_ops::cuda;
  if (rows == 0) return cudaSuccess;
  if (rows > 0x7fffffff || categories <= 0 || categories > (int64_t{1} << 24)) {
    return static_cast<int>(cudaErrorInvalidValue);
  }
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    return launch<T>(static_cast<const T*>(p), static_cast<const T*>(q), indices, rows, categories,
                     static_cast<cudaStream_t>(stream));
  });
}
