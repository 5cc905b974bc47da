#pragma once
// Row kernels on the GPU: an op that reduces each contiguous row of a [rows, width] tensor
// and then rewrites it (softmax, layer norm, RMS norm) is memory-bound, so the row is read
// from DRAM once and held on chip while it is reduced and rewritten. How it is held
// depends on its width:
//   - narrow rows: in the registers of one warp (four rows per 128-thread block);
//   - up to 8 vectors per thread of a block (up to 512 threads): in the block's registers;
//   - up to 8 times 256 x 8 vectors (sm_90): split over a cluster of 8 blocks, each holding
//     its slice in registers (and, for the widest 16-bit rows, partly in shared memory);
//     the blocks exchange their partial reductions by writing into each other's shared
//     memory (st.async, completing on an mbarrier), so that no cluster barrier waits on
//     their stores (before sm_90: up to 8 vectors per thread of 1024, in registers); a
//     block may hold the same slice of two rows, sharing one copy of the op's column
//     operands (RMS norm's weight) in its shared memory; or the clusters stay resident
//     (persistent: as many as fit at once), each block keeping its slice of the column
//     operands (layer norm's weight and bias) in shared memory for all of its rows, which
//     its row groups stream through staging buffers (TMA bulk copies) into registers;
//   - wider: not held; every pass reads the row again (the later ones mostly from L2).
// An op is a functor `op(row, row_index, thread, reduce)` that gets the row through the
// interface the holders share (below) and a reducer over the threads of the row; it reads
// its column operands, if any, through load_column().
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

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
    // One 128-bit store, spelled out: a plain 16-byte assignment came out of the compiler
    // as 2- and 4-byte stores in some kernels (the cluster kernels' vectors; later the
    // first vector of every row held in registers). Same bytes; softmax [1024,65536] bf16
    // on the H200: 82.0 -> 77.7 us
    uint4 raw;
    memcpy(&raw, &out, sizeof(raw));
    __stwb(reinterpret_cast<uint4*>(y + c), raw);
  } else {
    *reinterpret_cast<Vec<T, VEC>*>(y + c) = out;
  }
}

/// The 32-bit shared-memory address of p (a pointer into the block's shared memory), as
/// the asm below takes it.
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// The interface of a row holder, for a thread that holds elements of one row:
///   for_each(f)    calls f(x) for each element it holds, x as float;
///   store(y, g)    for each of its vectors at column c: vals[k] = float of the element,
///                  g(c, vals) rewrites vals, and the vector is written to y + c;
///   kOnChip        false when each pass re-reads the row from memory;
///   kMomentsAtOnce true when every thread holds the same count of the row's elements and
///                  the reduce takes float2 pairs, so that a norm may combine each thread's
///                  mean and variance in one reduction (MeanVariance) instead of two.
/// A RegisterRow holds the columns [begin, end) of a row (a cluster block's slice, or all
/// of it); its thread's i-th vector starts at column begin + (i * ROW_THREADS + t) * VEC.
/// FULL: the columns fill every vector of every thread, so no column needs its bounds check.
template <class T, int VEC, int ROW_THREADS, int MAX_VECS, bool FULL = false>
struct RegisterRow {
  static constexpr bool kOnChip = true;
  static constexpr bool kMomentsAtOnce = false;
  static constexpr bool kColumnsInShared = false;  // see load_column()
  Vec<T, VEC> v[MAX_VECS];
  int64_t first;  // column of the thread's first vector
  int64_t end;

  __device__ __forceinline__ RegisterRow(const T* x, int t, int64_t begin, int64_t row_end)
      : first(begin + int64_t{t} * VEC), end(row_end) {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {  // every load issued before the first use
      const int64_t c = column(i);
      if (FULL || c < end) v[i] = *reinterpret_cast<const Vec<T, VEC>*>(x + c);
    }
  }
  /// The same columns, read from `slice`: a copy of the columns [begin, row_end) (a staging
  /// buffer in shared memory).
  struct FromSlice {};
  __device__ __forceinline__ RegisterRow(FromSlice, const T* slice, int t, int64_t begin, int64_t row_end)
      : first(begin + int64_t{t} * VEC), end(row_end) {
    const auto* vectors = reinterpret_cast<const Vec<T, VEC>*>(slice);
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      if (FULL || column(i) < end) v[i] = vectors[i * ROW_THREADS + t];
    }
  }
  __device__ __forceinline__ int64_t column(int i) const { return first + int64_t{i} * ROW_THREADS * VEC; }

  template <class F>
  __device__ __forceinline__ void for_each(F f) const {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      if (!FULL && column(i) >= end) continue;
#pragma unroll
      for (int k = 0; k < VEC; ++k) f(to_float(v[i].v[k]));
    }
  }

  template <class G>
  __device__ __forceinline__ void store(T* y, G g) const {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      const int64_t c = column(i);
      if (!FULL && c >= end) continue;
      store_vector(y, c, v[i], g);
    }
  }
};

/// The columns [begin, end) of a row (a cluster block's slice): the thread's first NEAR
/// vectors in registers (a RegisterRow of the first ROW_THREADS * NEAR vectors), its next
/// FAR in the block's shared memory, copied there by cp.async without passing through
/// registers. Each thread reads back only the vectors it copied, so no barrier is needed.
/// FULL as for RegisterRow: the columns fill every vector (full slices skip the checks:
/// float32 [1024,65536] softmax on the H200, 143.7 -> 137.8 us).
template <class T, int VEC, int ROW_THREADS, int NEAR, int FAR, bool FULL = false>
struct SplitRow {
  static constexpr bool kOnChip = true;
  static constexpr bool kMomentsAtOnce = false;
  static constexpr bool kColumnsInShared = false;
  static constexpr size_t kSharedBytes = size_t{ROW_THREADS} * FAR * sizeof(Vec<T, VEC>);
  RegisterRow<T, VEC, ROW_THREADS, NEAR, FULL> near;
  const Vec<T, VEC>* far;  // the thread's first vector in shared memory; the next ROW_THREADS on
  int64_t far_first;        // its column
  int64_t end;

