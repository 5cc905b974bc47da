#pragma once
// Persistent clusters (sm_90) that stream their rows through staging buffers by bulk
// copies (TMA), keeping their slice of the op's column operands in shared memory for every
// row, and claim the rows of the launch's second half at run time.
#include <cstdint>
#include "dsls/cuda/rows/cluster.cuh"
#include "dsls/cuda/rows/holders.cuh"
#include "dsls/cuda/rows/reduce.cuh"

namespace native_ops::cuda {

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
/// staging buffer a group. The bulk copies' destinations are 128-byte aligned, which ran
/// faster than the 16 they need (docs/design/cuda-rows.md).
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
/// different rates (docs/design/cuda-rows.md). The claimer is a thread of the second warp of
/// the group in the rank-0 block: it claims the group's row 2 rounds ahead and sends it once
/// the current row is done (the mbarrier arrivals of thread 0 have release semantics and
/// would wait for the atomic). Each row's slice lands in the group's staging
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
  auto* barriers =
      reinterpret_cast<uint64_t*>(streamed_shared + Layout::kBarriers);  // a group's buffer's, the columns'
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
  __syncthreads();   // the group leaders stage rows on these mbarriers
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
        if (values != nullptr)
          bulk_copy(columns + k * Geometry::slice_vectors, values + begin, Layout::kSliceBytes, columns_copied);
      }
    }
  }
  // After the column operands, which every round waits for (their slices are the same in
  // every cluster, so mostly L2 hits).
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
    const ClusterReduce<THREADS, CLUSTER, GROUPS, 2, float2> reduce{exchange, rank,  group,
                                                                    t,        k & 1, static_cast<uint32_t>(k >> 1 & 1)};
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

}  // namespace native_ops::cuda
