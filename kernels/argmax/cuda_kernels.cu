// argmax, argmin, max.dim and min.dim over the last dimension on the GPU: each row is read
// once, with 16-byte loads from its first vector boundary on (a scalar head and tail around
// them, so any width and any start run vectorised), each thread keeping the best element
// it has seen, then the threads' bests merged; one launch, a warp or a block a row.
#include <cmath>
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

constexpr int kBlockThreads = 256;

// The best element so far: its value (as float, exact for every input dtype) and index in
// the row.
struct Best {
  float value;
  int64_t index;
};

// Whether (a, ai) goes before (b, bi): a NaN before any number, then the larger (LARGEST)
// or smaller value, then the lower index, as aten picks among equal elements.
template <bool LARGEST>
__device__ __forceinline__ bool before(float a, int64_t ai, float b, int64_t bi) {
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan || b_nan) return a_nan && (!b_nan || ai < bi);
  if (a != b) return LARGEST ? a > b : a < b;
  return ai < bi;
}

// One thread's scan, in increasing index order, so that a later element replaces the best
// only when strictly better (or the first NaN): cheaper than before() in the inner loop.
template <bool LARGEST>
struct Scan {
  float value = LARGEST ? -INFINITY : INFINITY;
  int64_t index = INT64_MAX;
  __device__ __forceinline__ void see(float x, int64_t i) {
    const bool better = LARGEST ? x > value : x < value;
    const bool first_nan = x != x && value == value;
    if (better || first_nan || index == INT64_MAX) {
      value = x;
      index = i;
    }
  }
  __device__ __forceinline__ void merge(float v, int64_t i) {
    if (before<LARGEST>(v, i, value, index)) {
      value = v;
      index = i;
    }
  }
};

template <bool LARGEST>
__device__ __forceinline__ void warp_merge(Scan<LARGEST>& s) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    const float v = __shfl_xor_sync(0xffffffffu, s.value, offset);
    const auto i = static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(s.index), offset));
    s.merge(v, i);
  }
}

// Elements [begin, end) of a row's vector range (a multiple of VEC, 16-byte aligned from
// `aligned`), each thread from `thread` on in steps of `threads`, four loads in flight.
template <class T, bool LARGEST>
__device__ __forceinline__ void scan_vectors(Scan<LARGEST>& s, const T* aligned, int64_t first_index, int64_t begin,
                                             int64_t end, int thread, int threads) {
  constexpr int VEC = 16 / sizeof(T);
  const auto* vectors = reinterpret_cast<const Vec<T, VEC>*>(aligned);
  int64_t v = begin + thread;
  for (; v + 3 * threads < end; v += 4 * threads) {
    Vec<T, VEC> x[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) x[k] = vectors[v + k * threads];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) s.see(to_float(x[k].v[e]), first_index + (v + k * threads) * VEC + e);
    }
  }
  for (; v < end; v += threads) {
    const Vec<T, VEC> x = vectors[v];
#pragma unroll
    for (int e = 0; e < VEC; ++e) s.see(to_float(x.v[e]), first_index + v * VEC + e);
  }
}

// Where a row's 16-byte vectors are: `head` scalars before the first vector boundary,
// then `vectors` whole vectors, then the tail.
template <class T>
struct RowLayout {
  int64_t head;
  int64_t vectors;
  __device__ RowLayout(const T* row, int64_t width) {
    constexpr int VEC = 16 / sizeof(T);
    const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(row) % 16);
    head = min(width, (16 - misaligned) % 16 / static_cast<int64_t>(sizeof(T)));
    vectors = (width - head) / VEC;
  }
};

template <class T>
__device__ __forceinline__ void write_result(const T* row, int64_t r, int64_t index, T* values, int64_t* indices) {
  indices[r] = index;
  if (values != nullptr) values[r] = row[index];  // the element itself: NaN payloads and -0.0 kept
}