  __device__ __forceinline__ SplitRow(const T* x, int t, int64_t begin, int64_t row_end, Vec<T, VEC>* shared)
      : near(x, t, begin, min(row_end, begin + int64_t{ROW_THREADS} * NEAR * VEC)),
        far(shared + t),
        far_first(begin + int64_t{ROW_THREADS} * NEAR * VEC + int64_t{t} * VEC),
        end(row_end) {
    static_assert(FAR == 0 || sizeof(Vec<T, VEC>) == 16, "cp.async.cg copies 16 bytes");
#pragma unroll
    for (int i = 0; i < FAR; ++i) {
      const int64_t c = column(i);
      if (!FULL && c >= end) continue;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       shared_address(far + i * ROW_THREADS)),
                   "l"(x + c)
                   : "memory");
#else
      const_cast<Vec<T, VEC>*>(far)[i * ROW_THREADS] = *reinterpret_cast<const Vec<T, VEC>*>(x + c);
#endif
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (FAR > 0) asm volatile("cp.async.wait_all;" ::: "memory");
#endif
  }
  __device__ __forceinline__ int64_t column(int i) const { return far_first + int64_t{i} * ROW_THREADS * VEC; }

  template <class F>
  __device__ __forceinline__ void for_each(F f) const {
    near.for_each(f);
#pragma unroll
    for (int i = 0; i < FAR; ++i) {
      if (!FULL && column(i) >= end) continue;
      const Vec<T, VEC> v = far[i * ROW_THREADS];
#pragma unroll
      for (int k = 0; k < VEC; ++k) f(to_float(v.v[k]));
    }
  }

  template <class G>
  __device__ __forceinline__ void store(T* y, G g) const {
    near.store(y, g);
#pragma unroll
    for (int i = 0; i < FAR; ++i) {
      const int64_t c = column(i);
      if (!FULL && c >= end) continue;
      store_vector(y, c, far[i * ROW_THREADS], g);
    }
  }
};

/// The VEC elements of `values` (may be null: then `fallback`) at column c, as floats.
template <class T, int VEC>
__device__ __forceinline__ void load_floats(const T* values, int64_t c, float (&out)[VEC], float fallback) {
  if (values == nullptr) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) out[k] = fallback;
    return;
  }
  const Vec<T, VEC> v = *reinterpret_cast<const Vec<T, VEC>*>(values + c);
#pragma unroll
  for (int k = 0; k < VEC; ++k) out[k] = to_float(v.v[k]);
}

/// A block's copy of its slice of the op's column operands in shared memory, laid out as
/// its thread t's vectors: operand k's vector i of a thread is ROW_THREADS * (k * MAX_VECS +
/// i) + t (a contiguous copy of each operand's slice).
template <class T, int VEC, int ROW_THREADS, int MAX_VECS>
struct SharedColumns {
  const Vec<T, VEC>* columns;  // the thread's copy of operand 0's vector 0

  /// Operand k (`values` in memory, or null: `fallback`) at column c, the thread's vector
  /// that starts `first` columns in.
  __device__ __forceinline__ void load(int k, const T* values, int64_t c, int64_t first, float (&out)[VEC],
                                       float fallback) const {
    if (values == nullptr) {
      load_floats(values, c, out, fallback);
      return;
    }
    const auto i = static_cast<int>((c - first) / (ROW_THREADS * VEC));
    const Vec<T, VEC> v = columns[(k * MAX_VECS + i) * ROW_THREADS];
#pragma unroll
    for (int e = 0; e < VEC; ++e) out[e] = to_float(v.v[e]);
  }
};

/// Reads the VEC floats at column c of the op's column operand k (`values`: a vector of
/// `width` elements that every row reads whole in its writing pass, such as a norm's weight;
/// null: `fallback`) for a thread of `row`: from memory, except where the holder keeps a
/// copy in shared memory (kColumnsInShared: SharedColumnsRow and StagedRow, below).
template <class Row, class T, int VEC>
__device__ __forceinline__ void load_column(const Row& row, int k, const T* values, int64_t c, float (&out)[VEC],
                                            float fallback) {
  if constexpr (Row::kColumnsInShared) {
    row.shared_columns.load(k, values, c, row.first, out, fallback);
  } else {
    load_floats(values, c, out, fallback);
  }
}

/// A cluster block's slice of one of the ROWS rows it holds (ROWS groups of ROW_THREADS
/// threads, one row each, over the same columns), in registers as a RegisterRow, with the
/// slice of the op's OPERANDS column operands copied into the block's shared memory once
/// for all ROWS rows: group g copies every ROWS-th vector from the g-th, by cp.async. (Every
/// row reads the whole weight: at bf16 [1024,65536] as many bytes as the row itself.)
/// store() waits for the copies and is a block barrier: every thread calls it exactly once.
template <class T, int VEC, int ROW_THREADS, int MAX_VECS, int ROWS, int OPERANDS, bool FULL = false>
struct SharedColumnsRow : RegisterRow<T, VEC, ROW_THREADS, MAX_VECS, FULL> {
  using Held = RegisterRow<T, VEC, ROW_THREADS, MAX_VECS, FULL>;
  static constexpr bool kColumnsInShared = true;
  static constexpr size_t kSharedBytes = size_t{OPERANDS} * MAX_VECS * ROW_THREADS * sizeof(Vec<T, VEC>);
  SharedColumns<T, VEC, ROW_THREADS, MAX_VECS> shared_columns;

  template <class Op>
  __device__ __forceinline__ SharedColumnsRow(const T* x, int t, int group, int64_t begin, int64_t row_end,
                                              const Op& op, Vec<T, VEC>* shared)
      : Held(x, t, begin, row_end), shared_columns{shared + t} {
    static_assert(sizeof(Vec<T, VEC>) == 16, "cp.async.cg copies 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#pragma unroll
    for (int k = 0; k < OPERANDS; ++k) {
      const T* values = op.column_operand(k);
      if (values == nullptr) continue;
#pragma unroll
      for (int i = 0; i < MAX_VECS; ++i) {
        const int64_t c = this->column(i);
        if (i % ROWS != group || (!FULL && c >= row_end)) continue;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                         shared_address(shared + (k * MAX_VECS + i) * ROW_THREADS + t)),
                     "l"(values + c)
                     : "memory");
      }
    }
#endif
  }

  template <class G>
  __device__ __forceinline__ void store(T* y, G g) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
    __syncthreads();  // the other groups' copies too
    Held::store(y, g);
  }
};

