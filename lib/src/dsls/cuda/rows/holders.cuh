#pragma once
// The row holders of the row kernels (../rows.cuh): how a thread holds its elements of a
// row (registers, shared memory, or not at all) behind one interface.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {

/// Rows that start off a vector boundary (a width that is not a multiple of VEC) may be
/// held SHIFTED: as the aligned vectors that cover them, columns counted from the vector
/// boundary before the row, whose own columns are then [lo, end) (lo < VEC). A holder
/// passes on only the row's elements and writes only those: it tests each element of a
/// partial vector (row_element()), or, RegisterRow with SCALAR_EDGES, holds the columns of
/// the partial vectors one to a thread. The op's column operands, not shifted, are read as
/// two aligned vectors shifted into place, an element at a time at the row's edges
/// (load_column()).

/// Whether element k of the vector at column c is the row's [lo, end), in 32 bits (rows held
/// shifted are narrower than 2^31, hold_shifted()): its column less lo, unsigned (a column
/// below lo wraps), against the row's width.
__device__ __forceinline__ bool row_element(int64_t c, int k, int lo, int64_t end) {
  return static_cast<uint32_t>(c - lo) + k < static_cast<uint32_t>(end - lo);
}

/// Calls f(x) for each element of v (at column c) that is the row's, x as float; with a
/// paired row's vector p at the same columns, f(x, p) (RowPair).
template <bool SHIFTED, class T, int VEC, class F, class... Paired>
__device__ __forceinline__ void for_each_element(const Vec<T, VEC>& v, int64_t c, int lo, int64_t end, F& f,
                                                 const Paired&... p) {
  if constexpr (SHIFTED) {
    if (c < lo || c + VEC > end) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        if (row_element(c, k, lo, end)) f(to_float(v.v[k]), to_float(p.v[k])...);
      }
      return;
    }
  }
#pragma unroll
  for (int k = 0; k < VEC; ++k) f(to_float(v.v[k]), to_float(p.v[k])...);
}

/// Converts the vector at column c to float, lets g rewrite it and writes it back as T to
/// the row at y (SHIFTED: only the row's elements [lo, end), and g gets the row column of
/// the vector's first element, c - lo). With a paired row's vector p at the same columns,
/// g(c, vals, p) (RowPair).
template <bool SHIFTED = false, class T, int VEC, class G, class... Paired>
__device__ __forceinline__ void store_vector(T* y, int64_t c, const Vec<T, VEC>& in, G& g, int lo = 0, int64_t end = 0,
                                             const Paired&... p) {
  float vals[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) vals[k] = to_float(in.v[k]);
  g(c - lo, vals, p...);
  Vec<T, VEC> out;
#pragma unroll
  for (int k = 0; k < VEC; ++k) out.v[k] = from_float<T>(vals[k]);
  T* at = y + (c - lo);
  if constexpr (SHIFTED) {
    if (c < lo || c + VEC > end) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        if (row_element(c, k, lo, end)) at[k] = out.v[k];
      }
      return;
    }
  }
  if constexpr (sizeof(out) == 16) {
    // One 128-bit store, spelled out: a plain 16-byte assignment came out of the compiler
    // as 2- and 4-byte stores in some kernels (docs/design/cuda-rows.md).
    uint4 raw;
    memcpy(&raw, &out, sizeof(raw));
    __stwb(reinterpret_cast<uint4*>(at), raw);
  } else {
    *reinterpret_cast<Vec<T, VEC>*>(at) = out;
  }
}

