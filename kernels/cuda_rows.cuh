#pragma once
// Row kernels on the GPU: an op that reduces each contiguous row of a [rows, width] tensor
// and then rewrites it (softmax, layer norm, RMS norm) is memory-bound, so the row is read
// from DRAM once and held on chip while it is reduced and rewritten. How it is held
// depends on its width:
//   - narrow rows: in the registers of one warp (four rows per 128-thread block);
//   - up to 8 vectors per thread of a block (up to 512 threads): in the block's registers;
//   - up to 16 vectors per thread of 512 (sm_90, 16-byte vectors): half in the block's
//     registers, half in its shared memory, two blocks to an SM (else up to 8 vectors per
//     thread of 1024, in registers);
//   - up to 8 times 256 x 8 vectors (sm_90): split over the registers of a cluster of 8
//     blocks, which combine their partial reductions through distributed shared memory;
//   - wider: not held; every pass reads the row again (the later ones mostly from L2).
// An op is a functor `op(row, row_index, thread, reduce)` that gets the row through the
// interface the holders share (below) and a reducer over the threads of the row.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cooperative_groups.h>

#include "cuda_common.cuh"

namespace native_ops::cuda {

/// Converts a vector to float, lets g rewrite it and writes it back as T.
template <class T, int VEC, class G>
__device__ __forceinline__ void store_vector(T* y, int64_t c, const Vec<T, VEC>& in, G& g) {
  float vals[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) vals[k] = to_float(in.v[k]);
  g(c, vals);
  Vec<T, VEC> out;
#pragma unroll
  for (int k = 0; k < VEC; ++k) out.v[k] = from_float<T>(vals[k]);
  if constexpr (sizeof(out) == 16) {
    // One 128-bit store: assigned member by member, the 16-bit cluster kernels' vectors
    // were partly written in 2- and 4-byte pieces (softmax [512,131072] bf16 on the H200:
    // 102.4 -> 91.0 us, 64 -> 48 registers; the same bytes either way)
    uint4 raw;
    memcpy(&raw, &out, sizeof(raw));
    *reinterpret_cast<uint4*>(y + c) = raw;
  } else {
    *reinterpret_cast<Vec<T, VEC>*>(y + c) = out;
  }
}

/// The interface of a row holder, for a thread that holds elements of one row:
///   for_each(f)    calls f(x) for each element it holds, x as float;
///   store(y, g)    for each of its vectors at column c: vals[k] = float of the element,
///                  g(c, vals) rewrites vals, and the vector is written to y + c;
///   kOnChip        false when each pass re-reads the row from memory.
/// A RegisterRow holds the columns [begin, end) of a row (a cluster block's slice, or all
/// of it); its thread's i-th vector starts at column begin + (i * ROW_THREADS + t) * VEC.
template <class T, int VEC, int ROW_THREADS, int MAX_VECS>
struct RegisterRow {
  static constexpr bool kOnChip = true;
  Vec<T, VEC> v[MAX_VECS];
  int64_t first;  // column of the thread's first vector
  int64_t end;

  __device__ __forceinline__ RegisterRow(const T* x, int t, int64_t begin, int64_t row_end)
      : first(begin + int64_t{t} * VEC), end(row_end) {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {  // every load issued before the first use
      const int64_t c = column(i);
      if (c < end) v[i] = *reinterpret_cast<const Vec<T, VEC>*>(x + c);
    }
  }
  __device__ __forceinline__ int64_t column(int i) const { return first + int64_t{i} * ROW_THREADS * VEC; }

  template <class F>
  __device__ __forceinline__ void for_each(F f) const {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      if (column(i) >= end) continue;
#pragma unroll
      for (int k = 0; k < VEC; ++k) f(to_float(v[i].v[k]));
    }
  }

  template <class G>
  __device__ __forceinline__ void store(T* y, G g) const {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      const int64_t c = column(i);
      if (c >= end) continue;
      store_vector(y, c, v[i], g);
    }
  }
};