// A warp a row (rows of up to a few thousand elements), kBlockThreads / 32 rows a block.
template <class T, bool LARGEST>
__global__ void __launch_bounds__(kBlockThreads)
    warp_rows(const T* in, int64_t rows, int64_t width, T* values, int64_t* indices) {
  constexpr int VEC = 16 / sizeof(T);
  const int64_t r = int64_t{blockIdx.x} * (kBlockThreads / 32) + threadIdx.x / 32;
  if (r >= rows) return;
  const int lane = threadIdx.x % 32;
  const T* row = in + r * width;
  const RowLayout<T> layout(row, width);
  Scan<LARGEST> s;
  for (int64_t c = lane; c < layout.head; c += 32) s.see(to_float(row[c]), c);
  scan_vectors<T, LARGEST>(s, row + layout.head, layout.head, 0, layout.vectors, lane, 32);
  for (int64_t c = layout.head + layout.vectors * VEC + lane; c < width; c += 32) s.see(to_float(row[c]), c);
  warp_merge(s);
  if (lane == 0) write_result(row, r, s.index, values, indices);
}

// A block of THREADS a row.
template <class T, bool LARGEST, int THREADS>
__global__ void __launch_bounds__(THREADS) block_rows(const T* in, int64_t width, T* values, int64_t* indices) {
  constexpr int VEC = 16 / sizeof(T);
  const int64_t r = blockIdx.x;
  const T* row = in + r * width;
  const RowLayout<T> layout(row, width);
  const int t = threadIdx.x;
  Scan<LARGEST> s;
  for (int64_t c = t; c < layout.head; c += THREADS) s.see(to_float(row[c]), c);
  scan_vectors<T, LARGEST>(s, row + layout.head, layout.head, 0, layout.vectors, t, THREADS);
  for (int64_t c = layout.head + layout.vectors * VEC + t; c < width; c += THREADS) s.see(to_float(row[c]), c);
  warp_merge(s);
  __shared__ float warp_values[THREADS / 32];
  __shared__ int64_t warp_indices[THREADS / 32];
  if (t % 32 == 0) {
    warp_values[t / 32] = s.value;
    warp_indices[t / 32] = s.index;
  }
  __syncthreads();
  if (t >= 32) return;
  s = Scan<LARGEST>{};
  if (t < THREADS / 32) s.merge(warp_values[t], warp_indices[t]);
  warp_merge(s);
  if (t == 0) write_result(row, r, s.index, values, indices);
}

// Rows up to this many vectors run a warp each when there are rows enough to fill the
// GPU: a block a row of 4096 16-bit elements left each thread two vectors (0.74-0.89x aten
// over 8192 rows and more).
constexpr int64_t kWarpRowVectors = 32 * 32;
// Fewer rows than this get 1024-thread blocks: a row then has an SM to itself, and needs
// the loads of many threads in flight.
constexpr int64_t kFewRows = 256;

template <class T, bool LARGEST>
int launch(const T* in, T* values, int64_t* indices, int64_t rows, int64_t width, cudaStream_t stream) {
  constexpr int VEC = 16 / sizeof(T);
  if (rows >= 1024 && width <= kWarpRowVectors * VEC) {
    const int64_t blocks = (rows + kBlockThreads / 32 - 1) / (kBlockThreads / 32);
    warp_rows<T, LARGEST>
        <<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(in, rows, width, values, indices);
  } else if (rows < kFewRows) {
    block_rows<T, LARGEST, 1024><<<static_cast<unsigned>(rows), 1024, 0, stream>>>(in, width, values, indices);
  } else {
    block_rows<T, LARGEST, kBlockThreads>
        <<<static_cast<unsigned>(rows), kBlockThreads, 0, stream>>>(in, width, values, indices);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_arg_extreme_rows(int dtype, int largest, const void* in, void* values,
                                                           int64_t* indices, int64_t rows, int64_t width,
                                                           void* stream) {
  using namespace native_ops::cuda;
  if (rows == 0 || width == 0) return cudaSuccess;
  if (width > 0x7fffffff || rows > 0x7fffffff) {
    return static_cast<int>(cudaErrorInvalidValue);
  }
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    const auto* input = static_cast<const T*>(in);
    auto* out = static_cast<T*>(values);
    const auto s = static_cast<cudaStream_t>(stream);
    return largest != 0 ? launch<T, true>(input, out, indices, rows, width, s)
                        : launch<T, false>(input, out, indices, rows, width, s);
  });
}