/// Writes the one element x at column c (SHIFTED, as store_vector's columns) through g, as
/// element c % VEC of the vector that covers it: g gets that vector's row column (its column
/// operands read as at an edge vector, load_column()), the other elements zero.
template <int VEC, class T, class G, class... Paired>
__device__ __forceinline__ void store_element(T* y, int64_t c, T x, G& g, int lo, const Paired&... p) {
  const int k = static_cast<int>(c % VEC);
  auto widen = [&](T value) {
    Vec<T, VEC> w;
#pragma unroll
    for (int e = 0; e < VEC; ++e) w.v[e] = e == k ? value : from_float<T>(0.f);
    return w;
  };
  float vals[VEC];
#pragma unroll
  for (int e = 0; e < VEC; ++e) vals[e] = e == k ? to_float(x) : 0.f;
  g(c - k - lo, vals, widen(p)...);
  float out = 0.f;
#pragma unroll
  for (int e = 0; e < VEC; ++e) out = e == k ? vals[e] : out;
  y[c - lo] = from_float<T>(out);
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
/// SHIFTED: see for_each_element(); with SCALAR_EDGES, the row's whole vectors are held as
/// aligned ones (held_mask) and its columns outside them, at most VEC - 1 at each edge, go
/// one to a thread to the row's first threads: a pass then takes one element more on those
/// lanes, where an edge vector's elements took one after another on one lane while the
/// block waited for it (docs/design/cuda-rows.md, "Odd widths"; SoftmaxRows takes it).
template <class T, int VEC, int ROW_THREADS, int MAX_VECS, bool FULL = false, bool SHIFTED = false,
          bool SCALAR_EDGES = false>
struct RegisterRow {
  static constexpr bool kScalarEdges = SHIFTED && SCALAR_EDGES;
  static_assert(!(FULL && SHIFTED), "shifted rows have partial vectors at their edges");
  static_assert(!kScalarEdges || ROW_THREADS >= 2 * (VEC - 1), "a thread for each column outside the whole vectors");
  static constexpr bool kOnChip = true;
  static constexpr bool kMomentsAtOnce = false;
  static constexpr bool kColumnsInShared = false;  // see load_column()
  static constexpr bool kShifted = SHIFTED;
  Vec<T, VEC> v[MAX_VECS];
  int64_t first;  // column of the thread's first vector
  int64_t end;
  int lo = 0;              // SHIFTED: the row's first column
  uint32_t held_mask = 0;  // SCALAR_EDGES: bit i: the thread's vector i is a whole vector of the row
  int extra_column = -1;   // SCALAR_EDGES: the thread's column outside the whole vectors, or -1
  T extra;

  __device__ __forceinline__ RegisterRow(const T* x, int t, int64_t begin, int64_t row_end, int row_lo = 0)
      : first(begin + int64_t{t} * VEC), end(row_end), lo(row_lo) {
    if constexpr (kScalarEdges) {
      // Columns fit 32 bits: hold_shifted() holds no row of 2^31 elements.
      const int row_begin = begin == 0 ? lo : static_cast<int>(begin);  // begin is a vector boundary
      const int held_begin = begin == 0 && lo > 0 ? VEC : static_cast<int>(begin);
      const int held_end = max(held_begin, static_cast<int>(end - end % VEC));
      const int head = max(0, min(held_begin, static_cast<int>(end)) - row_begin);
      const int tail = static_cast<int>(end) - held_end;
      if (t < head) {
        extra_column = row_begin + t;
      } else if (t < head + tail) {
        extra_column = held_end + (t - head);
      }
      if (extra_column >= 0) extra = x[extra_column];
#pragma unroll
      for (int i = 0; i < MAX_VECS; ++i) {
        if (column(i) >= held_begin && column(i) < held_end) held_mask |= 1u << i;
      }
    }
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {  // every load issued before the first use
      if (held(i)) v[i] = *reinterpret_cast<const Vec<T, VEC>*>(x + column(i));
    }
  }
  /// The same columns, read from `slice`: a copy of the columns [begin, row_end) (a staging
  /// buffer in shared memory).
  struct FromSlice {};
  __device__ __forceinline__ RegisterRow(FromSlice, const T* slice, int t, int64_t begin, int64_t row_end)
      : first(begin + int64_t{t} * VEC), end(row_end) {
    static_assert(!SHIFTED, "staged rows are aligned");
    const auto* vectors = reinterpret_cast<const Vec<T, VEC>*>(slice);
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      if (held(i)) v[i] = vectors[i * ROW_THREADS + t];
    }
  }
  __device__ __forceinline__ int64_t column(int i) const { return first + int64_t{i} * ROW_THREADS * VEC; }
  /// Whether the thread holds its i-th vector (SCALAR_EDGES: only those all the row's).
  __device__ __forceinline__ bool held(int i) const {
    if constexpr (kScalarEdges) return held_mask >> i & 1;
    return FULL || column(i) < end;
  }
  /// The row column (counted from the row's first element) past the last one held, and
  /// (SHIFTED) how far the row starts past its first vector's boundary.
  __device__ __forceinline__ int64_t row_columns_end() const { return end - lo; }
  __device__ __forceinline__ int row_offset() const { return lo; }

  // `paired`: a RowPair's second row, held alike (for_each_element, store_vector).
  template <class F, class... Paired>
  __device__ __forceinline__ void for_each(F f, const Paired&... paired) const {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      if (held(i)) for_each_element<SHIFTED && !kScalarEdges>(v[i], column(i), lo, end, f, paired.v[i]...);
    }
    if constexpr (kScalarEdges) {
      if (extra_column >= 0) f(to_float(extra), to_float(paired.extra)...);
    }
  }

  template <class G, class... Paired>
  __device__ __forceinline__ void store(T* y, G g, const Paired&... paired) const {
#pragma unroll
    for (int i = 0; i < MAX_VECS; ++i) {
      if (held(i)) store_vector<SHIFTED && !kScalarEdges>(y, column(i), v[i], g, lo, end, paired.v[i]...);
    }
    if constexpr (kScalarEdges) {
      if (extra_column >= 0) store_element<VEC>(y, extra_column, extra, g, lo, paired.extra...);
    }
  }
};