/// A persistent cluster block's slice of a row, copied into registers from its staging
/// buffer, beside the block's copy of the slice of the op's column operands (which stays in
/// shared memory for all the block's rows). Every column of the slice is held, and its
/// exchange takes pairs: layer norm's one reduction a row (bf16 [1024,65536] on the H200,
/// prototype: 76.6-77.4 -> 74.6-76.5 us; the one-row-a-cluster kernels, under their 16-bit
/// register cap, spilled with it: 82.3 -> 130.7).
template <class T, int VEC, int ROW_THREADS, int MAX_VECS>
struct StagedRow : RegisterRow<T, VEC, ROW_THREADS, MAX_VECS, true> {
  using Held = RegisterRow<T, VEC, ROW_THREADS, MAX_VECS, true>;
  static constexpr bool kColumnsInShared = true;
  static constexpr bool kMomentsAtOnce = true;
  SharedColumns<T, VEC, ROW_THREADS, MAX_VECS> shared_columns;

  __device__ __forceinline__ StagedRow(const T* staged, int t, int64_t begin, const Vec<T, VEC>* columns)
      : Held(typename Held::FromSlice{}, staged, t, begin, begin + int64_t{ROW_THREADS} * MAX_VECS * VEC),
        shared_columns{columns + t} {}
};

/// A row left in device memory: every pass reads it again.
template <class T, int VEC, int ROW_THREADS>
struct MemoryRow {
  static constexpr bool kOnChip = false;
  static constexpr bool kMomentsAtOnce = false;
  static constexpr bool kColumnsInShared = false;
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

/// Sets up the mbarrier at shared address `barrier` for one arrival a phase.
__device__ __forceinline__ void init_mbarrier(uint32_t barrier) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier) : "memory");
#endif
}

/// The shared memory a ClusterReduce exchanges through: for each of a block's GROUPS rows
/// held at once, each of the RING rows that may be in flight in turn (persistent blocks
/// reuse their slots: a block can run at most one row ahead of another, since a row's
/// reduction waits for every block), and each of its reductions: one Slot (a float, or a
/// float2 for reductions of pairs) per warp of the row in the cluster and the mbarrier that
/// counts the bytes written into them.
template <int ROW_THREADS, int CLUSTER, int GROUPS = 1, int RING = 1, class Slot = float>
struct ClusterExchange {
  static constexpr int kMaxReductions = 2;  // softmax and layer norm reduce twice, RMS norm once
  static constexpr int kSlots = ROW_THREADS / 32 * CLUSTER;
  uint64_t done[GROUPS][RING][kMaxReductions];
  Slot slots[GROUPS][RING][kMaxReductions][kSlots];

  /// Before any block of the cluster writes here: thread 0 sets up the mbarriers, and every
  /// thread signals the cluster (a relaxed arrive, so it waits on nothing); `ready()` later
  /// waits for every block's signal, once the row's loads are in flight.
  __device__ __forceinline__ void init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
      for (uint64_t* barrier = &done[0][0][0]; barrier != &done[0][0][0] + GROUPS * RING * kMaxReductions; ++barrier) {
        init_mbarrier(shared_address(barrier));
      }
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
  }
  __device__ __forceinline__ void ready() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
  }
};

/// Waits until the phase of the given parity of the mbarrier at shared address `barrier`
/// completes (acquiring what the cluster wrote before it did).
__device__ __forceinline__ void wait_phase(uint32_t barrier, uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .pred full;\n WAIT_%=:\n"
      " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 full, [%0], %1;\n"
      " @!full bra WAIT_%=;\n}" ::"r"(barrier),
      "r"(parity)
      : "memory");
#endif
}

/// Arrives on the mbarrier at shared address `barrier`, whose phase then also waits for
/// `bytes` more to be written (by st.async or bulk copies).
__device__ __forceinline__ void expect_bytes(uint32_t barrier, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes) : "memory");
#endif
}

/// Writes `value` (a float, a float2 or an int64_t) into block `rank` of the cluster, at its
/// copy of the shared variable whose address in this block is `slot`, and counts the bytes
/// on that block's copy of the mbarrier at `barrier` (st.async: no fence, no wait).
template <class V>
__device__ __forceinline__ void store_to_block(uint32_t slot, uint32_t barrier, uint32_t rank, V value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t remote_slot, remote_barrier;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_slot) : "r"(slot), "r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote_barrier) : "r"(barrier), "r"(rank));
  if constexpr (std::is_same_v<V, float>) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];" ::"r"(remote_slot),
                 "f"(value), "r"(remote_barrier)
                 : "memory");
  } else if constexpr (std::is_same_v<V, float2>) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
                     remote_slot),
                 "f"(value.x), "f"(value.y), "r"(remote_barrier)
                 : "memory");
  } else {
    static_assert(std::is_same_v<V, int64_t>, "floats, float2 pairs or 64-bit integers");
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(remote_slot),
                 "l"(value), "r"(remote_barrier)
                 : "memory");
  }
#endif
}

/// RowReduce over the blocks of a cluster, through their ClusterExchanges: each warp reduces
/// its threads' values and writes the total into slot [warp][its block's rank] of every
/// block (lane j to block j, by st.async, which counts its bytes on that block's mbarrier);
/// each block waits for all of its slots, then combines those of its row in slot order, so
/// that every block gets the same bits. No cluster barrier: a block's stores need not drain
/// before another can go on, and a block may exit once its own slots are full (no more
/// writes come to it; its own writes are counted by their receivers). ROW_THREADS: a row's
/// threads in a block, which holds GROUPS rows at once (the `group`-th for this thread,
/// whose thread `t` is its first), the row in flight `ring` of RING, its mbarriers' phase
/// of that `parity`. Values are floats, or float2 pairs where Slot is float2.
template <int ROW_THREADS, int CLUSTER, int GROUPS = 1, int RING = 1, class Slot = float>
struct ClusterReduce {
  using Exchange = ClusterExchange<ROW_THREADS, CLUSTER, GROUPS, RING, Slot>;
  Exchange* exchange;
  uint32_t rank;
  int group;
  int t;  // the thread's index in its group
  int ring = 0;
  uint32_t parity = 0;
  mutable int reductions = 0;