/// A row twice as wide as a block's registers hold: the thread's first MAX_VECS vectors in
/// registers (a RegisterRow of the first ROW_THREADS * MAX_VECS vectors), its next
/// MAX_VECS in the block's shared memory, copied there by cp.async without passing through
/// registers. Each thread reads back only the vectors it copied, so no barrier is needed;
/// and a block needs half an SM's registers and shared memory, so that two blocks share an
/// SM and one's reductions overlap the other's loads and stores.
template <class T, int VEC, int ROW_THREADS, int MAX_VECS>
struct SplitRow {
  static constexpr bool kOnChip = true;
  static constexpr int64_t kNearColumns = int64_t{ROW_THREADS} * MAX_VECS * VEC;
  static constexpr size_t kSharedBytes = size_t{ROW_THREADS} * MAX_VECS * sizeof(Vec<T, VEC>);
  RegisterRow<T, VEC, ROW_THREADS, MAX_VECS> near;
  const Vec<T, VEC>* far;  // the thread's first vector in shared memory; the next ROW_THREADS on
  int64_t far_first;        // its column
  int64_t end;

  __device__ __forceinline__ SplitRow(const T* x, int t, int64_t width, Vec<T, VEC>* shared)
      : near(x, t, 0, width < kNearColumns ? width : kNearColumns),
        far(shared + t),
        far_first(kNearColumns + int64_t{t} * VEC),
        end(width) {
    static_assert(sizeof(Vec<T, VEC>) == 16, "cp.async.cg copies 16 bytes");
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      const int64_t c = column(i);
      if (c >= end) continue;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       static_cast<uint32_t>(__cvta_generic_to_shared(far + i * ROW_THREADS))),
                   "l"(x + c)
                   : "memory");
#else
      const_cast<Vec<T, VEC>*>(far)[i * ROW_THREADS] = *reinterpret_cast<const Vec<T, VEC>*>(x + c);
#endif
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
  }
  __device__ __forceinline__ int64_t column(int i) const { return far_first + int64_t{i} * ROW_THREADS * VEC; }

  template <class F>
  __device__ __forceinline__ void for_each(F f) const {
    near.for_each(f);
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      if (column(i) >= end) continue;
      const Vec<T, VEC> v = far[i * ROW_THREADS];
#pragma unroll
      for (int k = 0; k < VEC; ++k) f(to_float(v.v[k]));
    }
  }

  template <class G>
  __device__ __forceinline__ void store(T* y, G g) const {
    near.store(y, g);
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      const int64_t c = column(i);
      if (c >= end) continue;
      store_vector(y, c, far[i * ROW_THREADS], g);
    }
  }
};

/// A row left in device memory: every pass reads it again.
template <class T, int VEC, int ROW_THREADS>
struct MemoryRow {
  static constexpr bool kOnChip = false;
  const Vec<T, VEC>* vectors;
  int t;
  int64_t count;

  __device__ __forceinline__ MemoryRow(const T* x, int thread, int64_t width)
      : vectors(reinterpret_cast<const Vec<T, VEC>*>(x)), t(thread), count(width / VEC) {}

  template <class F>
  __device__ __forceinline__ void for_each(F f) const {
    for (int64_t i = t; i < count; i += ROW_THREADS) {
      const Vec<T, VEC> v = vectors[i];
#pragma unroll
      for (int k = 0; k < VEC; ++k) f(to_float(v.v[k]));
    }
  }

  template <class G>
  __device__ __forceinline__ void store(T* y, G g) const {
    for (int64_t i = t; i < count; i += ROW_THREADS) store_vector(y, i * VEC, vectors[i], g);
  }
};

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

/// Combines one value per thread over the threads of a row (a warp, a block, or the
/// blocks of a cluster) and gives every one of them the result. `op` must be associative
/// and commutative; a cluster's blocks combine their totals in rank order, so that every
/// block gets the same bits.
template <int THREADS, bool WARP_PER_ROW, int CLUSTER = 1>
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
      value = warp_reduce<THREADS / 32>(value, op);
      if constexpr (CLUSTER > 1) value = cluster_combine(value, op);
      return value;
    }
  }

  // Two slots, taken in turn: a block writes slot n % 2 of reduction n after the sync of
  // reduction n - 1, which every block reaches only after reading reduction n - 2's slot,
  // so one sync per reduction suffices. rows_kernel syncs the cluster once more before its
  // blocks exit, while others may still read their slots.
  template <class V, class Op>
  __device__ __forceinline__ V cluster_combine(V block_total, Op op) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    static_assert(sizeof(V) <= sizeof(float2), "a slot holds a float2");
    __shared__ float2 slots[2];
    V* slot = reinterpret_cast<V*>(&slots[reductions++ % 2]);
    const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    if (threadIdx.x == 0) *slot = block_total;
    cluster.sync();  // every block's total is written (release / acquire across the cluster)
    V total = *cluster.map_shared_rank(slot, 0);