/// The columns [begin, end) of a row (a cluster block's slice): the thread's first NEAR
/// vectors in registers (a RegisterRow of the first ROW_THREADS * NEAR vectors), its next
/// FAR in the block's shared memory, copied there by cp.async without passing through
/// registers. Each thread reads back only the vectors it copied, so no barrier is needed.
/// FULL, SHIFTED and SCALAR_EDGES as for RegisterRow; SCALAR_EDGES only without FAR: with
/// it, the registers it took cost a block an SM (softmax bf16 [1024,100003] 1.19x the time).
template <class T, int VEC, int ROW_THREADS, int NEAR, int FAR, bool FULL = false, bool SHIFTED = false,
          bool SCALAR_EDGES = false>
struct SplitRow {
  static constexpr bool kOnChip = true;
  static constexpr bool kMomentsAtOnce = false;
  static constexpr bool kColumnsInShared = false;
  static constexpr bool kShifted = SHIFTED;
  static constexpr size_t kSharedBytes = size_t{ROW_THREADS} * FAR * sizeof(Vec<T, VEC>);
  RegisterRow<T, VEC, ROW_THREADS, NEAR, FULL, SHIFTED, SCALAR_EDGES && FAR == 0> near;
  const Vec<T, VEC>* far;  // the thread's first vector in shared memory; the next ROW_THREADS on
  int64_t far_first;       // its column
  int64_t end;

