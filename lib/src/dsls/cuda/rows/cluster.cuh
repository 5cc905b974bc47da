#pragma once
// Reductions over a row split across a cluster of blocks (sm_90): the blocks write their
// partial results into each other's shared memory (st.async onto an mbarrier), so that no
// cluster barrier waits on their stores.
#include <cstdint>
#include "dsls/cuda/rows/holders.cuh"
#include "dsls/cuda/rows/reduce.cuh"

namespace native_ops::cuda {

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
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(remote_slot),
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

constexpr size_t round_up(size_t bytes, size_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

/// Bytes of a cluster block's dynamic shared memory before what follows its exchange (a
/// slice's FAR vectors, a persistent block's mbarriers).
template <int ROW_THREADS, int CLUSTER, int GROUPS, int RING = 1, class Slot = float>
constexpr size_t cluster_exchange_bytes() {
  return round_up(sizeof(ClusterExchange<ROW_THREADS, CLUSTER, GROUPS, RING, Slot>), 16);
}

}  // namespace native_ops::cuda
