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
//
// The parts: rows/holders.cuh (how a row is held), rows/reduce.cuh (reductions over a warp
// or block), rows/cluster.cuh (over a cluster), rows/streamed.cuh (persistent clusters);
// this file holds the kernel and launch_rows(), which chooses among them.
#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "dsls/cuda/odd_rows.h"
#include "dsls/cuda/rows/cluster.cuh"
#include "dsls/cuda/rows/holders.cuh"
#include "dsls/cuda/rows/reduce.cuh"
#include "dsls/cuda/rows/streamed.cuh"

namespace native_ops::cuda {

/// Where a row kernel holds its rows (the list at the top of this file).
enum class Holder { warp_registers, block_registers, cluster, memory, streamed };

/// How launch_rows holds a row: THREADS threads a row (or a warp, four rows a block of
/// THREADS), each with NEAR vectors in registers (rows left in memory: loaded at a time)
/// and FAR in shared memory, over CLUSTER blocks, each block holding the same slice of
/// ROWS rows at once (clusters; ROWS > 1 shares the op's column operands, FAR must be 0);
/// at least MIN_BLOCKS blocks to an SM (a register cap for the compiler; 0: none).
template <int THREADS, int NEAR, int FAR = 0, int CLUSTER = 1, int MIN_BLOCKS = 0, int ROWS = 1>
struct RowGeometry {
  static constexpr int threads = THREADS, near = NEAR, far = FAR, cluster = CLUSTER, min_blocks = MIN_BLOCKS;
  static constexpr int rows_per_block = ROWS;
  static constexpr int64_t slice_vectors = int64_t{THREADS} * (NEAR + FAR);  // a cluster block's, of a row
  /// The same registers and shared memory shared by OPERANDS rows of the same columns
  /// (RowPair): NEAR and FAR divided among them (at least one vector in registers).
  template <int OPERANDS>
  using for_operands =
      RowGeometry<THREADS, (NEAR / OPERANDS > 0 ? NEAR / OPERANDS : 1), FAR / OPERANDS, CLUSTER, MIN_BLOCKS, ROWS>;
};

/// How many rows of the same columns an op reads and holds together: its
/// `kRowOperands` (2: `in` and `paired`, held as a RowPair), or 1.
template <class Op, class = void>
struct row_operands : std::integral_constant<int, 1> {};
template <class Op>
struct row_operands<Op, std::void_t<decltype(Op::kRowOperands)>> : std::integral_constant<int, Op::kRowOperands> {};

/// Whether an op's rows held shifted take their partial vectors' columns one to a thread
/// (RegisterRow's SCALAR_EDGES): its `kScalarEdges`, or false.
template <class Op, class = void>
struct scalar_edges : std::false_type {};
template <class Op>
struct scalar_edges<Op, std::void_t<decltype(Op::kScalarEdges)>> : std::bool_constant<Op::kScalarEdges> {};

/// What a cluster block of Geometry holds of a row: its slice, in registers and shared
/// memory, or, for blocks of several rows, in registers beside the shared column operands.
template <class Op, int VEC, class Geometry, bool FULL, bool SHIFTED = false>
using ClusterSlice = std::conditional_t<Geometry::rows_per_block == 1,
                                        SplitRow<typename Op::Element, VEC, Geometry::threads, Geometry::near,
                                                 Geometry::far, FULL, SHIFTED, scalar_edges<Op>::value>,
                                        SharedColumnsRow<typename Op::Element, VEC, Geometry::threads, Geometry::near,
                                                         Geometry::rows_per_block, Op::kColumnOperands, FULL>>;

/// The most vectors a row of `width` elements spans: SHIFTED, it may start VEC - 1
/// elements past a vector boundary.
template <int VEC, bool SHIFTED>
__host__ __device__ constexpr int64_t row_span_vectors(int64_t width) {
  return SHIFTED ? (width + 2 * VEC - 2) / VEC : width / VEC;
}

// One row per warp, block or cluster (of CLUSTER blocks, consecutive in x), or rows
// streamed through persistent clusters (which claim rows through `schedule`; the other
// holders ignore it), as HOLDER and Geometry say. A MIN_BLOCKS of 0 asks for no register
// cap: an explicit 1, though it caps nothing, changed nvcc's register allocation of other
// kernels (docs/design/cuda-rows.md). FULL_SLICES (clusters):
// every block's slice fills its vectors, so no column is checked against the row's end.
// SHIFTED: rows that start off a vector boundary are held shifted (holders.cuh,
// for_each_element).
template <class Op, int VEC, Holder HOLDER, class Geometry, bool FULL_SLICES = false, bool SHIFTED = false>
__global__ void __launch_bounds__(Geometry::threads* Geometry::rows_per_block, Geometry::min_blocks)
    rows_kernel(Op op, int64_t rows, int64_t width, RowSchedule schedule) {
  using T = typename Op::Element;
  constexpr int THREADS = Geometry::threads, NEAR = Geometry::near, CLUSTER = Geometry::cluster;
  constexpr int OPERANDS = row_operands<Op>::value;
  constexpr bool kScalarEdges = scalar_edges<Op>::value;
  static_assert(OPERANDS == 1 || OPERANDS == 2, "a row, or a row and its paired row");
  // Where a row's columns are: from its first element [0, width), or, SHIFTED, from the
  // vector boundary before it [lo, lo + width); `paired`: the same columns of op.paired
  // (SHIFTED: as far from a vector boundary as op.in's).
  struct Start {
    const T* x;
    const T* paired;
    int lo;
    int64_t end;
  };
  auto start = [&](int64_t row) {
    const T* first = op.in + row * width;
    int lo = 0;
    if constexpr (SHIFTED) lo = static_cast<int>(reinterpret_cast<uintptr_t>(first) % sizeof(Vec<T, VEC>) / sizeof(T));
    const T* paired = nullptr;
    if constexpr (OPERANDS == 2) paired = op.paired + row * width - lo;
    return Start{first - lo, paired, lo, lo + width};
  };
  // The holder of a row: make(x, operand) holds the columns that start at x, of operand 0
  // (op.in) or 1 (op.paired); an op of two row operands gets both as a RowPair.
  auto hold = [&](const Start& s, auto make) {
    if constexpr (OPERANDS == 1) {
      return make(s.x, 0);
    } else {
      return RowPair<decltype(make(s.x, 0))>{make(s.x, 0), make(s.paired, 1)};
    }
  };
  if constexpr (HOLDER == Holder::warp_registers) {
    const int64_t row = int64_t{blockIdx.x} * (THREADS / 32) + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only: no block-wide barrier follows
    const int t = threadIdx.x % 32;
    const Start s = start(row);
    op(hold(s, [&](const T* x,
                   int) { return RegisterRow<T, VEC, 32, NEAR, false, SHIFTED, kScalarEdges>(x, t, 0, s.end, s.lo); }),
       row, t, RowReduce<THREADS, true>{});
  } else if constexpr (HOLDER == Holder::cluster) {
    constexpr int ROWS = Geometry::rows_per_block;
    static_assert(ROWS == 1 || Geometry::far == 0, "blocks of several rows hold them in registers");
    static_assert(ROWS == 1 || !SHIFTED, "blocks of several rows share aligned column operands");
    static_assert(ROWS == 1 || OPERANDS == 1, "blocks of several rows hold one operand's");
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    auto* exchange = reinterpret_cast<ClusterExchange<THREADS, CLUSTER, ROWS>*>(dynamic_shared);
    exchange->init();
    const int group = ROWS == 1 ? 0 : static_cast<int>(threadIdx.x) / THREADS;  // 0 known to the compiler
    const int t = static_cast<int>(threadIdx.x) - group * THREADS;
    const int64_t row = blockIdx.x / CLUSTER * ROWS + group;
    const auto rank = static_cast<uint32_t>(blockIdx.x % CLUSTER);  // x-only clusters of consecutive blocks
    const Start s = start(row);
    // Columns per block, the same for every row.
    const int64_t slice = (row_span_vectors<VEC, SHIFTED>(width) + CLUSTER - 1) / CLUSTER * VEC;
    const int64_t begin = min(s.end, rank * slice);
    const int64_t end = min(s.end, begin + slice);
    auto* shared = reinterpret_cast<Vec<T, VEC>*>(dynamic_shared + cluster_exchange_bytes<THREADS, CLUSTER, ROWS>());
    const ClusterReduce<THREADS, CLUSTER, ROWS> reduce{exchange, rank, group, t};
    const int thread = static_cast<int>(rank) * THREADS + t;
    auto run = [&](const auto& held) {
      exchange->ready();  // every block's mbarriers are set up before the first exchange
      op(held, row, thread, reduce);
    };
    if constexpr (ROWS == 1) {
      // Each operand's far vectors in their own part of the shared memory.
      run(hold(s, [&](const T* x, int operand) {
        return ClusterSlice<Op, VEC, Geometry, FULL_SLICES, SHIFTED>(x, t, begin, end,
                                                                     shared + operand * THREADS * Geometry::far, s.lo);
      }));
    } else {
      run(ClusterSlice<Op, VEC, Geometry, FULL_SLICES>{s.x, t, group, begin, end, op, shared});
    }
  } else if constexpr (HOLDER == Holder::streamed) {
    static_assert(!SHIFTED, "streamed rows are aligned");
    stream_rows<Op, VEC, Geometry>(op, rows, width, schedule);
  } else if constexpr (HOLDER == Holder::memory) {
    const int64_t row = blockIdx.x;
    const Start s = start(row);
    op(hold(s, [&](const T* x, int) { return MemoryRow<T, VEC, THREADS, NEAR, SHIFTED>(x, threadIdx.x, s.end, s.lo); }),
       row, static_cast<int>(threadIdx.x), RowReduce<THREADS, false>{});
  } else {
    const int64_t row = blockIdx.x;
    const Start s = start(row);
    op(hold(s,
            [&](const T* x, int) {
              return RegisterRow<T, VEC, THREADS, NEAR, false, SHIFTED, kScalarEdges>(x, threadIdx.x, 0, s.end, s.lo);
            }),
       row, static_cast<int>(threadIdx.x), RowReduce<THREADS, false>{});
  }
}

/// How the rows of a row kernel may share their reads of the op's column operands (each
/// row reads them whole: at bf16 [1024,65536], as many bytes as the row).
enum class ColumnReuse {
  per_row,     // every row reads them from memory
  two_rows,    // a cluster block holds the same slice of two rows, one copy of the operands
  persistent,  // persistent cluster blocks keep their slice of the operands for all their rows
};

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

/// Runs `op` over `rows` rows of `width` elements (a multiple of VEC, each row and column
/// operand aligned to a vector; or, SHIFTED, any width, the input and the output equally
/// far past a vector boundary: see for_each_element()), holding each as
/// the width and the device allow. `Op` has `using Element =
/// T`, a member `in` (the input), optionally `static constexpr int kRowOperands = 2` and a
/// member `paired` (a second input of the same rows, laid out as `in`; the op then gets
/// both as a RowPair, each held in half the vectors a thread), `static constexpr int kColumnOperands` (how many
/// per-column operands it reads through load_column(), such as a norm's weight and bias)
/// with `__device__ const T* column_operand(int k) const` when there are any, and `template
/// <class Row, class Reduce> __device__ void operator()(const Row& row, int64_t row_index,
/// int thread, Reduce reduce) const`, where `thread` is the thread's index among all the
/// threads of the row (0 for exactly one). `reuse`: how the rows may share the reads of the
/// column operands, where that pays (the caller's choice, from measurements). `claims`:
/// device memory on the current device for this launch alone (not shared with a launch
/// that may run at the same time), which persistent clusters need; without it they are
/// not used.
template <int VEC, bool SHIFTED = false, class Op>
int launch_rows(const Op& op, int64_t rows, int64_t width, cudaStream_t stream,
                ColumnReuse reuse = ColumnReuse::per_row, RowClaims* claims = nullptr) {
  using T = typename Op::Element;
  constexpr int kOperands = row_operands<Op>::value;
  static_assert(kOperands == 1 || Op::kColumnOperands == 0, "paired rows read no column operands");
  if (rows == 0 || width == 0) return cudaSuccess;
  if (rows > 0x7fffffff / 8) return static_cast<int>(cudaErrorInvalidValue);
  // What a thread holds of all the row operands together: the ladder below is in these
  // vectors, each rung's geometry divided among the operands (RowGeometry::for_operands).
  const int64_t vectors = row_span_vectors<VEC, SHIFTED>(width) * kOperands;
  constexpr int kDeclined = -1;  // a persistent grid would leave its groups too few rows
  auto launch = [&](auto holder, auto geometry, int64_t blocks) {
    using Geometry = typename decltype(geometry)::template for_operands<kOperands>;
    constexpr Holder kHolder = decltype(holder)::value;
    constexpr int kThreads = Geometry::threads * Geometry::rows_per_block, kCluster = Geometry::cluster;
    // Full slices skip the bounds checks: one kernel with both paths spilled (docs/design/cuda-rows.md).
    auto* kernel = &rows_kernel<Op, VEC, kHolder, Geometry, false, SHIFTED>;
    if constexpr (kHolder == Holder::cluster && !SHIFTED) {
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
        config.dynamicSmemBytes = ClusterSlice<Op, VEC, Geometry, false, SHIFTED>::kSharedBytes * kOperands +
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
      // As many clusters as fit at once, asked once a device; declined below 8 rows a group.
      static DeviceAnswers<> resident;
      int clusters = 0;
      const int error = resident.get(0, &clusters, [&](int, int* count) {
        config.gridDim = dim3(kCluster);
        return static_cast<int>(cudaOccupancyMaxActiveClusters(count, kernel, &config));
      });
      if (error != cudaSuccess) {
        cudaGetLastError();  // not sticky: the other holders run instead
        return kDeclined;
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
  // The ladder, narrowest rows first; each branch says in one line why it exists, and
  // docs/design/cuda-rows.md has the measurements.
  // A warp per row needs rows enough to fill the SMs; fewer rows get a block each.
  if (rows >= 1024 || vectors <= 32) {
    const int64_t four_rows = (rows + 3) / 4;  // 128-thread blocks, four rows each
    if (vectors <= 32) return launch(Warp{}, RowGeometry<128, 1>{}, four_rows);
    if (vectors <= 64) return launch(Warp{}, RowGeometry<128, 2>{}, four_rows);
    if (vectors <= 128) return launch(Warp{}, RowGeometry<128, 4>{}, four_rows);
    if (vectors <= 256) return launch(Warp{}, RowGeometry<128, 8>{}, four_rows);
  } else {
    // A thread holds at most two vectors: a decode row waits on each thread's serial work
    // (its reductions' dependency chains), which eight vectors a thread made 1.3 us longer.
    // Not 1024 threads: capped at 64 registers, those blocks ran slower.
    if (vectors <= 64 * 2) return launch(Block{}, RowGeometry<64, 8>{}, rows);
    if (vectors <= 128 * 2) return launch(Block{}, RowGeometry<128, 8>{}, rows);
    if (vectors <= 256 * 2) return launch(Block{}, RowGeometry<256, 8>{}, rows);
    if (vectors <= 512 * 2) return launch(Block{}, RowGeometry<512, 8>{}, rows);
  }
  // Up to 512 x 8 vectors, a row in one block's registers is fastest: exchanges cost more.
  if (vectors <= 64 * 8) return launch(Block{}, RowGeometry<64, 8>{}, rows);
  if (vectors <= 128 * 8) return launch(Block{}, RowGeometry<128, 8>{}, rows);
  if (vectors <= 256 * 8) return launch(Block{}, RowGeometry<256, 8>{}, rows);
  if (vectors <= 512 * 8) return launch(Block{}, RowGeometry<512, 8>{}, rows);
  const bool sm90 = runs_sm90_code();
  if constexpr (VEC * sizeof(T) == 16 && Op::kColumnOperands > 0 && !SHIFTED) {
    // Persistent clusters keep their slice of the column operands for all their rows (layer norm).
    using Persistent = RowGeometry<128, 64 / VEC, 0, 8, 0, 2>;
    if (sm90 && reuse == ColumnReuse::persistent && claims != nullptr && vectors == 8 * Persistent::slice_vectors) {
      const int status = launch(Streamed{}, Persistent{}, 0);
      if (status != kDeclined) return status;
    }
  }
  // Wider rows over a cluster of 8 blocks (sm_90), each holding its slice in registers.
  if constexpr (VEC * sizeof(T) == 16) {
    if (sm90) {
      if constexpr (sizeof(T) == 4) {
        if (vectors <= 8 * 128 * 8) return launch(Cluster{}, RowGeometry<128, 8, 0, 8>{}, rows * 8);
        if (vectors <= 8 * 256 * 8) return launch(Cluster{}, RowGeometry<256, 8, 0, 8, 3>{}, rows * 8);
        // Wider, 6 of each thread's 8 vectors in shared memory: registers alone run out.
        if (vectors <= 8 * 512 * 8) return launch(Cluster{}, RowGeometry<512, 2, 6, 8>{}, rows * 8);
        if (vectors <= 8 * 1024 * 8) return launch(Cluster{}, RowGeometry<1024, 2, 6, 8>{}, rows * 8);
      } else {
        if (vectors <= 8 * 128 * 8) {
          if constexpr (Op::kColumnOperands > 0 && !SHIFTED) {
            // Two rows a block share one copy of the column operands (RMS norm's weight).
            if (reuse == ColumnReuse::two_rows && rows % 2 == 0) {
              return launch(Cluster{}, RowGeometry<128, 8, 0, 8, 4, 2>{}, rows / 2 * 8);
            }
          }
          return launch(Cluster{}, RowGeometry<128, 8, 0, 8, 8>{}, rows * 8);
        }
        // The widest 16-bit rows keep 6 of each thread's 8 vectors in shared memory.
        if (vectors <= 8 * 256 * 8) return launch(Cluster{}, RowGeometry<256, 2, 6, 8>{}, rows * 8);
        if (vectors <= 8 * 512 * 8) return launch(Cluster{}, RowGeometry<512, 2, 6, 8>{}, rows * 8);
        // Two 16-bit rows of up to 262144 (a backward pass's) on 1024-thread blocks, as float32's
        // one row: left in memory, 151936 and 256000 wide ran at 56-61% of the floor.
        if constexpr (kOperands == 2) {
          if (vectors <= 8 * 1024 * 8) return launch(Cluster{}, RowGeometry<1024, 2, 6, 8>{}, rows * 8);
        }
      }
    }
  }
  // Without sm_90 code (no clusters), and rows of single elements (VEC 1): the largest block.
  if (vectors <= 1024 * 8) return launch(Block{}, RowGeometry<1024, 8>{}, rows);
  if (sm90 && vectors <= 8 * 256 * 8) return launch(Cluster{}, RowGeometry<256, 8, 0, 8>{}, rows * 8);
  // Rows no holder fits: each pass reads the row again (mostly from L2), four vectors a
  // thread at a time where fewer rows than SMs leave memory parallelism to spare (with
  // more rows, one at a time ran faster).
  int sms = 0;
  if (const int error = current_device_sms(&sms); error != cudaSuccess) return error;
  if (rows < sms) return launch(Memory{}, RowGeometry<1024, 4>{}, rows);
  return launch(Memory{}, RowGeometry<1024, 1>{}, rows);
}

/// Runs launch_rows over rows of any width and start, for an op whose rows of T begin at
/// the addresses `row_starts` (its inputs' and output's first rows) and whose column
/// operands (may be null) at `column_starts`: 16-byte vectors where the width is whole
/// vectors and every start is aligned; shifted where every row start is as far from a
/// vector boundary, the column operands are aligned and hold_shifted() says so; else an
/// element a thread.
/// `make(vec)` makes the op for VEC = vec; `reuse` and `claims` as for launch_rows (aligned
/// rows only).
template <class T, size_t kColumns, class Make>
int launch_rows_of_any_width(std::initializer_list<const void*> row_starts,
                             const std::array<const void*, kColumns>& column_starts, int64_t rows, int64_t width,
                             cudaStream_t stream, Make make, ColumnReuse reuse = ColumnReuse::per_row,
                             RowClaims* claims = nullptr) {
  constexpr int kVec = 16 / sizeof(T);
  // hold_shifted() never holds 16-bit rows with column operands shifted: those kernels are
  // not compiled.
  constexpr bool kMayShift = !(sizeof(T) == 2 && kColumns > 0);
  using Vector = std::integral_constant<int, kVec>;
  using Element = std::integral_constant<int, 1>;
  constexpr bool kScalarEdges = scalar_edges<decltype(make(Vector{}))>::value;
  const auto first = reinterpret_cast<uintptr_t>(*row_starts.begin());
  bool aligned = width % kVec == 0, shifted = hold_shifted(rows, width, !kMayShift, kScalarEdges);
  for (const void* start : row_starts) {
    const auto address = reinterpret_cast<uintptr_t>(start);
    aligned = aligned && address % 16 == 0;
    shifted = shifted && (address - first) % 16 == 0;
  }
  for (const void* start : column_starts) {
    const bool column_aligned = reinterpret_cast<uintptr_t>(start) % 16 == 0;
    aligned = aligned && column_aligned;
    shifted = shifted && column_aligned;
  }
  if (aligned) return launch_rows<kVec>(make(Vector{}), rows, width, stream, reuse, claims);
  if constexpr (kMayShift) {
    if (shifted) return launch_rows<kVec, true>(make(Vector{}), rows, width, stream);
  }
  return launch_rows<1>(make(Element{}), rows, width, stream);
}

}  // namespace native_ops::cuda