  __device__ __forceinline__ SplitRow(const T* x, int t, int64_t begin, int64_t row_end, Vec<T, VEC>* shared,
                                      int row_lo = 0)
      : near(x, t, begin, min(row_end, begin + int64_t{ROW_THREADS} * NEAR * VEC), row_lo),
        far(shared + t),
        far_first(begin + int64_t{ROW_THREADS} * NEAR * VEC + int64_t{t} * VEC),
        end(row_end) {
    static_assert(FAR == 0 || sizeof(Vec<T, VEC>) == 16, "cp.async.cg copies 16 bytes");
#pragma unroll
    for (int i = 0; i < FAR; ++i) {
      const int64_t c = column(i);
      if (!FULL && c >= end) continue;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(far + i * ROW_THREADS)), "l"(x + c)
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
  __device__ __forceinline__ int64_t row_columns_end() const { return end - near.lo; }
  __device__ __forceinline__ int row_offset() const { return near.lo; }

  template <class F, class... Paired>
  __device__ __forceinline__ void for_each(F f, const Paired&... paired) const {
    near.for_each(f, paired.near...);
#pragma unroll
    for (int i = 0; i < FAR; ++i) {
      if (!FULL && column(i) >= end) continue;
      for_each_element<SHIFTED>(far[i * ROW_THREADS], column(i), near.lo, end, f, paired.far[i * ROW_THREADS]...);
    }
  }

  template <class G, class... Paired>
  __device__ __forceinline__ void store(T* y, G g, const Paired&... paired) const {
    near.store(y, g, paired.near...);
#pragma unroll
    for (int i = 0; i < FAR; ++i) {
      const int64_t c = column(i);
      if (!FULL && c >= end) continue;
      store_vector<SHIFTED>(y, c, far[i * ROW_THREADS], g, near.lo, end, paired.far[i * ROW_THREADS]...);
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

/// The VEC elements that start `first` elements (1 to VEC) into the two aligned 16-byte
/// vectors at `pair`, as floats: eight 32-bit words funnel-shifted by `first`'s bits, so a
/// runtime shift costs selects, not local memory (an indexed register array would be).
template <class T, int VEC>
__device__ __forceinline__ void load_shifted_floats(const T* pair, int first, float (&out)[VEC]) {
  static_assert(sizeof(T) * VEC == 16, "two 16-byte vectors");
  const uint4 a = *reinterpret_cast<const uint4*>(pair), b = *reinterpret_cast<const uint4*>(pair + VEC);
  const uint32_t words[9] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, 0u};
  const int bits = first * static_cast<int>(sizeof(T)) * 8;
  const int skip = bits / 32, shift = bits % 32;  // skip 0 to 4
  uint32_t picked[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    uint32_t w = words[i];
#pragma unroll
    for (int s = 1; s <= 4; ++s) w = skip == s ? words[i + s] : w;
    picked[i] = w;
  }
  Vec<T, VEC> v;
  uint32_t shifted[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) shifted[i] = __funnelshift_r(picked[i], picked[i + 1], shift);
  memcpy(&v, shifted, sizeof(v));
#pragma unroll
  for (int e = 0; e < VEC; ++e) out[e] = to_float(v.v[e]);
}

/// Reads the VEC floats at column c of the op's column operand k (`values`: a vector of
/// `width` elements that every row reads whole in its writing pass, such as a norm's weight;
/// null: `fallback`) for a thread of `row`: from memory, except where the holder keeps a
/// copy in shared memory (kColumnsInShared: SharedColumnsRow and StagedRow, below). A
/// shifted row's c is a row column (store_vector()), lo columns short of a vector
/// boundary of `values` (aligned, not shifted with the row): the two aligned vectors around
/// it, shifted into place (load_shifted_floats()); at the row's edges, an element at a
/// time, those outside the row `fallback` (not written).
template <class Row, class T, int VEC>
__device__ __forceinline__ void load_column(const Row& row, int k, const T* values, int64_t c, float (&out)[VEC],
                                            float fallback) {
  if constexpr (Row::kColumnsInShared) {
    row.shared_columns.load(k, values, c, row.first, out, fallback);
  } else if constexpr (Row::kShifted) {
    const int64_t end = row.row_columns_end();
    const int lo = row.row_offset();
    if (values != nullptr && c + lo >= VEC && c + lo + VEC <= end) {
      load_shifted_floats(values + (c + lo - VEC), VEC - lo, out);
      return;
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      out[e] = values != nullptr && c + e >= 0 && c + e < end ? to_float(values[c + e]) : fallback;
    }
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
/// exchange takes pairs: layer norm's one reduction a row (which the one-row-a-cluster
/// kernels, under their 16-bit register cap, cannot afford: they spilled).
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

/// A row left in device memory: every pass reads it again, BATCH vectors a thread at a
/// time, all loads issued before the first use (one at a time, a decode row waits on DRAM
/// latency once a vector). SHIFTED as for RegisterRow.
template <class T, int VEC, int ROW_THREADS, int BATCH, bool SHIFTED = false>
struct MemoryRow {
  static constexpr bool kOnChip = false;
  static constexpr bool kMomentsAtOnce = false;
  static constexpr bool kColumnsInShared = false;
  static constexpr bool kShifted = SHIFTED;
  const Vec<T, VEC>* vectors;
  int t;
  int64_t end;  // columns
  int lo;

  __device__ __forceinline__ MemoryRow(const T* x, int thread, int64_t row_end, int row_lo = 0)
      : vectors(reinterpret_cast<const Vec<T, VEC>*>(x)), t(thread), end(row_end), lo(row_lo) {}
  __device__ __forceinline__ int64_t row_columns_end() const { return end - lo; }
  __device__ __forceinline__ int row_offset() const { return lo; }

  /// Calls f(c, v) for each of the thread's vectors v (at column c) as loaded; with a
  /// paired row (RowPair), f(c, v, p), p its vector at the same columns.
  template <class F, class... Paired>
  __device__ __forceinline__ void for_each_vector(F f, const Paired&... paired) const {
    static_assert(sizeof...(Paired) <= 1, "a row and at most one paired row");
    const int64_t count = (end + VEC - 1) / VEC;
    for (int64_t i0 = t; i0 < count; i0 += int64_t{ROW_THREADS} * BATCH) {
      Vec<T, VEC> v[BATCH];
      [[maybe_unused]] Vec<T, VEC> p[BATCH];
#pragma unroll
      for (int b = 0; b < BATCH; ++b) {
        const int64_t i = i0 + int64_t{b} * ROW_THREADS;
        if (i >= count) continue;
        v[b] = vectors[i];
        ((p[b] = paired.vectors[i]), ...);
      }
#pragma unroll
      for (int b = 0; b < BATCH; ++b) {
        const int64_t i = i0 + int64_t{b} * ROW_THREADS;
        if (i >= count) continue;
        if constexpr (sizeof...(Paired) == 0) {
          f(i * VEC, v[b]);
        } else {
          f(i * VEC, v[b], p[b]);
        }
      }
    }
  }

  template <class F, class... Paired>
  __device__ __forceinline__ void for_each(F f, const Paired&... paired) const {
    for_each_vector(
        [&](int64_t c, const Vec<T, VEC>& v, const auto&... p) { for_each_element<SHIFTED>(v, c, lo, end, f, p...); },
        paired...);
  }

  template <class G, class... Paired>
  __device__ __forceinline__ void store(T* y, G g, const Paired&... paired) const {
    for_each_vector(
        [&](int64_t c, const Vec<T, VEC>& v, const auto&... p) { store_vector<SHIFTED>(y, c, v, g, lo, end, p...); },
        paired...);
  }
};

/// Two rows of the same columns, each held alike by a Held (RegisterRow, SplitRow or
/// MemoryRow): the op's `in` and its `paired` row (a backward pass's output and incoming
/// gradient). for_each(f) calls f(x, p) with the elements of both at each column;
/// store(y, g) calls g(c, vals, p): vals from `in`, as Held::store does, and p the paired
/// row's Vec at the same columns.
template <class Held>
struct RowPair {
  static constexpr bool kOnChip = Held::kOnChip;
  static constexpr bool kMomentsAtOnce = false;
  static constexpr bool kColumnsInShared = false;
  Held in, paired;

  template <class F>
  __device__ __forceinline__ void for_each(F f) const {
    in.for_each(f, paired);
  }
  template <class T, class G>
  __device__ __forceinline__ void store(T* y, G g) const {
    in.store(y, g, paired);
  }
};

}  // namespace native_ops::cuda