  template <class V, class Op>
  __device__ __forceinline__ V operator()(V value, Op op) const {
    static_assert(std::is_same_v<V, Slot>, "the exchange holds the values reduced");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    value = warp_reduce<32>(value, op);
    const int k = reductions++;
    if (k >= Exchange::kMaxReductions) __trap();
    const int lane = threadIdx.x % 32;
    V* slots = exchange->slots[group][ring][k];
    const uint32_t done = shared_address(&exchange->done[group][ring][k]);
    // The phase completes when this arrival and all the bytes are in.
    if (t == 0) expect_bytes(done, static_cast<uint32_t>(sizeof(exchange->slots[group][ring][k])));
    if (lane < CLUSTER) {
      store_to_block(shared_address(&slots[static_cast<uint32_t>(t) / 32 * CLUSTER + rank]), done, lane, value);
    }
    wait_phase(done, parity);
    constexpr int kSlots = Exchange::kSlots;
    V total;
    if constexpr (kSlots <= 32) {
      total = warp_reduce<kSlots>(slots[lane % kSlots], op);
    } else {
      // Folded in sequence: fine for sums and maxima, not for MeanVariance's equal halves.
      static_assert(std::is_same_v<V, float>, "pairs reduce over at most 32 slots");
      total = slots[lane];
#pragma unroll
      for (int j = lane + 32; j < kSlots; j += 32) total = op(total, slots[j]);
      total = warp_reduce<32>(total, op);
    }
    return total;
#else
    __trap();  // launch_rows() never launches clusters before sm_90
    return value;
#endif
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

enum class Holder { warp_registers, block_registers, cluster, memory, streamed };

constexpr size_t round_up(size_t bytes, size_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

/// Bytes of a cluster block's dynamic shared memory before what follows its exchange (a
/// slice's FAR vectors, a persistent block's mbarriers).
template <int ROW_THREADS, int CLUSTER, int GROUPS, int RING = 1, class Slot = float>
constexpr size_t cluster_exchange_bytes() {
  return round_up(sizeof(ClusterExchange<ROW_THREADS, CLUSTER, GROUPS, RING, Slot>), 16);
}

/// How launch_rows holds a row: THREADS threads a row (or a warp, four rows a block of
/// THREADS), each with NEAR vectors in registers and FAR in shared memory, over CLUSTER
/// blocks, each block holding the same slice of ROWS rows at once (clusters; ROWS > 1
/// shares the op's column operands, FAR must be 0); at least MIN_BLOCKS blocks to an SM (a
/// register cap for the compiler; 0: none).
template <int THREADS, int NEAR, int FAR = 0, int CLUSTER = 1, int MIN_BLOCKS = 0, int ROWS = 1>
struct RowGeometry {
  static constexpr int threads = THREADS, near = NEAR, far = FAR, cluster = CLUSTER, min_blocks = MIN_BLOCKS;
  static constexpr int rows_per_block = ROWS;
  static constexpr int64_t slice_vectors = int64_t{THREADS} * (NEAR + FAR);  // a cluster block's, of a row
};

/// What a cluster block of Geometry holds of a row: its slice, in registers and shared
/// memory, or, for blocks of several rows, in registers beside the shared column operands.
template <class Op, int VEC, class Geometry, bool FULL>
using ClusterSlice = std::conditional_t<
    Geometry::rows_per_block == 1,
    SplitRow<typename Op::Element, VEC, Geometry::threads, Geometry::near, Geometry::far, FULL>,
    SharedColumnsRow<typename Op::Element, VEC, Geometry::threads, Geometry::near, Geometry::rows_per_block,
                     Op::kColumnOperands, FULL>>;

/// Where a persistent launch's row groups claim their rows after the first half (see
/// stream_rows): 16 bytes of device memory that the caller gives each launch (garbage is
/// fine). The launch's first block zeroes `next`, then publishes the launch's tag in
/// `launch`; a claimer waits for that tag before its first claim.
struct RowClaims {
  unsigned long long launch;
  unsigned long long next;  // claims so far
};

/// A launch's RowClaims and its tag (unique to the launch, and unlike what the memory held
/// before: see next_launch_tag()).
struct RowSchedule {
  RowClaims* claims;
  unsigned long long launch;
};

/// The rows claimed for a persistent block's groups, as the cluster's rank-0 block sends
/// them to every block of the cluster: for each group, a ring of kRing rows (claimed
/// rounds in order) with an mbarrier each that counts the 8 bytes of the row's index.
/// Claims run 2 rounds ahead, so 2 slots would do; 4 is the layout that was measured.
template <int GROUPS>
struct ClaimedRows {
  static constexpr int kRing = 4;
  uint64_t arrived[GROUPS][kRing];
  int64_t rows[GROUPS][kRing];
};

/// The dynamic shared memory of a persistent cluster block (Holder::streamed) of Geometry:
/// its exchange (pairs, two rows in flight a group), the mbarriers of its groups' staging
/// buffers and of its copy of the column operands, its claimed rows, that copy, and a
/// staging buffer a group. The bulk copies' destinations are 128-byte aligned: at 16 (all
/// they need) bf16 layer_norm [1024,65536] on the H200 ran 88.7 us against 77.0.
template <class Op, int VEC, class Geometry>
struct StreamedLayout {
  static constexpr int kGroups = Geometry::rows_per_block;
  using Exchange = ClusterExchange<Geometry::threads, Geometry::cluster, kGroups, 2, float2>;
  static constexpr size_t kSliceBytes = Geometry::slice_vectors * sizeof(Vec<typename Op::Element, VEC>);
  static constexpr size_t kBarriers =
      cluster_exchange_bytes<Geometry::threads, Geometry::cluster, kGroups, 2, float2>();
  static constexpr size_t kClaimed = kBarriers + sizeof(uint64_t) * (kGroups + 1);
  static constexpr size_t kColumns = round_up(kClaimed + sizeof(ClaimedRows<kGroups>), 128);
  static constexpr size_t kStages = kColumns + kSliceBytes * Op::kColumnOperands;
  static constexpr size_t kBytes = kStages + kSliceBytes * kGroups;
};

/// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global memory into
/// the block's shared memory by the TMA unit, counting them on the mbarrier at `barrier`.
__device__ __forceinline__ void bulk_copy(void* shared, const void* global, size_t bytes, uint32_t barrier) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   shared_address(shared)),
               "l"(global), "r"(static_cast<uint32_t>(bytes)), "r"(barrier)
               : "memory");
#endif
}

