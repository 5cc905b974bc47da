// argmax, argmin, max.dim and min.dim over the last dimension on the GPU: each row is read
// once, with 16-byte loads from its first vector boundary on (a scalar head and tail around
// them, so any width and any start run vectorised), each thread keeping the best element
// it has seen, then the threads' bests merged; one launch, a warp, a block or (decode rows
// over vocabularies) a cluster of blocks a row.
#include <cooperative_groups.h>
#include <algorithm>
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

// Thread `thread` of `threads`' share of a row: the scalar head, every threads-th vector
// from its own on, and the scalar tail.
template <class T, bool LARGEST>
__device__ __forceinline__ void scan_row(Scan<LARGEST>& s, const T* row, int64_t width, int thread, int threads) {
  constexpr int VEC = 16 / sizeof(T);
  const RowLayout<T> layout(row, width);
  for (int64_t c = thread; c < layout.head; c += threads) s.see(to_float(row[c]), c);
  scan_vectors<T, LARGEST>(s, row + layout.head, layout.head, 0, layout.vectors, thread, threads);
  for (int64_t c = layout.head + layout.vectors * VEC + thread; c < width; c += threads) s.see(to_float(row[c]), c);
}

// The block's best, in thread 0's s.
template <bool LARGEST, int THREADS>
__device__ __forceinline__ void block_merge(Scan<LARGEST>& s) {
  __shared__ float warp_values[THREADS / 32];
  __shared__ int64_t warp_indices[THREADS / 32];
  const int t = static_cast<int>(threadIdx.x);
  warp_merge(s);
  if (t % 32 == 0) {
    warp_values[t / 32] = s.value;
    warp_indices[t / 32] = s.index;
  }
  __syncthreads();
  if (t >= 32) return;
  s = Scan<LARGEST>{};
  if (t < THREADS / 32) s.merge(warp_values[t], warp_indices[t]);
  warp_merge(s);
}

// A warp a row (rows of up to a few thousand elements), kBlockThreads / 32 rows a block.
template <class T, bool LARGEST>
__global__ void __launch_bounds__(kBlockThreads)
    warp_rows(const T* in, int64_t rows, int64_t width, T* values, int64_t* indices) {
  const int64_t r = int64_t{blockIdx.x} * (kBlockThreads / 32) + threadIdx.x / 32;
  if (r >= rows) return;
  const int lane = threadIdx.x % 32;
  const T* row = in + r * width;
  Scan<LARGEST> s;
  scan_row(s, row, width, lane, 32);
  warp_merge(s);
  if (lane == 0) write_result(row, r, s.index, values, indices);
}

// A block of THREADS a row.
template <class T, bool LARGEST, int THREADS>
__global__ void __launch_bounds__(THREADS) block_rows(const T* in, int64_t width, T* values, int64_t* indices) {
  const int64_t r = blockIdx.x;
  const T* row = in + r * width;
  Scan<LARGEST> s;
  scan_row(s, row, width, static_cast<int>(threadIdx.x), THREADS);
  block_merge<LARGEST, THREADS>(s);
  if (threadIdx.x == 0) write_result(row, r, s.index, values, indices);
}

constexpr int kClusterThreads = 1024;
constexpr int kClusterMaxBlocks = 8;  // the portable cluster size

// A cluster of blocks a row (decode rows over vocabularies, which one SM reads too slowly):
// each block's best stored to a slot of the first block, which takes the best of them after
// the cluster's sync.
template <class T, bool LARGEST>
__global__ void __launch_bounds__(kClusterThreads, 1)
    cluster_rows(const T* in, int64_t width, T* values, int64_t* indices) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  __shared__ float block_values[kClusterMaxBlocks];
  __shared__ int64_t block_indices[kClusterMaxBlocks];
  const cg::cluster_group cluster = cg::this_cluster();
  const auto rank = static_cast<int>(cluster.block_rank());
  const auto blocks = static_cast<int>(cluster.num_blocks());
  cluster.barrier_arrive();  // waited for before the first block's slots are written
  const int64_t r = blockIdx.x / blocks;
  const T* row = in + r * width;
  Scan<LARGEST> s;
  scan_row(s, row, width, rank * kClusterThreads + static_cast<int>(threadIdx.x), blocks * kClusterThreads);
  block_merge<LARGEST, kClusterThreads>(s);
  cluster.barrier_wait();
  if (threadIdx.x == 0) {
    *cluster.map_shared_rank(&block_values[rank], 0) = s.value;
    *cluster.map_shared_rank(&block_indices[rank], 0) = s.index;
  }
  cluster.sync();
  if (rank != 0 || threadIdx.x >= 32) return;
  Scan<LARGEST> best;
  if (static_cast<int>(threadIdx.x) < blocks) best.merge(block_values[threadIdx.x], block_indices[threadIdx.x]);
  warp_merge(best);
  if (threadIdx.x == 0) write_result(row, r, best.index, values, indices);
#else
  __trap();
#endif
}

// Rows at least this wide take a cluster a row where the rows fit one wave of clusters:
// a block reads a row at about 10 elements/ns (its per-element work bounds it), so a
// vocabulary row alone on one SM is slower than aten from about 131072 (see
// docs/design/arg-extreme.md); a 1024-thread block a vector a thread at the least.
// H100, CUDA graphs, torch.max(x, -1): 1-8 rows of 50257 in 0.73-0.88 of a block a row's
// time, of 128256 0.45-0.49 (12.0-13.1 -> 5.7-6.1 us); 16 rows of 50257-262144 exceed one
// wave of 7-8 block clusters there (docs/design/data/argmax-cluster-decode-h100.json).
constexpr int64_t kClusterMinWidth = 32768;
// At most this many rows (the most measured) take clusters.
constexpr int64_t kClusterMaxRows = 8;

// Launches cluster_rows where it applies, else returns -1.
template <class T, bool LARGEST>
int launch_cluster_rows(const T* in, T* values, int64_t* indices, int64_t rows, int64_t width, cudaStream_t stream) {
  constexpr int kDeclined = -1;
  constexpr int64_t kPerBlock = int64_t{kClusterThreads} * (16 / sizeof(T));
  if (width < kClusterMinWidth || rows > kClusterMaxRows) return kDeclined;
  const int blocks = static_cast<int>(std::min<int64_t>(kClusterMaxBlocks, (width + kPerBlock - 1) / kPerBlock));
  const int resident = resident_clusters<cluster_rows<T, LARGEST>, kClusterThreads, kClusterMaxBlocks>(blocks);
  if (resident == 0 || rows > resident) return kDeclined;
  const ClusterLaunch launch(rows, blocks, kClusterThreads, stream);
  return static_cast<int>(cudaLaunchKernelEx(&launch.config, cluster_rows<T, LARGEST>, in, width, values, indices));
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
  if (const int error = launch_cluster_rows<T, LARGEST>(in, values, indices, rows, width, stream); error >= 0) {
    return error;
  }
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