#pragma unroll
    for (int rank = 1; rank < CLUSTER; ++rank) total = op(total, *cluster.map_shared_rank(slot, rank));
    return total;
#else
    __trap();  // launch_rows() never launches clusters before sm_90
    return block_total;
#endif
  }
  mutable unsigned reductions = 0;
};

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
  __device__ float2 operator()(float2 a, float2 b) const { return {a.x + b.x, a.y + b.y}; }
};

enum class Holder { warp_registers, block_registers, block_registers_and_shared, cluster_registers, memory };

// One row per warp, block or cluster (of CLUSTER blocks, consecutive in x); MAX_VECS
// vectors per thread in registers.
template <class Op, int VEC, int THREADS, Holder HOLDER, int MAX_VECS, int CLUSTER>
__global__ void __launch_bounds__(THREADS) rows_kernel(Op op, int64_t rows, int64_t width) {
  using T = typename Op::Element;
  if constexpr (HOLDER == Holder::warp_registers) {
    const int64_t row = int64_t{blockIdx.x} * (THREADS / 32) + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only: no block-wide barrier follows
    const int t = threadIdx.x % 32;
    op(RegisterRow<T, VEC, 32, MAX_VECS>(op.in + row * width, t, 0, width), row, t, RowReduce<THREADS, true>{});
  } else if constexpr (HOLDER == Holder::cluster_registers) {
    const int64_t row = blockIdx.x / CLUSTER;
    const int rank = static_cast<int>(blockIdx.x % CLUSTER);
    const int64_t slice = (width / VEC + CLUSTER - 1) / CLUSTER * VEC;  // columns per block
    const int64_t begin = min(width, rank * slice);
    op(RegisterRow<T, VEC, THREADS, MAX_VECS>(op.in + row * width, threadIdx.x, begin, min(width, begin + slice)), row,
       rank * THREADS + static_cast<int>(threadIdx.x), RowReduce<THREADS, false, CLUSTER>{});
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().sync();  // no block exits while another reads its slots
#endif
  } else if constexpr (HOLDER == Holder::block_registers_and_shared) {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    const int64_t row = blockIdx.x;
    op(SplitRow<T, VEC, THREADS, MAX_VECS>(op.in + row * width, threadIdx.x, width,
                                           reinterpret_cast<Vec<T, VEC>*>(dynamic_shared)),
       row, static_cast<int>(threadIdx.x), RowReduce<THREADS, false>{});
  } else if constexpr (HOLDER == Holder::memory) {
    const int64_t row = blockIdx.x;
    op(MemoryRow<T, VEC, THREADS>(op.in + row * width, threadIdx.x, width), row, static_cast<int>(threadIdx.x),
       RowReduce<THREADS, false>{});
  } else {
    const int64_t row = blockIdx.x;
    op(RegisterRow<T, VEC, THREADS, MAX_VECS>(op.in + row * width, threadIdx.x, 0, width), row,
       static_cast<int>(threadIdx.x), RowReduce<THREADS, false>{});
  }
}