/// The rows of a persistent cluster (Holder::streamed): its block `rank` holds the columns
/// [rank * slice, (rank + 1) * slice) of every row it takes, and keeps that slice of the op's
/// column operands in shared memory for all of them. In the first half of the rounds, group
/// g of cluster c takes rows g * clusters + c, then every clusters * GROUPS on; after that
/// it claims its rows one at a time from `schedule`, since clusters sharing the chip go at
/// different rates (on the H200, with static rows to the end, clusters of bf16 layer_norm
/// [1024,65536] ended between 59.0 and 73.7 us; claiming the second half, 74.2 -> 73.9 us,
/// [4096,65536] 279.5 -> 267.4). The claimer is a thread of the second warp of the group in
/// the rank-0 block: it claims the group's row 2 rounds ahead and sends it once the current
/// row is done (the mbarrier arrivals of thread 0 have release semantics and would wait for
/// the atomic). Claimed 4 rounds ahead, the rows left each group up to 4 rounds queued when
/// the counter ran out: 73.8 -> 73.4 us. Each row's slice lands in the group's staging
/// buffer by a bulk copy (no registers, no L1 while in flight), moves to registers, and the
/// buffer takes the group's next row while this one is reduced and written. The grid is as
/// many clusters as the device holds at once, and every slice is full.
template <class Op, int VEC, class Geometry>
__device__ __forceinline__ void stream_rows(const Op& op, int64_t rows, int64_t width, RowSchedule schedule) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using T = typename Op::Element;
  using Layout = StreamedLayout<Op, VEC, Geometry>;
  constexpr int THREADS = Geometry::threads, GROUPS = Geometry::rows_per_block, CLUSTER = Geometry::cluster;
  extern __shared__ __align__(128) unsigned char streamed_shared[];
  auto* exchange = reinterpret_cast<typename Layout::Exchange*>(streamed_shared);
  auto* barriers = reinterpret_cast<uint64_t*>(streamed_shared + Layout::kBarriers);  // a group's buffer's, the columns'
  auto* claimed = reinterpret_cast<ClaimedRows<GROUPS>*>(streamed_shared + Layout::kClaimed);
  constexpr int kRing = ClaimedRows<GROUPS>::kRing;
  auto* columns = reinterpret_cast<Vec<T, VEC>*>(streamed_shared + Layout::kColumns);
  const int group = static_cast<int>(threadIdx.x) / THREADS, t = static_cast<int>(threadIdx.x) % THREADS;
  T* stage = reinterpret_cast<T*>(streamed_shared + Layout::kStages + Layout::kSliceBytes * group);
  const uint32_t staged = shared_address(barriers + group);
  const uint32_t columns_copied = shared_address(barriers + GROUPS);
  const auto rank = static_cast<uint32_t>(blockIdx.x % CLUSTER);
  const int64_t begin = rank * Geometry::slice_vectors * VEC;
  const int64_t clusters = gridDim.x / CLUSTER;
  const int64_t stride = clusters * GROUPS;  // rows the grid takes at once
  auto stage_row = [&](int64_t row) {
    expect_bytes(staged, Layout::kSliceBytes);
    bulk_copy(stage, op.in + row * width + begin, Layout::kSliceBytes, staged);
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i <= GROUPS; ++i) {
      init_mbarrier(shared_address(barriers + i));
    }
    for (int g = 0; g < GROUPS; ++g) {
      for (int i = 0; i < kRing; ++i) init_mbarrier(shared_address(&claimed->arrived[g][i]));
    }
    if (blockIdx.x == 0) {
      schedule.claims->next = 0;  // published by the release below
      asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(&schedule.claims->launch), "l"(schedule.launch)
                   : "memory");
    }
  }
  exchange->init();  // its fence also orders the mbarriers' initialisation above
  __syncthreads();  // the group leaders stage rows on these mbarriers
  // Rounds before `fixed` take rows by the static rule, later ones claimed rows, the first
  // of which lands in ring slot 0 (claimed at round fixed - 2; launch_rows leaves each
  // group at least 8 rows, so fixed >= 4).
  const int fixed = static_cast<int>(max(int64_t{2}, rows / stride / 2));
  if (t == 0) {
    for (int i = 0; i < kRing; ++i) expect_bytes(shared_address(&claimed->arrived[group][i]), sizeof(int64_t));
  }
  const int64_t first = group * clusters + blockIdx.x / CLUSTER;  // the group's row of round 0
  int64_t row = first;
  if constexpr (Op::kColumnOperands > 0) {
    if (threadIdx.x == 0) {
      uint32_t bytes = 0;
      for (int k = 0; k < Op::kColumnOperands; ++k) bytes += op.column_operand(k) != nullptr ? Layout::kSliceBytes : 0;
      expect_bytes(columns_copied, bytes);
      for (int k = 0; k < Op::kColumnOperands; ++k) {
        const T* values = op.column_operand(k);
        if (values != nullptr) bulk_copy(columns + k * Geometry::slice_vectors, values + begin, Layout::kSliceBytes, columns_copied);
      }
    }
  }
  // After the column operands, which every round waits for (their slices are the same in
  // every cluster, so mostly L2 hits): bf16 layer_norm [1024,65536] 73.5 -> 73.0 us.
  if (t == 0 && row < rows) stage_row(row);
  exchange->ready();  // every block's mbarriers are set up before the first exchange
  if constexpr (Op::kColumnOperands > 0) wait_phase(columns_copied, 0);
  const bool claimer = rank == 0 && t / 32 == 1;  // lane t - 32 sends to block t - 32
  unsigned long long claim = 0;
  bool claims_ready = false;
  for (int k = 0; row < rows; ++k) {
    wait_phase(staged, k & 1);
    const StagedRow<T, VEC, THREADS, Geometry::near> held(stage, t, begin, columns);
    // Every thread of the group has read its vectors before the buffer takes the next row.
    asm volatile("bar.sync %0, %1;" ::"r"(group + 1), "r"(THREADS) : "memory");
    int64_t next;
    if (k + 1 < fixed) {
      next = first + (k + 1) * stride;
    } else {  // claimed by the rank-0 block at round k - 1
      const int slot = (k + 1 - fixed) % kRing;
      const uint32_t arrived = shared_address(&claimed->arrived[group][slot]);
      wait_phase(arrived, static_cast<uint32_t>((k + 1 - fixed) / kRing) & 1);
      next = claimed->rows[group][slot];
      if (t == 0) expect_bytes(arrived, sizeof(int64_t));  // for round k + 1 + kRing
    }
    if (t == 0 && next < rows) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // those reads before the copy's writes
      stage_row(next);
    }
    // The row of round k + 2, claimed now and sent once this round's row is done (which
    // hides the atomic's latency).
    const bool sends_claim = claimer && k + 2 >= fixed && next < rows;
    if (sends_claim) {
      if (t == 32) {
        while (!claims_ready) {
          unsigned long long tag;
          asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(tag) : "l"(&schedule.claims->launch) : "memory");
          claims_ready = tag == schedule.launch;
        }
        claim = atomicAdd(&schedule.claims->next, 1ull);
      }
    }
    const ClusterReduce<THREADS, CLUSTER, GROUPS, 2, float2> reduce{exchange, rank, group, t, k & 1,
                                                                    static_cast<uint32_t>(k >> 1 & 1)};
    op(held, row, static_cast<int>(rank) * THREADS + t, reduce);
    if (sends_claim) {
      // Every block has read the row of round k + 2 - kRing from the slot this overwrites:
      // this block's reduction of round k waited for all of them, after they read it.
      const int64_t claimed_row = fixed * stride + static_cast<int64_t>(__shfl_sync(0xffffffff, claim, 0));
      const int lane = t - 32;
      if (lane < CLUSTER) {
        const int slot = (k + 2 - fixed) % kRing;
        store_to_block(shared_address(&claimed->rows[group][slot]), shared_address(&claimed->arrived[group][slot]),
                       static_cast<uint32_t>(lane), claimed_row);
      }
    }
    row = next;
  }