/// Runs `op` over `rows` rows of `width` elements (a multiple of VEC, each row aligned to
/// a vector), holding each as the width and the device allow. `Op` has `using Element =
/// T`, a member `in` (the input), and `template <class Row, class Reduce> __device__ void
/// operator()(const Row& row, int64_t row_index, int thread, Reduce reduce) const`, where
/// `thread` is the thread's index among all the threads of the row (0 for exactly one).
template <int VEC, class Op>
int launch_rows(const Op& op, int64_t rows, int64_t width, cudaStream_t stream) {
  using T = typename Op::Element;
  if (rows == 0 || width == 0) return cudaSuccess;
  if (rows > 0x7fffffff / 8) return static_cast<int>(cudaErrorInvalidValue);
  const int64_t vectors = width / VEC;
  auto launch = [&](auto threads, auto holder, auto max_vecs, auto cluster, int64_t blocks) {
    constexpr int kThreads = decltype(threads)::value;
    constexpr int kCluster = decltype(cluster)::value;
    constexpr Holder kHolder = decltype(holder)::value;
    auto* kernel = &rows_kernel<Op, VEC, kThreads, kHolder, decltype(max_vecs)::value, kCluster>;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(kThreads);
    config.stream = stream;
    if constexpr (kHolder == Holder::block_registers_and_shared) {
      config.dynamicSmemBytes = SplitRow<T, VEC, kThreads, decltype(max_vecs)::value>::kSharedBytes;
      const cudaError_t error = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     static_cast<int>(config.dynamicSmemBytes));
      if (error != cudaSuccess) return static_cast<int>(error);
    }
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = kCluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = kCluster > 1 ? 1 : 0;
    return static_cast<int>(cudaLaunchKernelEx(&config, kernel, op, rows, width));
  };
  using Warp = std::integral_constant<Holder, Holder::warp_registers>;
  using Block = std::integral_constant<Holder, Holder::block_registers>;
  using Cluster = std::integral_constant<Holder, Holder::cluster_registers>;
  using Memory = std::integral_constant<Holder, Holder::memory>;
  using One = std::integral_constant<int, 1>;
  using Eight = std::integral_constant<int, 8>;
  using Threads64 = std::integral_constant<int, 64>;
  using Threads128 = std::integral_constant<int, 128>;
  using Threads256 = std::integral_constant<int, 256>;
  // A warp per row needs rows enough to fill the SMs; fewer rows get a block each.
  if (rows >= 1024 || vectors <= 32) {
    const int64_t four_rows = (rows + 3) / 4;  // 128-thread blocks, four rows each
    if (vectors <= 32) return launch(Threads128{}, Warp{}, One{}, One{}, four_rows);
    if (vectors <= 64) return launch(Threads128{}, Warp{}, std::integral_constant<int, 2>{}, One{}, four_rows);
    if (vectors <= 128) return launch(Threads128{}, Warp{}, std::integral_constant<int, 4>{}, One{}, four_rows);
    if (vectors <= 256) return launch(Threads128{}, Warp{}, Eight{}, One{}, four_rows);
  } else {
    if (vectors <= 64 * 2) return launch(Threads64{}, Block{}, Eight{}, One{}, rows);
    if (vectors <= 128 * 2) return launch(Threads128{}, Block{}, Eight{}, One{}, rows);
  }
  if (vectors <= 64 * 8) return launch(Threads64{}, Block{}, Eight{}, One{}, rows);
  if (vectors <= 128 * 8) return launch(Threads128{}, Block{}, Eight{}, One{}, rows);
  if (vectors <= 256 * 8) return launch(Threads256{}, Block{}, Eight{}, One{}, rows);
  // Measured on the H200 (bench/cuda_rows_variants.cu, native-ops bench; docs/BENCHMARKS.md):
  // up to 512 x 8 vectors, a row in one block's registers runs fastest (a cluster's syncs
  // cost more than the overlap it buys); up to 512 x 16, half in shared memory with two
  // blocks to an SM beats one 1024-thread block alone on it; wider rows run faster over a
  // cluster's registers than re-read.
  if (vectors <= 512 * 8) return launch(std::integral_constant<int, 512>{}, Block{}, Eight{}, One{}, rows);
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    return static_cast<int>(cudaGetLastError());
  }
  if constexpr (VEC * sizeof(T) == 16) {
    if (major >= 9 && vectors <= 512 * 16) {
      return launch(std::integral_constant<int, 512>{}, std::integral_constant<Holder, Holder::block_registers_and_shared>{},
                    Eight{}, One{}, rows);
    }
  }
  if (vectors <= 1024 * 8) return launch(std::integral_constant<int, 1024>{}, Block{}, Eight{}, One{}, rows);
  if (major >= 9 && vectors <= 8 * 256 * 8) return launch(Threads256{}, Cluster{}, Eight{}, Eight{}, rows * 8);
  return launch(std::integral_constant<int, 1024>{}, Memory{}, One{}, One{}, rows);
}

}  // namespace native_ops::cuda