#endif
}

// One row per warp, block or cluster (of CLUSTER blocks, consecutive in x), or rows
// streamed through persistent clusters (which claim rows through `schedule`; the other
// holders ignore it), as HOLDER and Geometry say. A MIN_BLOCKS of 0 asks for no register
// cap: an explicit 1, though it caps nothing, changed nvcc's register allocation of other
// kernels (bf16 rms_norm [4096,32000] on the H200: 134 -> 161 us). FULL_SLICES (clusters):
// every block's slice fills its vectors, so no column is checked against the row's end.
template <class Op, int VEC, Holder HOLDER, class Geometry, bool FULL_SLICES = false>
__global__ void __launch_bounds__(Geometry::threads* Geometry::rows_per_block, Geometry::min_blocks)
    rows_kernel(Op op, int64_t rows, int64_t width, RowSchedule schedule) {
  using T = typename Op::Element;
  constexpr int THREADS = Geometry::threads, NEAR = Geometry::near, CLUSTER = Geometry::cluster;
  if constexpr (HOLDER == Holder::warp_registers) {
    const int64_t row = int64_t{blockIdx.x} * (THREADS / 32) + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only: no block-wide barrier follows
    const int t = threadIdx.x % 32;
    op(RegisterRow<T, VEC, 32, NEAR>(op.in + row * width, t, 0, width), row, t, RowReduce<THREADS, true>{});
  } else if constexpr (HOLDER == Holder::cluster) {
    constexpr int ROWS = Geometry::rows_per_block;
    static_assert(ROWS == 1 || Geometry::far == 0, "blocks of several rows hold them in registers");
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    auto* exchange = reinterpret_cast<ClusterExchange<THREADS, CLUSTER, ROWS>*>(dynamic_shared);
    exchange->init();
    const int group = ROWS == 1 ? 0 : static_cast<int>(threadIdx.x) / THREADS;  // 0 known to the compiler
    const int t = static_cast<int>(threadIdx.x) - group * THREADS;
    const int64_t row = blockIdx.x / CLUSTER * ROWS + group;
    const auto rank = static_cast<uint32_t>(blockIdx.x % CLUSTER);  // x-only clusters of consecutive blocks
    const int64_t slice = (width / VEC + CLUSTER - 1) / CLUSTER * VEC;  // columns per block
    const int64_t begin = min(width, rank * slice);
    const int64_t end = min(width, begin + slice);
    auto* shared = reinterpret_cast<Vec<T, VEC>*>(dynamic_shared + cluster_exchange_bytes<THREADS, CLUSTER, ROWS>());
    const ClusterReduce<THREADS, CLUSTER, ROWS> reduce{exchange, rank, group, t};
    const int thread = static_cast<int>(rank) * THREADS + t;
    auto run = [&](const ClusterSlice<Op, VEC, Geometry, FULL_SLICES>& held) {
      exchange->ready();  // every block's mbarriers are set up before the first exchange
      op(held, row, thread, reduce);
    };
    if constexpr (ROWS == 1) {
      run({op.in + row * width, t, begin, end, shared});
    } else {
      run({op.in + row * width, t, group, begin, end, op, shared});
    }
  } else if constexpr (HOLDER == Holder::streamed) {
    stream_rows<Op, VEC, Geometry>(op, rows, width, schedule);
  } else if constexpr (HOLDER == Holder::memory) {
    const int64_t row = blockIdx.x;
    op(MemoryRow<T, VEC, THREADS>(op.in + row * width, threadIdx.x, width), row, static_cast<int>(threadIdx.x),
       RowReduce<THREADS, false>{});
  } else {
    const int64_t row = blockIdx.x;
    op(RegisterRow<T, VEC, THREADS, NEAR>(op.in + row * width, threadIdx.x, 0, width), row,
       static_cast<int>(threadIdx.x), RowReduce<THREADS, false>{});
  }
}

/// How the rows of a row kernel may share their reads of the op's column operands (each
/// row reads them whole: at bf16 [1024,65536], as many bytes as the row).
enum class ColumnReuse {
  per_row,     // every row reads them from memory
  two_rows,    // a cluster block holds the same slice of two rows, one copy of the operands
  persistent,  // persistent cluster blocks keep their slice of the operands for all their rows
};

/// The devices whose occupancy launch_rows() remembers (others ask at every launch).
constexpr int kMaxDevices = 64;

/// A tag for a launch's RowClaims: the process's launch count through splitmix64's
/// finalizer, a bijection, so no two launches share a tag, and tags look random: the
/// memory under a RowClaims may hold anything before (small integers of an index tensor
/// would match a plain count).
inline unsigned long long next_launch_tag() {
  static std::atomic<unsigned long long> launches{0};
  unsigned long long z = launches.fetch_add(1, std::memory_order_relaxed) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Runs `op` over `rows` rows of `width` elements (a multiple of VEC, each row aligned to
/// a vector), holding each as the width and the device allow. `Op` has `using Element =
/// T`, a member `in` (the input), `static constexpr int kColumnOperands` (how many
/// per-column operands it reads through load_column(), such as a norm's weight and bias)
/// with `__device__ const T* column_operand(int k) const` when there are any, and `template
/// <class Row, class Reduce> __device__ void operator()(const Row& row, int64_t row_index,
/// int thread, Reduce reduce) const`, where `thread` is the thread's index among all the
/// threads of the row (0 for exactly one). `reuse`: how the rows may share the reads of the
/// column operands, where that pays (the caller's choice, from measurements). `claims`:
/// device memory on the current device for this launch alone (not shared with a launch
/// that may run at the same time), which persistent clusters need; without it they are
/// not used.
template <int VEC, class Op>
int launch_rows(const Op& op, int64_t rows, int64_t width, cudaStream_t stream,
                ColumnReuse reuse = ColumnReuse::per_row, RowClaims* claims = nullptr) {
  using T = typename Op::Element;
  if (rows == 0 || width == 0) return cudaSuccess;
  if (rows > 0x7fffffff / 8) return static_cast<int>(cudaErrorInvalidValue);
  const int64_t vectors = width / VEC;
  constexpr int kDeclined = -1;  // a persistent grid would leave its groups too few rows
  int device = 0, major = 0;
  auto launch = [&](auto holder, auto geometry, int64_t blocks) {
    using Geometry = decltype(geometry);
    constexpr Holder kHolder = decltype(holder)::value;
    constexpr int kThreads = Geometry::threads * Geometry::rows_per_block, kCluster = Geometry::cluster;
    // Rows that fill every slice get a kernel without bounds checks, the others one that
    // checks every column: a single kernel holding both paths (chosen per block) spilled
    // under the 16-bit register cap. On the H200, bf16 rms_norm / layer_norm [1024,65536]
    // 78.7 / 84.1 -> 77.1 / 82.3 us, float32 softmax [1024,40000] 110.8 -> 96.2; two got
    // slower: bf16 softmax [512,131072] 74.8 -> 76.3, float32 layer_norm [1024,40000]
    // 108.6 -> 111.1.
    auto* kernel = &rows_kernel<Op, VEC, kHolder, Geometry, false>;
    if constexpr (kHolder == Holder::cluster) {
      if (width == kCluster * Geometry::slice_vectors * VEC) {
        kernel = &rows_kernel<Op, VEC, kHolder, Geometry, true>;
      }
    }
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(kThreads);
    config.stream = stream;
    if constexpr (kHolder == Holder::cluster || kHolder == Holder::streamed) {
      if constexpr (kHolder == Holder::cluster) {
        config.dynamicSmemBytes = ClusterSlice<Op, VEC, Geometry, false>::kSharedBytes +
                                  cluster_exchange_bytes<Geometry::threads, kCluster, Geometry::rows_per_block>();
      } else {
        config.dynamicSmemBytes = StreamedLayout<Op, VEC, Geometry>::kBytes;
      }
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
    if constexpr (kHolder == Holder::streamed) {
      // As many clusters as fit at once (asked once a device: the query costs more than a
      // launch; one more cluster than fit ran 1.5x as long), each group left at least 8 rows:
      // on the H200 (prototype), bf16 layer_norm of 120 rows (two a group) ran 16.1 us
      // against 15.0 for a cluster a row, 480 rows 40.8 against 43.4.
      static std::atomic<int> resident_clusters[kMaxDevices];  // 0: not asked yet
      const bool cached = device < kMaxDevices;
      int clusters = cached ? resident_clusters[device].load(std::memory_order_relaxed) : 0;
      if (clusters == 0) {
        config.gridDim = dim3(kCluster);
        if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
          cudaGetLastError();  // not sticky: the other holders run instead
          return kDeclined;
        }
        if (cached) resident_clusters[device].store(clusters, std::memory_order_relaxed);
      }
      if (clusters == 0 || rows < int64_t{8} * clusters * Geometry::rows_per_block) return kDeclined;
      config.gridDim = dim3(static_cast<unsigned>(clusters * kCluster));
    }
    RowSchedule schedule{};
    if constexpr (kHolder == Holder::streamed) schedule = {claims, next_launch_tag()};
    return static_cast<int>(cudaLaunchKernelEx(&config, kernel, op, rows, width, schedule));
  };
  using Warp = std::integral_constant<Holder, Holder::warp_registers>;
  using Block = std::integral_constant<Holder, Holder::block_registers>;
  using Cluster = std::integral_constant<Holder, Holder::cluster>;
  using Streamed = std::integral_constant<Holder, Holder::streamed>;
  using Memory = std::integral_constant<Holder, Holder::memory>;
  // A warp per row needs rows enough to fill the SMs; fewer rows get a block each.
  if (rows >= 1024 || vectors <= 32) {
    const int64_t four_rows = (rows + 3) / 4;  // 128-thread blocks, four rows each
    if (vectors <= 32) return launch(Warp{}, RowGeometry<128, 1>{}, four_rows);
    if (vectors <= 64) return launch(Warp{}, RowGeometry<128, 2>{}, four_rows);
    if (vectors <= 128) return launch(Warp{}, RowGeometry<128, 4>{}, four_rows);
    if (vectors <= 256) return launch(Warp{}, RowGeometry<128, 8>{}, four_rows);
  } else {
    if (vectors <= 64 * 2) return launch(Block{}, RowGeometry<64, 8>{}, rows);
    if (vectors <= 128 * 2) return launch(Block{}, RowGeometry<128, 8>{}, rows);
  }
  if (vectors <= 64 * 8) return launch(Block{}, RowGeometry<64, 8>{}, rows);
  if (vectors <= 128 * 8) return launch(Block{}, RowGeometry<128, 8>{}, rows);
  if (vectors <= 256 * 8) return launch(Block{}, RowGeometry<256, 8>{}, rows);
  // Measured on the H200 (bench/cuda_rows_variants.cu, native-ops bench; docs/BENCHMARKS.md):
  // up to 512 x 8 vectors, a row in one block's registers runs fastest (a cluster's
  // exchanges cost more than the overlap it buys); wider rows over a cluster of 8 small
  // blocks, each holding its slice in registers: up to 8 x 128 x 8 vectors, 128-thread
  // blocks (ahead of a 512-thread block holding half of a row in shared memory by 2-13%,
  // and 19% for float32 layer norm), 16-bit ones capped at 64 registers for eight blocks
  // an SM (the norms took 72-80 registers, six blocks, and ran 3-6% slower); wider,
  // 256-thread blocks, whose 16-bit rows keep 6 of their 8 vectors in shared memory (2-4%
  // ahead of all in registers for the norms, 3% behind for softmax), and whose float32
  // rows are capped for three blocks an SM (float32 softmax took 80 or 96 registers
  // depending on unrelated code, and ran 136 or 161 us).
  if (vectors <= 512 * 8) return launch(Block{}, RowGeometry<512, 8>{}, rows);
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    return static_cast<int>(cudaGetLastError());
  }
  if constexpr (VEC * sizeof(T) == 16 && Op::kColumnOperands > 0) {
    // Persistent clusters of 256-thread blocks, two row groups each, 64 elements a thread
    // (8192-column slices), where the rows fill them: on the H200, bf16 layer_norm
    // [1024,65536] 82.6 -> 71.6 us, [4096,65536] 301.2 -> 266.0, float32 [1024,65536] 149.8
    // -> 135.0 (one reduction a row, rows claimed after the first half). Two 16-bit blocks
    // share an SM (128 registers a thread), as many groups as one block of four held, which
    // ran 73.0 us (float32: one block an SM, 136.5); one group a block, four an SM, 72.6;
    // three or five groups a block, one an SM, 76.4 / 77.1. (Prototypes, on the same
    // machine: RMS norm with two rows a block stays ahead, 72.0 us against 74.2; softmax
    // lost, 70.6 -> 78.4; two staging buffers a group, or eight groups a block, lost 1-3 us;
    // clusters of 2, 4 or 16 lost 2-46%; an L2 evict-first hint on the staged rows, 73.0 ->
    // 75.4, streaming stores 73.1.)
    using Persistent = RowGeometry<128, 64 / VEC, 0, 8, 0, 2>;
    if (major >= 9 && reuse == ColumnReuse::persistent && claims != nullptr &&
        vectors == 8 * Persistent::slice_vectors) {
      const int status = launch(Streamed{}, Persistent{}, 0);
      if (status != kDeclined) return status;
    }
  }
  if constexpr (VEC * sizeof(T) == 16) {
    if (major >= 9) {
      if constexpr (sizeof(T) == 4) {
        if (vectors <= 8 * 128 * 8) return launch(Cluster{}, RowGeometry<128, 8, 0, 8>{}, rows * 8);
        if (vectors <= 8 * 256 * 8) return launch(Cluster{}, RowGeometry<256, 8, 0, 8, 3>{}, rows * 8);
      } else {
        if (vectors <= 8 * 128 * 8) {
          if constexpr (Op::kColumnOperands > 0) {
            // Two rows a block of 256 threads, capped for four blocks an SM (64 registers):
            // bf16 rms_norm [1024,65536] on the H200 77.1 -> 72.2 us, [4096,65536] 280.2 ->
            // 268.4; layer_norm 82.3 -> 84.9 (it lost 2 us to the second row before sharing
            // anything). Four rows a block: 73.1 us.
            if (reuse == ColumnReuse::two_rows && rows % 2 == 0) {
              return launch(Cluster{}, RowGeometry<128, 8, 0, 8, 4, 2>{}, rows / 2 * 8);
            }
          }
          return launch(Cluster{}, RowGeometry<128, 8, 0, 8, 8>{}, rows * 8);
        }
        if (vectors <= 8 * 256 * 8) return launch(Cluster{}, RowGeometry<256, 2, 6, 8>{}, rows * 8);
      }
    }
  }
  if (vectors <= 1024 * 8) return launch(Block{}, RowGeometry<1024, 8>{}, rows);
  if (major >= 9 && vectors <= 8 * 256 * 8) return launch(Cluster{}, RowGeometry<256, 8, 0, 8>{}, rows * 8);
  return launch(Memory{}, RowGeometry<1024, 1>{}, rows);
}

}  // namespace native_ops::cuda
