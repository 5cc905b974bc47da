// topk over the last dimension on the GPU, a block a row. Each element becomes an unsigned
// key whose order is the selection's (NaN above every number, as aten orders it; smallest:
// the keys inverted), and a candidate is the key and the column in one 64-bit word, larger
// keys and then smaller columns first.
//
// The fast path reads the row once, and a sample of it: the sample (all the row when it is
// short) gives a threshold, the key of a rank in the sample chosen so that at least k of
// the row reach it but seldom more than shared memory holds. One pass over the row tests
// each 16-byte vector against the threshold's value with float compares (a 16-bit vector by
// its pairwise extreme) and queues those that may hold a candidate in shared memory; the
// block then collects their keys that reach it (an atomic a warp), and a sort puts the k
// first: up to 256 candidates each placed by its rank (no barrier: they are few where rows
// are short or few, and a launch's latency is the block's), more by a bitonic sort (of only
// the candidates of the k-th key's top digits onward, found by a radix select among them,
// where that saves more than it costs). Where the sample misjudged
// the row (fewer than k reach the threshold, or more than shared memory holds) an exact
// radix select over the row finds the k-th key digit by digit (a histogram a digit), and a
// last pass collects the keys above it and the first columns equal to it. Rows too few to
// fill the GPU are split over several blocks, and a second launch merges their selections;
// or, for k up to 256 where the rows fit one wave of clusters, a cluster of blocks takes
// each row in one launch (topk_cluster_rows; at k 1 the cluster's maximum). k 1 largest
// elsewhere runs argmax's kernel, but on wide rows fewer than the SMs.
#include <cooperative_groups.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../argmax/cuda_abi.h"
#include "cuda_abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

// 256 threads and four blocks an SM: while one block samples or sorts, the others stream.
constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;
constexpr int kWarps = kThreads / 32;
// Candidates shared memory holds (32 KiB), and sample elements (4096 keys, 16 KiB).
constexpr int kCandidates = 4096;
// Vectors the filter queues for the block to take apart after the pass (15 KiB).
constexpr int kQueued = 768;
// Selecting the k among the candidates before sorting pays where it saves the sort this
// many rounds a digit of the key (H200: saving an estimated 82 and 219 rounds, 8% and 19%
// faster; 8 to 17, up to 8% slower).
constexpr int kSelectionRoundsPerDigit = 20;
constexpr int kSample = 4096;
constexpr int kSampleChunk = 32;  // contiguous elements a warp reads a sample chunk
// Digits of the radix select: a wide first one over the row (fewer passes over global
// memory), 8-bit ones over the sample (a bin a thread).
constexpr int kRowFirstDigitBits = 12;
constexpr int kDigitBits = 8;
// 16-byte vectors a thread loads before it uses the first.
constexpr int kUnroll = 4;

template <class T>
struct KeyTraits;
template <>
struct KeyTraits<float> {
  static constexpr uint32_t kSign = 0x80000000u, kAll = 0xffffffffu, kInfinity = 0x7f800000u;
  static __device__ __forceinline__ uint32_t bits(float x) { return __float_as_uint(x); }
  static __device__ __forceinline__ float value(uint32_t bits) { return __uint_as_float(bits); }
  static __device__ __forceinline__ float element(uint32_t bits) { return __uint_as_float(bits); }
};
template <>
struct KeyTraits<__half> {
  static constexpr uint32_t kSign = 0x8000u, kAll = 0xffffu, kInfinity = 0x7c00u;
  static __device__ __forceinline__ uint32_t bits(__half x) { return __half_as_ushort(x); }
  static __device__ __forceinline__ float value(uint32_t bits) { return __half2float(element(bits)); }
  static __device__ __forceinline__ __half element(uint32_t bits) {
    return __ushort_as_half(static_cast<unsigned short>(bits));
  }
};
template <>
struct KeyTraits<__nv_bfloat16> {
  static constexpr uint32_t kSign = 0x8000u, kAll = 0xffffu, kInfinity = 0x7f80u;
  static __device__ __forceinline__ uint32_t bits(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
  static __device__ __forceinline__ float value(uint32_t bits) { return __uint_as_float(bits << 16); }
  static __device__ __forceinline__ __nv_bfloat16 element(uint32_t bits) {
    return __ushort_as_bfloat16(static_cast<unsigned short>(bits));
  }
};

// The key of x: a larger x (a smaller one, when not `largest`), a larger key; NaN ordered
// above every number either way, as aten's topk orders it.
template <class T>
__device__ __forceinline__ uint32_t ordered_key(T x, bool largest) {
  using K = KeyTraits<T>;
  const uint32_t bits = K::bits(x);
  if ((bits & ~K::kSign) > K::kInfinity) return largest ? K::kAll : 0u;
  const uint32_t key = (bits & K::kSign) != 0 ? (~bits & K::kAll) : (bits | K::kSign);
  return largest ? key : (~key & K::kAll);
}

// The bits of the x whose ordered_key(x) is `key` (NaN's: every NaN has one key, above
// every number's).
template <class T>
__device__ __forceinline__ uint32_t key_bits(uint32_t key, bool largest) {
  using K = KeyTraits<T>;
  const uint32_t ascending = largest ? key : (~key & K::kAll);  // the key of x in largest order
  return (ascending & K::kSign) != 0 ? (ascending & ~K::kSign) : (~ascending & K::kAll);
}

// The value of which every x with ordered_key(x) >= key is at least (at most, when not
// `largest`) in float order; NaN when such keys are only NaN's, which no float compare
// excludes.
template <class T>
__device__ __forceinline__ float threshold_value(uint32_t key, bool largest) {
  return KeyTraits<T>::value(key_bits<T>(key, largest));
}

// Larger keys first, then smaller columns: the order of a sorted topk.
__device__ __forceinline__ uint64_t candidate(uint32_t key, int column) {
  return (uint64_t{key} << 32) | (~static_cast<uint32_t>(column));
}
__device__ __forceinline__ int32_t candidate_column(uint64_t c) {
  return static_cast<int32_t>(~static_cast<uint32_t>(c));
}

// The element of candidate c of the row: made from its key, but for a NaN (its payload and
// sign are the row's), read from the row.
template <class T>
__device__ __forceinline__ T candidate_element(uint64_t c, const T* row, bool largest) {
  const uint32_t key = static_cast<uint32_t>(c >> 32);
  if (key == (largest ? KeyTraits<T>::kAll : 0u)) return row[candidate_column(c)];
  return KeyTraits<T>::element(key_bits<T>(key, largest));
}

// Block b selects from columns [s * slice_width, (s + 1) * slice_width) of row b / slices
// (s = b % slices) and writes its k to values and indices at b * k: the whole row where
// slices is 1. The indices are columns of the row, or, where `positions` is set (the merge
// of slices), positions[the row's start + column].
template <class T>
struct TopkArgs {
  const T* in;
  T* values;
  int64_t* indices;
  const int64_t* positions;
  int64_t width;
  int64_t slice_width;
  int slices;
  int k;
  bool largest;
};

// The sum of `value` over this lane and the lanes before it. Every lane of the warp must call it.
__device__ __forceinline__ uint32_t warp_inclusive_sum(uint32_t value) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const uint32_t before = __shfl_up_sync(0xffffffffu, value, offset);
    if (lane >= offset) value += before;
  }
  return value;
}

// The sum of `value` over the threads before this one, in thread order; `total` gets the
// block's sum. Every thread of the block must call it.
__device__ __forceinline__ uint32_t block_exclusive_scan(uint32_t value, uint32_t& total, uint32_t* warp_sums) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const uint32_t inclusive = warp_inclusive_sum(value);
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  uint32_t before_warp = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    if (w < warp) before_warp += warp_sums[w];
    total += warp_sums[w];
  }
  __syncthreads();  // warp_sums is free for the next scan
  return before_warp + inclusive - value;
}

// Calls f(x, present, column) for runs of the row's elements, x[0, present) at columns
// [column, column + present): a scalar head up to the first 16-byte boundary, the aligned
// middle in whole vectors (kUnroll a thread in flight), a scalar tail.
template <class T, class F>
__device__ __forceinline__ void for_each_run(const T* row, int width, F&& f) {
  constexpr int kVec = 16 / sizeof(T);
  using Vector = Vec<T, kVec>;
  const int t = static_cast<int>(threadIdx.x);
  const int misaligned = static_cast<int>(reinterpret_cast<uintptr_t>(row) % 16 / sizeof(T));
  const int head = misaligned == 0 ? 0 : min(width, kVec - misaligned);
  if (t < head) f(row + t, 1, t);
  const int vectors = (width - head) / kVec;
  const Vector* body = reinterpret_cast<const Vector*>(row + head);
  for (int first = t; first < vectors; first += kThreads * kUnroll) {
    Vector x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (first + u * kThreads < vectors) x[u] = body[first + u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (first + u * kThreads < vectors) f(x[u].v, kVec, head + (first + u * kThreads) * kVec);
    }
  }
  const int tail = head + vectors * kVec;
  if (tail + t < width) f(row + tail + t, 1, tail + t);
}

// The keys of rank `rank` (1: the largest) among those for_each_key(f) passes to f, found
// digit by digit from the top: keys whose resolved bits (key & mask) exceed prefix rank
// above it; `remaining` more are to come from those whose resolved bits equal it. Stops at
// the first digit whose whole bin is taken. hist holds 2^kFirstBits counts.
struct Selection {
  uint32_t prefix = 0, mask = 0, remaining = 0;
};
template <int kKeyBits, int kFirstBits, class ForEachKey>
__device__ Selection radix_select(uint32_t rank, uint32_t* hist, uint32_t* warp_sums, uint32_t* found,
                                  ForEachKey&& for_each_key) {
  const int t = static_cast<int>(threadIdx.x);
  Selection s;
  s.remaining = rank;
  for (int shift = kKeyBits; shift > 0;) {
    const int bits = shift == kKeyBits ? kFirstBits : min(kDigitBits, shift);
    shift -= bits;
    const uint32_t bins = 1u << bits;
    for (uint32_t b = t; b < bins; b += kThreads) hist[b] = 0;
    __syncthreads();
    // An atomic a key: on the H200 faster than one a distinct digit a warp (__match_any_sync),
    // 20.3 K to 7.4 K cycles over a 4096-key sample, and faster also where most keys are equal.
    for_each_key([&](uint32_t key) {
      if ((key & s.mask) == s.prefix) atomicAdd(&hist[(key >> shift) & (bins - 1)], 1u);
    });
    __syncthreads();
    // Thread t owns bins [hi - per, hi), the top ones first: the digit is where the keys
    // above it fall short of `remaining` and its bin's make it up.
    const int per = static_cast<int>((bins + kThreads - 1) / kThreads);
    const int hi = static_cast<int>(bins) - t * per;
    const int lo = max(0, hi - per);
    uint32_t own = 0;
    for (int b = lo; b < hi; ++b) own += hist[b];
    uint32_t total = 0;
    const uint32_t above = block_exclusive_scan(own, total, warp_sums);
    if (above < s.remaining && s.remaining <= above + own) {
      uint32_t running = above;
      for (int b = hi - 1; b >= lo; --b) {
        if (running + hist[b] >= s.remaining) {
          found[0] = static_cast<uint32_t>(b);
          found[1] = running;
          break;
        }
        running += hist[b];
      }
    }
    __syncthreads();
    const uint32_t digit = found[0];
    const uint32_t in_bin = hist[digit];
    s.remaining -= found[1];
    s.prefix |= digit << shift;
    s.mask |= (bins - 1) << shift;
    __syncthreads();                   // hist and found are read before the next pass writes them
    if (in_bin == s.remaining) break;  // the whole bin is taken: no lower digit matters
  }
  return s;
}

// Compare-exchange rounds a thread of sort_descending over count items: log2(n)(log2(n) + 1)
// / 2 stages of n / 2 pairs (n: count rounded up to a power of two).
__device__ __forceinline__ int sort_rounds(int count) {
  int levels = 0;
  while ((1 << levels) < count) ++levels;
  return levels * (levels + 1) / 2 * max(1, (1 << levels) / (2 * kThreads));
}

// Writes the candidates items[0, count) of rank below `limit` (0: the largest) to
// out[rank], out not items; count <= the block's threads. Each thread counts the candidates above its
// own (no two are equal: their columns differ): no barrier, where the bitonic sort takes
// one a round.
__device__ void rank_sort(const uint64_t* items, int count, uint64_t* out, int limit) {
  const int t = static_cast<int>(threadIdx.x);
  if (t >= count) return;
  const uint64_t own = items[t];
  int rank = 0;
#pragma unroll 8
  for (int j = 0; j < count; ++j) rank += items[j] > own ? 1 : 0;
  if (rank < limit) out[rank] = own;
}

// Sorts items[0, count) descending in place (count <= kCandidates), padding with zeros,
// which no candidate is, up to a power of two.
__device__ void sort_descending(uint64_t* items, int count) {
  const int t = static_cast<int>(threadIdx.x);
  int size = 1;
  while (size < count) size *= 2;
  for (int i = count + t; i < size; i += kThreads) items[i] = 0;
  __syncthreads();
  for (int span = 2; span <= size; span *= 2) {
    for (int stride = span / 2; stride > 0; stride /= 2) {
      for (int pair = t; pair < size / 2; pair += kThreads) {
        const int lo = 2 * pair - (pair & (stride - 1));  // stride is a power of two
        const int hi = lo + stride;
        const bool descending = (lo & span) == 0;
        const uint64_t a = items[lo], b = items[hi];
        if ((a < b) == descending) {
          items[lo] = b;
          items[hi] = a;
        }
      }
      __syncthreads();
    }
  }
}

// A slot from *counter for each lane calling together, one atomic a warp: consecutive
// slots in lane order.
__device__ __forceinline__ uint32_t claim_slot(uint32_t* counter, int lane) {
  const unsigned peers = __activemask();
  const int leader = __ffs(peers) - 1;
  uint32_t base = 0;
  if (lane == leader) base = atomicAdd(counter, static_cast<uint32_t>(__popc(peers)));
  return __shfl_sync(peers, base, leader) + __popc(peers & ((1u << lane) - 1));
}

// Whether any of x[0, present) may reach `limit` (at or above it; at or below it when not
// `largest`): true for NaN. A whole 16-bit vector is tested by its pairwise extreme.
template <class T>
__device__ __forceinline__ bool may_reach(const T* x, int present, float limit, bool largest) {
  constexpr int kVec = 16 / sizeof(T);
  if constexpr (sizeof(T) == 2) {
    if (present == kVec) {
      using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
      const Pair* pairs = reinterpret_cast<const Pair*>(x);
      Pair extreme = pairs[0];
      if (largest) {
#pragma unroll
        for (int i = 1; i < kVec / 2; ++i) extreme = __hmax2_nan(extreme, pairs[i]);
        return !(to_float(extreme.x) < limit) || !(to_float(extreme.y) < limit);
      }
#pragma unroll
      for (int i = 1; i < kVec / 2; ++i) extreme = __hmin2_nan(extreme, pairs[i]);
      return !(to_float(extreme.x) > limit) || !(to_float(extreme.y) > limit);
    }
  }
  bool any = false;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    if (j < present) any |= largest ? !(to_float(x[j]) < limit) : !(to_float(x[j]) > limit);
  }
  return any;
}

template <class T>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) topk_rows(TopkArgs<T> a) {
  constexpr int kKeyBits = sizeof(T) * 8;
  __shared__ uint64_t items[kCandidates];
  __shared__ uint32_t warp_sums[kWarps];
  __shared__ uint32_t found[2];  // radix_select's digit, and how many keys lie above its bin
  __shared__ uint32_t collected;
  __shared__ Vec<T, 16 / sizeof(T)> queued_vectors[kQueued];
  __shared__ uint32_t queued_columns[kQueued];  // the first column; the top bit: a single element
  __shared__ uint32_t queued;
  __shared__ uint32_t kept;
  // The histogram and the sample share the candidates' memory; neither outlives them.
  uint32_t* hist = reinterpret_cast<uint32_t*>(items);
  uint32_t* sample = reinterpret_cast<uint32_t*>(items) + (1 << kRowFirstDigitBits);
  static_assert(kCandidates * 2 >= (1 << kRowFirstDigitBits) + kSample, "hist and sample fit in items");
  static_assert(kSample % (kWarps * kSampleChunk) == 0, "whole chunks a warp");
  const int64_t row_index = blockIdx.x / a.slices;
  const int64_t first_column = (blockIdx.x % a.slices) * a.slice_width;
  const int width = static_cast<int>(min(a.slice_width, a.width - first_column));
  const T* row = a.in + row_index * a.width + first_column;
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % 32, warp = t / 32;

  // The threshold: the key of rank `rank` in the sample.
  const bool whole_row = width <= kSample;
  const int sampled = whole_row ? width : kSample;
  if (whole_row) {
    for (int i = t; i < sampled; i += kThreads) sample[i] = ordered_key(row[i], a.largest);
  } else {
    constexpr int kChunks = kSample / kSampleChunk;
    const int64_t spacing = width / kChunks;
    constexpr int kChunksPerWarp = kChunks / kWarps;
    T loaded[kChunksPerWarp];  // all in flight before the first is used
#pragma unroll
    for (int i = 0; i < kChunksPerWarp; ++i) loaded[i] = row[(warp + i * kWarps) * spacing + lane];
#pragma unroll
    for (int i = 0; i < kChunksPerWarp; ++i) {
      sample[(warp + i * kWarps) * kSampleChunk + lane] = ordered_key(loaded[i], a.largest);
    }
  }
  if (t == 0) {
    collected = 0;
    queued = 0;
    kept = 0;
  }
  __syncthreads();
  // The sample holds about `expected` of the row's k largest (Poisson); a rank 3 standard
  // deviations and 8 above it leaves fewer than k reaching the threshold in under one row
  // in 10^3 (k <= 1024; 10^-5 or fewer at k 50 to 256 of vocabulary rows).
  const float expected = static_cast<float>(a.k) * kSample / static_cast<float>(width);
  const uint32_t rank = whole_row
                            ? static_cast<uint32_t>(a.k)
                            : static_cast<uint32_t>(min(ceilf(expected + 3 * sqrtf(expected)) + 8, float{kSample}));
  const uint32_t threshold = radix_select<kKeyBits, kDigitBits>(rank, hist, warp_sums, found, [&](auto&& f) {
                               for (int i = t; i < sampled; i += kThreads) f(sample[i]);
                             }).prefix;

  // Every element at or above the threshold, in an order of the atomics' choosing. The
  // float compares pass a superset (NaN, and -0 with +0), the keys decide. The pass only
  // queues the vectors that may hold one, a warp's at once, so that its warps stay
  // converged and streaming; the block takes the queue apart after it (the few vectors
  // over the queue's size at once).
  const float limit = threshold_value<T>(threshold, a.largest);
  constexpr int kVec = 16 / sizeof(T);
  auto collect = [&](const T* x, int present, int column) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if (j >= present) break;
      const uint32_t key = ordered_key(x[j], a.largest);
      if (key < threshold) continue;
      const uint32_t slot = claim_slot(&collected, lane);
      if (slot < kCandidates) items[slot] = candidate(key, column + j);
    }
  };
  for_each_run(row, width, [&](const T* x, int present, int column) {
    if (!may_reach(x, present, limit, a.largest)) return;
    const uint32_t slot = claim_slot(&queued, lane);
    if (slot >= kQueued) {
      collect(x, present, column);
      return;
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) queued_vectors[slot].v[j] = j < present ? x[j] : T{};
    queued_columns[slot] = static_cast<uint32_t>(column) | (present == 1 ? 0x80000000u : 0u);
  });
  __syncthreads();
  // The queue a vector a lane, a warp's candidates placed by a scan and one atomic.
  const int queue_length = static_cast<int>(min(queued, uint32_t{kQueued}));
  for (int first = warp * 32; first < queue_length; first += kThreads) {
    const int slot = first + lane;
    uint32_t keys[kVec];
    uint32_t taken = 0, reaching = 0;
    int column = 0;
    if (slot < queue_length) {
      const uint32_t packed = queued_columns[slot];
      const int present = (packed >> 31) != 0 ? 1 : kVec;
      column = static_cast<int>(packed & 0x7fffffffu);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        keys[j] = ordered_key(queued_vectors[slot].v[j], a.largest);
        if (j < present && keys[j] >= threshold) {
          taken |= 1u << j;
          ++reaching;
        }
      }
    }
    const uint32_t inclusive = warp_inclusive_sum(reaching);
    uint32_t base = 0;
    if (lane == 31 && inclusive > 0) base = atomicAdd(&collected, inclusive);
    uint32_t place = __shfl_sync(0xffffffffu, base, 31) + inclusive - reaching;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      if (((taken >> j) & 1u) == 0) continue;
      if (place < kCandidates) items[place] = candidate(keys[j], column + j);
      ++place;
    }
  }
  __syncthreads();
  const uint32_t count = collected;

  int sorted_count = static_cast<int>(count);
  uint64_t* sorted = items;
  // The queue's memory, free now.
  uint64_t* kept_items = reinterpret_cast<uint64_t*>(queued_vectors);
  constexpr int kKept = static_cast<int>(sizeof(queued_vectors) / sizeof(uint64_t));
  static_assert(kKept >= NATIVE_OPS_TOPK_MAX_K, "the k placed by rank_sort fit in the queue's memory");
  if (count < static_cast<uint32_t>(a.k) || count > kCandidates) {
    // The exact path: the k-th key, then the keys above it and the first columns equal to
    // it, placed by block scans in column order. Each round a thread holds consecutive
    // columns, the threads in column order.
    const Selection s =
        radix_select<kKeyBits, kRowFirstDigitBits>(static_cast<uint32_t>(a.k), hist, warp_sums, found, [&](auto&& f) {
          for_each_run(row, width, [&](const T* x, int present, int) {
            for (int j = 0; j < present; ++j) f(ordered_key(x[j], a.largest));
          });
        });
    const uint32_t taken_above = static_cast<uint32_t>(a.k) - s.remaining;
    uint32_t above_base = 0, tie_base = 0;
    auto round = [&](const T* x, int present, int column) {
      uint8_t kind[kVec];  // 0: left out, 1: above, 2: equal
      uint32_t keys[kVec];
      uint32_t above = 0, ties = 0;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        kind[j] = 0;
        if (j >= present) continue;
        keys[j] = ordered_key(x[j], a.largest);
        const uint32_t resolved = keys[j] & s.mask;
        kind[j] = resolved > s.prefix ? 1 : resolved == s.prefix ? 2 : 0;
        above += kind[j] == 1;
        ties += kind[j] == 2;
      }
      uint32_t total = 0;
      const uint32_t offsets = block_exclusive_scan(above | (ties << 16), total, warp_sums);
      uint32_t above_slot = above_base + (offsets & 0xffffu), tie_rank = tie_base + (offsets >> 16);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        if (kind[j] == 0) continue;
        uint32_t slot;
        if (kind[j] == 1) {
          slot = above_slot++;
        } else {
          if (tie_rank >= s.remaining) continue;
          slot = taken_above + tie_rank++;
        }
        items[slot] = candidate(keys[j], column + j);
      }
      above_base += total & 0xffffu;
      tie_base += total >> 16;
    };
    const int misaligned = static_cast<int>(reinterpret_cast<uintptr_t>(row) % 16 / sizeof(T));
    const int head = misaligned == 0 ? 0 : min(width, kVec - misaligned);
    auto done = [&] { return above_base == taken_above && tie_base >= s.remaining; };
    {
      T x[kVec];
      x[0] = t < head ? row[t] : T{};
      round(x, t < head ? 1 : 0, t);
    }
    const int vectors = (width - head) / kVec;
    const Vec<T, kVec>* body = reinterpret_cast<const Vec<T, kVec>*>(row + head);
    for (int first = 0; first < vectors && !done(); first += kThreads) {
      const int v = first + t;
      Vec<T, kVec> x;
      if (v < vectors) x = body[v];
      round(x.v, v < vectors ? kVec : 0, head + v * kVec);
    }
    const int tail = head + vectors * kVec;
    if (!done()) {
      T x[kVec];
      x[0] = tail + t < width ? row[tail + t] : T{};
      round(x, tail + t < width ? 1 : 0, tail + t);
    }
    sorted_count = a.k;
  } else if (static_cast<int>(count) > kThreads && 2 * a.k <= kKept &&
             sort_rounds(static_cast<int>(count)) - sort_rounds(2 * a.k) >=
                 kSelectionRoundsPerDigit * (kKeyBits / kDigitBits)) {
    // The k-th key among the candidates, and only the candidates of its top digits onward
    // sorted: fewer than sorting them all.
    const Selection s =
        radix_select<kKeyBits, kDigitBits>(static_cast<uint32_t>(a.k), queued_columns, warp_sums, found, [&](auto&& f) {
          for (int i = t; i < static_cast<int>(count); i += kThreads) {
            f(static_cast<uint32_t>(items[i] >> 32));
          }
        });
    for (int i = t; i < static_cast<int>(count); i += kThreads) {
      const uint64_t c = items[i];
      if ((static_cast<uint32_t>(c >> 32) & s.mask) < s.prefix) continue;
      const uint32_t slot = atomicAdd(&kept, 1u);
      if (slot < static_cast<uint32_t>(kKept)) kept_items[slot] = c;
    }
    __syncthreads();
    int size = 1;
    while (size < static_cast<int>(kept)) size *= 2;
    if (size <= kKept) {
      sorted = kept_items;
      sorted_count = static_cast<int>(kept);
    }
  }
  __syncthreads();  // the exact path's candidates are placed
  if (sorted_count <= kThreads) {
    uint64_t* ranked = sorted == items ? kept_items : items;
    rank_sort(sorted, sorted_count, ranked, a.k);
    sorted = ranked;
    __syncthreads();
  } else {
    sort_descending(sorted, sorted_count);
  }

  T* values = a.values + int64_t{blockIdx.x} * a.k;
  int64_t* indices = a.indices + int64_t{blockIdx.x} * a.k;
  for (int i = t; i < a.k; i += kThreads) {
    const int32_t column = candidate_column(sorted[i]);
    values[i] = row[column];
    indices[i] = a.positions != nullptr ? a.positions[row_index * a.width + column] : first_column + column;
  }
}

// Decode rows (a few rows of a vocabulary): one launch, a cluster of blocks a row, the row
// held in their registers. Every block draws the same sample of the row and finds its
// threshold; each appends its elements that reach it to the first block's shared memory (the
// pool), which selects the k among them and sorts them. Where the sample misjudged the row
// (fewer than k reach the threshold, or more than the pool holds) the cluster finds the k-th
// element by halving over its key's and column's bits, each step a count across the cluster.
constexpr int kClusterThreads = 1024;
constexpr int kClusterMaxBlocks = 8;   // the portable cluster size
constexpr int kClusterMaxVectors = 4;  // 16-byte vectors a thread holds
// At k 1 a thread reads up to this many, the ones past kClusterMaxVectors after the others
// (H100: float32 1-8 rows of 151936 and [1,262144] in 0.35-0.48 of the two launches' time).
constexpr int kClusterMaxVectorsK1 = 2 * kClusterMaxVectors;
constexpr int kPerThread = 2;  // pool candidates a thread, and sample keys where they fit the pool
// Where the pool would not hold what reaches the threshold of kPerThread sample keys a thread
// (rows over 65536 wide at large k), a denser sample, its threshold nearer the k-th element
// (H100, with the threshold then found by halving: 0.54-0.97 of the two launches' time
// there, median 0.72, but float16 [1-4,151936] k 64-128 1.04-1.17;
// docs/design/data/topk-cluster-bound-h100.json).
constexpr int kDenseSamplePerThread = 4;
constexpr int kPool = kClusterThreads * kPerThread;
// The pool's selection is a search whose every step is a count: taken by 8 warps under their
// own barrier, each thread counting 8 candidates, instead of two counts of the whole block a
// step (H100: the rows the cluster takes in 0.86-1.01 of the time, median 0.92-0.94;
// docs/design/data/topk-cluster-select-h100.json).
constexpr int kSelectWarps = 8;
constexpr int kSelectThreads = kSelectWarps * 32;
constexpr int kPerSelector = kPool / kSelectThreads;
constexpr int kClusterMaxK = 256;  // rank_sort places up to a block's threads; more cost it its lead
// 16-bit rows of more than one vector a thread (wider than 65536) below it run as fast in the
// two launches (H100, CUDA graphs, the cluster's time over theirs at 100003-151936 wide:
// float16 k 1-32 0.91-1.14, median 1.01-1.02, k 64 0.88-0.99; bfloat16's uniform rows tie
// more at the top, which slows the two launches: 0.70-1.08). Every other row within one
// wave of clusters: 0.66-1.00 at k 1-112, median 0.81. The geometric middle of 32 and 64
// (docs/design/data/topk-cluster-bound-h100.json).
constexpr int64_t kClusterMinKWide16Bit = 45;
// Rows beyond one wave of clusters (a second wave costs about 8 us) run mostly faster in the
// two launches below it (H100, the cluster's time over theirs at a second wave: k 1-112
// 0.86-1.53, median 1.20; k 128 0.94-1.23, median 1.12; k 256 0.77-0.79); the geometric
// middle of 128 and 256 (docs/design/data/topk-cluster-bound-h100.json). Not for k 1, a
// maximum, which takes a second wave faster (16 rows of 50257-151936: 6.3-10.6 us where the
// two launches take 13.1-18.9; docs/design/data/topk-cluster-k1-h100.json).
constexpr int64_t kClusterMinKSecondWave = 181;
// Narrower rows are sampled too densely for the sample's threshold to cut much.
constexpr int64_t kClusterMinWidth = 8 * kClusterThreads * kPerThread;

// k 1 largest is argmax with its value: the arg-extreme kernel (kernels/argmax) runs it where
// no cluster does, a block a row, which on fewer rows than SMs takes a row's width on one SM
// (H100, 32 rows: 151936 wide 0.71-0.88 of the two launches' time, 262144 1.03-1.31; 64-4096
// rows of 32000-262144 0.35-0.93 of topk's own kernels' time, 64-8192 rows of 768-32000
// 0.09-0.86; docs/design/data/topk-k1-h100.json, topk-k1-narrow-h100.json). Wider rows,
// fewer than the SMs, keep the two launches: the geometric middle of 151936 and 262144.
constexpr int64_t kArgExtremeMaxWidthFewRows = 199570;

template <class T>
struct ClusterTopkArgs {
  const T* in;
  T* values;
  int64_t* indices;
  int64_t width;
  int k;
  int sample_rank;  // the sample key of this rank (1: the largest) is the threshold
  bool largest;
};

// The sum of `value` over the block's first kSelectWarps warps, in each of their threads:
// each warp's sum goes to slots[parity], read after a barrier of those warps alone (named
// barrier 1); the parity alternates, so a warp's next sum never overwrites one still read.
__device__ __forceinline__ uint32_t selectors_sum(uint32_t value, uint32_t (*slots)[kSelectWarps], int& parity) {
  const uint32_t warp_sum = __reduce_add_sync(0xffffffffu, value);
  if (threadIdx.x % 32 == 0) slots[parity][threadIdx.x / 32] = warp_sum;
  asm volatile("bar.sync 1, %0;" ::"n"(kSelectThreads) : "memory");
  uint32_t total = 0;
#pragma unroll
  for (int w = 0; w < kSelectWarps; ++w) total += slots[parity][w];
  parity ^= 1;
  return total;
}

// The largest key with its bits below `key_bits` - 16 clear reached by at least `rank` of the
// block's sample keys (every thread's `keys`), 4 bits a step: each step a histogram of the
// next 4-bit digit among the keys with the bits found so far (a warp's counts packed 8 bits
// a digit and summed across it, then a shared atomic a digit) and one barrier of the block,
// where halving takes a count of the block a bit (H100: the cells of the denser sample in
// 0.82-0.93 of the time, the others 0.88-1.04, median 0.97;
// docs/design/data/topk-cluster-threshold-radix-h100.json).
// counts: 4 x 16, zeroed and a barrier passed before the call.
template <int N>
__device__ uint32_t kth_largest_sample_key(const uint32_t (&keys)[N], int key_bits, uint32_t rank,
                                           uint32_t (*counts)[16]) {
  static_assert(N * 32 < 256, "a digit's count of a warp fits 8 bits");
  const int lane = static_cast<int>(threadIdx.x % 32);
  uint32_t prefix = 0;
#pragma unroll
  for (int step = 0; step < 4; ++step) {
    const int shift = key_bits - 4 * (step + 1);
    const uint32_t found = step == 0 ? 0u : ~((1u << (shift + 4)) - 1u);
    uint32_t packed[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if ((keys[i] & found) != prefix) continue;
      const uint32_t digit = (keys[i] >> shift) & 15u;
      const uint32_t one = 1u << (8 * (digit & 3u));
#pragma unroll
      for (int j = 0; j < 4; ++j) packed[j] += digit >> 2 == static_cast<uint32_t>(j) ? one : 0u;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) packed[j] = __reduce_add_sync(0xffffffffu, packed[j]);
    if (lane < 16) {
      const uint32_t word = lane < 4 ? packed[0] : lane < 8 ? packed[1] : lane < 12 ? packed[2] : packed[3];
      const uint32_t count = (word >> (8 * (lane & 3))) & 255u;
      if (count > 0) atomicAdd(&counts[step][lane], count);
    }
    __syncthreads();
    uint32_t above = 0;
    int digit = 15;
    for (; digit > 0; --digit) {
      const uint32_t count = counts[step][digit];
      if (above + count >= rank) break;
      above += count;
    }
    rank -= above;
    prefix |= static_cast<uint32_t>(digit) << shift;
  }
  return prefix;
}

// The k-th largest of distinct candidates (key and column, candidate()), or a value that
// exactly k candidates reach: reaching(c) is how many are at or above c, the same in every
// thread. Every candidate's key has the bits above `first_key_bit` of `known_key`, so the
// halving starts below them. The columns' bits are halved only where the k-th key ties.
template <class Reaching>
__device__ uint64_t kth_largest_candidate(uint32_t known_key, int first_key_bit, int column_bits, uint32_t k,
                                          Reaching&& reaching) {
  uint64_t prefix = uint64_t{known_key} << 32;
  // Keeps `trial` where at least k reach it; true once exactly k do.
  auto halve = [&](uint64_t trial) {
    const uint32_t reached = reaching(trial);
    if (reached >= k) prefix = trial;
    return reached == k;
  };
#pragma unroll 1
  for (int bit = first_key_bit; bit >= 0; --bit) {
    if (halve(prefix | (uint64_t{1} << (32 + bit)))) return prefix;
  }
  // ~column has every bit from column_bits up set (columns are below 2^column_bits).
  prefix |= ~((uint64_t{1} << column_bits) - 1) & 0xffffffffull;
#pragma unroll 1
  for (int bit = column_bits - 1; bit >= 0; --bit) {
    if (halve(prefix | (uint64_t{1} << bit))) return prefix;
  }
  return prefix;
}

// Row blockIdx.x / (cluster size) of a.in, the cluster's block r holding its 16-byte vectors
// (j * blocks + r) * kClusterThreads + thread, j < VECTORS; block 0 also the unaligned head
// and tail elements.
template <class T, int VECTORS, int SAMPLE_PER_THREAD>
__global__ void __launch_bounds__(kClusterThreads, 1) topk_cluster_rows(ClusterTopkArgs<T> a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  constexpr int kKeyBits = sizeof(T) * 8;
  constexpr int kVec = 16 / sizeof(T);
  using Vector = Vec<T, kVec>;
  __shared__ uint64_t pool[kPool];
  __shared__ uint64_t chosen[kClusterMaxK];
  __shared__ uint64_t ranked[kClusterMaxK];
  __shared__ uint32_t pool_count, pool_top_key, chosen_count;
  __shared__ uint64_t block_tops[kClusterMaxBlocks];  // k = 1: each block's largest candidate
  __shared__ uint32_t warp_counts[kClusterThreads / 32];
  __shared__ uint32_t selector_sums[2][kSelectWarps];
  __shared__ uint32_t digit_counts[4][16];
  __shared__ uint32_t block_counts[2][kClusterMaxBlocks];  // by step parity: a block may run one step ahead
  const cg::cluster_group cluster = cg::this_cluster();
  const uint32_t rank = cluster.block_rank();
  const uint32_t blocks = cluster.num_blocks();
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % 32, warp = t / 32;
  if (t == 0) {
    pool_count = 0;
    pool_top_key = 0;
    chosen_count = 0;
  }
  if (t < 64) digit_counts[t / 16][t % 16] = 0;
  cluster.barrier_arrive();  // waited for before any block touches another's shared memory

  const int64_t row_index = blockIdx.x / blocks;
  const int width = static_cast<int>(a.width);
  const T* row = a.in + row_index * a.width;
  const int misaligned = static_cast<int>(reinterpret_cast<uintptr_t>(row) % 16 / sizeof(T));
  const int head = misaligned == 0 ? 0 : kVec - misaligned;
  const int vectors = (width - head) / kVec;
  const int tail = head + vectors * kVec;
  const Vector* body = reinterpret_cast<const Vector*>(row + head);
  // The thread's j-th vector of the row.
  auto vector_index = [&](int j) {
    return (j * static_cast<int>(blocks) + static_cast<int>(rank)) * kClusterThreads + t;
  };
  Vector x[VECTORS];
#pragma unroll
  for (int j = 0; j < VECTORS; ++j) {
    const int v = vector_index(j);
    if (v < vectors) x[j] = body[v];
  }
  int scalar_column = -1;
  if (rank == 0 && t < head) scalar_column = t;
  if (rank == 0 && t >= 32 && t - 32 < width - tail) scalar_column = tail + t - 32;
  const T scalar = scalar_column >= 0 ? row[scalar_column] : T{};
  if (a.k == 1) {
    // The largest candidate: each warp's, then the block's (chosen as scratch), written to
    // the first block's shared memory, which takes the cluster's (a 64-bit atomic there would
    // land in the caller's own shared memory: sm_90 emulates it with local compare-and-swaps).
    uint64_t best = 0;  // below every candidate
#pragma unroll
    for (int j = 0; j < VECTORS; ++j) {
      const int v = vector_index(j);
      if (v >= vectors) continue;
#pragma unroll
      for (int e = 0; e < kVec; ++e)
        best = max(best, candidate(ordered_key(x[j].v[e], a.largest), head + v * kVec + e));
    }
    // Rows wider than the registers hold (k 1 only, launched with kClusterMaxVectors): the
    // rest read here.
#pragma unroll
    for (int j = VECTORS; j < (VECTORS == kClusterMaxVectors ? kClusterMaxVectorsK1 : VECTORS); ++j) {
      const int v = vector_index(j);
      if (v >= vectors) break;
      const Vector y = body[v];
#pragma unroll
      for (int e = 0; e < kVec; ++e) best = max(best, candidate(ordered_key(y.v[e], a.largest), head + v * kVec + e));
    }
    if (scalar_column >= 0) best = max(best, candidate(ordered_key(scalar, a.largest), scalar_column));
    auto warp_max = [&](uint64_t c) {
      const uint32_t high = __reduce_max_sync(0xffffffffu, static_cast<uint32_t>(c >> 32));
      const uint32_t low =
          __reduce_max_sync(0xffffffffu, static_cast<uint32_t>(c >> 32) == high ? static_cast<uint32_t>(c) : 0u);
      return (uint64_t{high} << 32) | low;
    };
    best = warp_max(best);
    if (lane == 0) chosen[warp] = best;
    __syncthreads();
    cluster.barrier_wait();
    if (warp == 0) {
      best = warp_max(chosen[lane]);
      if (lane == 0) *cluster.map_shared_rank(&block_tops[rank], 0) = best;
    }
    cluster.sync();
    if (rank == 0 && t == 0) {
      uint64_t top = 0;
      for (uint32_t r = 0; r < blocks; ++r) top = max(top, block_tops[r]);
      a.values[row_index] = candidate_element(top, row, a.largest);
      a.indices[row_index] = candidate_column(top);
    }
    return;
  }
  uint32_t sample[SAMPLE_PER_THREAD];
#pragma unroll
  for (int i = 0; i < SAMPLE_PER_THREAD; ++i) {
    sample[i] =
        ordered_key(row[int64_t{t + i * kClusterThreads} * width / (kClusterThreads * SAMPLE_PER_THREAD)], a.largest);
  }
  // Calls f(x, column) for each element the thread holds, read again from memory: the
  // halving's steps would otherwise keep every element's key live across them, and spill.
  auto for_each_element = [&](auto&& f) {
#pragma unroll 1
    for (int j = 0; j < VECTORS; ++j) {
      const int v = vector_index(j);
      if (v >= vectors) continue;
      const Vector y = body[v];
#pragma unroll
      for (int e = 0; e < kVec; ++e) f(y.v[e], head + v * kVec + e);
    }
    if (scalar_column >= 0) f(scalar, scalar_column);
  };

  // A float32 threshold to 16 bits (a bfloat16's): half the digits, a few more candidates.
  __syncthreads();  // digit_counts zeroed
  const uint32_t threshold =
      kth_largest_sample_key(sample, kKeyBits, static_cast<uint32_t>(a.sample_rank), digit_counts);
  // Calls f(candidate) for each element the thread holds that reaches the threshold: a whole
  // vector first tested by float compares, which pass a superset (NaN, -0 with +0).
  const float limit = threshold_value<T>(threshold, a.largest);
  auto for_each_candidate = [&](auto&& f) {
#pragma unroll
    for (int j = 0; j < VECTORS; ++j) {
      const int v = vector_index(j);
      if (v >= vectors || !may_reach(x[j].v, kVec, limit, a.largest)) continue;
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const uint32_t key = ordered_key(x[j].v[e], a.largest);
        if (key >= threshold) f(candidate(key, head + v * kVec + e));
      }
    }
    if (scalar_column >= 0) {
      const uint32_t key = ordered_key(scalar, a.largest);
      if (key >= threshold) f(candidate(key, scalar_column));
    }
  };
  uint32_t mine = 0, top_key = 0;
  for_each_candidate([&](uint64_t c) {
    ++mine;
    top_key = max(top_key, static_cast<uint32_t>(c >> 32));
  });
  top_key = __reduce_max_sync(0xffffffffu, top_key);
  uint32_t* const first_pool_count = cluster.map_shared_rank(&pool_count, 0);
  uint32_t* const first_pool_top_key = cluster.map_shared_rank(&pool_top_key, 0);
  uint64_t* const first_pool = cluster.map_shared_rank(pool, 0);
  cluster.barrier_wait();
  const uint32_t inclusive = warp_inclusive_sum(mine);
  const uint32_t warp_total = __shfl_sync(0xffffffffu, inclusive, 31);
  if (warp_total > 0) {
    uint32_t base = 0;
    if (lane == 31) {
      base = atomicAdd(first_pool_count, warp_total);
      atomicMax(first_pool_top_key, top_key);
    }
    uint32_t place = __shfl_sync(0xffffffffu, base, 31) + inclusive - mine;
    for_each_candidate([&](uint64_t c) {
      if (place < kPool) first_pool[place] = c;
      ++place;
    });
  }
  cluster.sync();  // the pool is complete

  const uint32_t k = static_cast<uint32_t>(a.k);
  const uint32_t pooled = *first_pool_count;
  const int column_bits = width > 1 ? 32 - __clz(width - 1) : 0;
  if (pooled >= k && pooled <= kPool) {
    // No block reads another's shared memory after this (its one read, the pool's count,
    // decides this branch). Relaxed: it publishes nothing, and the fence before a releasing
    // arrive held the first block's selection up to 2.7 K cycles (H100: the cluster's rows at
    // k > 1 in a median 0.95 of the time; docs/design/data/topk-cluster-phase-steps-h100.json).
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    if (rank == 0 && t < kSelectThreads) {
      uint64_t items[kPerSelector];
#pragma unroll
      for (int i = 0; i < kPerSelector; ++i) {
        const uint32_t slot = static_cast<uint32_t>(t + i * kSelectThreads);
        items[i] = slot < pooled ? pool[slot] : 0;  // 0: below every candidate
      }
      // The pool's keys lie between the threshold and its top key: the bits above the highest
      // where those two differ are every candidate's (e.g. 13 of a bfloat16's 16 over [-8, 8)).
      const uint32_t differing = threshold ^ pool_top_key;
      const int first_key_bit = 31 - __clz(differing);  // -1 where every key is the threshold
      const uint32_t known_key =
          first_key_bit < 0 ? threshold : threshold & ~static_cast<uint32_t>((uint64_t{2} << first_key_bit) - 1);
      int parity = 0;
      const uint64_t kth = kth_largest_candidate(known_key, first_key_bit, column_bits, k, [&](uint64_t c) {
        uint32_t reached = 0;
#pragma unroll
        for (int i = 0; i < kPerSelector; ++i) reached += items[i] >= c ? 1 : 0;
        return selectors_sum(reached, selector_sums, parity);
      });
#pragma unroll
      for (int i = 0; i < kPerSelector; ++i) {
        if (items[i] >= kth) chosen[atomicAdd(&chosen_count, 1u)] = items[i];
      }
    }
    cluster.barrier_wait();
  } else {
    // Each step a count across the cluster: a warp's sum, the block's, then every block's
    // written into each block's slot of this step's parity.
    int parity = 0;
    const uint64_t kth = kth_largest_candidate(0, kKeyBits - 1, column_bits, k, [&](uint64_t c) {
      uint32_t reached = 0;
      for_each_element(
          [&](T value, int column) { reached += candidate(ordered_key(value, a.largest), column) >= c ? 1 : 0; });
      reached = __reduce_add_sync(0xffffffffu, reached);
      if (lane == 0) warp_counts[warp] = reached;
      __syncthreads();
      if (warp == 0) {
        const uint32_t block_total = __reduce_add_sync(0xffffffffu, warp_counts[lane]);
        if (lane < static_cast<int>(blocks)) *cluster.map_shared_rank(&block_counts[parity][rank], lane) = block_total;
      }
      cluster.sync();
      uint32_t total = 0;
      for (uint32_t r = 0; r < blocks; ++r) total += block_counts[parity][r];
      parity ^= 1;
      return total;
    });
    uint32_t* const first_chosen_count = cluster.map_shared_rank(&chosen_count, 0);
    uint64_t* const first_chosen = cluster.map_shared_rank(chosen, 0);
    for_each_element([&](T value, int column) {
      const uint64_t c = candidate(ordered_key(value, a.largest), column);
      if (c >= kth) first_chosen[atomicAdd(first_chosen_count, 1u)] = c;
    });
    cluster.sync();  // the k are in the first block
  }
  if (rank != 0) return;
  __syncthreads();
  rank_sort(chosen, a.k, ranked, a.k);
  __syncthreads();
  T* values = a.values + row_index * a.k;
  int64_t* indices = a.indices + row_index * a.k;
  for (int i = t; i < a.k; i += kClusterThreads) {
    const int32_t column = candidate_column(ranked[i]);
    values[i] = row[column];
    indices[i] = column;
  }
#else
  __trap();
#endif
}

// Rows taken a cluster a row: `blocks` a cluster (0: not taken so), each thread holding
// `vectors` 16-byte vectors and `sample_per_thread` sample keys.
struct ClusterPlan {
  int blocks = 0;
  int vectors = 0;
  int sample_per_thread = 0;
  int sample_rank = 0;
};
int plan_cluster(int64_t rows, int64_t width, int64_t k, int64_t element_size, ClusterPlan* plan) {
  *plan = ClusterPlan{};
  if (k > kClusterMaxK || width < kClusterMinWidth) return cudaSuccess;
  const int64_t per_block = kClusterThreads * (16 / element_size);
  const int64_t blocks = std::min<int64_t>(kClusterMaxBlocks, (width + per_block - 1) / per_block);
  const int64_t vectors = (width + blocks * per_block - 1) / (blocks * per_block);
  // k 1, a maximum, takes the wide 16-bit rows too (H100: 1-12 rows of 100003-151936 in
  // 0.37-0.47 of the two launches' time; docs/design/data/topk-cluster-k1-h100.json).
  if (vectors > (k == 1 ? kClusterMaxVectorsK1 : kClusterMaxVectors) ||
      (element_size == 2 && vectors > 1 && k > 1 && k < kClusterMinKWide16Bit)) {
    return cudaSuccess;
  }
  // One block an SM (a block's 1024 threads take more than half its registers): beyond one
  // wave of clusters, rows take them only at k 1 or from kClusterMinKSecondWave, and while
  // rows x blocks fit the SMs (the second waves measured: 16 rows of 7-8 blocks, 32 of 4).
  int sms = 0;
  if (const int error = current_device_sms(&sms); error != cudaSuccess) return error;
  // Every instantiation takes 1024 threads, at most 64 registers and the same shared memory.
  const int resident = resident_clusters<topk_cluster_rows<float, 1, kPerThread>, kClusterThreads, kClusterMaxBlocks>(
      static_cast<int>(blocks));
  if (resident == 0 || (rows > resident && (rows * blocks > sms || (k > 1 && k < kClusterMinKSecondWave)))) {
    return cudaSuccess;
  }
  // The sample holds about `expected` of the row's k largest (Poisson): a rank 3 standard
  // deviations and 5 above it leaves fewer than k reaching the threshold in about one row in
  // 10^5 or fewer; the elements reaching it, rank / sample of the row (a Beta), are to fit the
  // pool 4 standard deviations out with a quarter of it left for the threshold's ties.
  // A denser sample reads and counts twice the keys, so only where the sparser one's would
  // overflow the pool: rows of more than one vector a thread (the sparser one fits rows of
  // one at every k up to kClusterMaxK).
  for (const int per_thread : {kPerThread, kDenseSamplePerThread}) {
    if (per_thread == kDenseSamplePerThread && vectors == 1) break;
    const double sample = kClusterThreads * per_thread;
    const double expected = static_cast<double>(k) * sample / static_cast<double>(width);
    const double rank = std::min<double>(std::ceil(expected + 3 * std::sqrt(expected)) + 5, sample);
    const double reaching = rank / (sample + 1) * static_cast<double>(width);
    if (reaching * (1 + 4 / std::sqrt(rank)) <= 0.75 * kPool) {
      plan->blocks = static_cast<int>(blocks);
      plan->vectors = static_cast<int>(vectors);
      plan->sample_per_thread = per_thread;
      plan->sample_rank = static_cast<int>(rank);
      return cudaSuccess;
    }
  }
  return cudaSuccess;
}

template <class T, int VECTORS, int SAMPLE_PER_THREAD>
int launch_cluster_rows(const ClusterTopkArgs<T>& args, int64_t rows, int blocks, cudaStream_t stream) {
  const ClusterLaunch launch(rows, blocks, kClusterThreads, stream);
  return static_cast<int>(cudaLaunchKernelEx(&launch.config, topk_cluster_rows<T, VECTORS, SAMPLE_PER_THREAD>, args));
}

// Rows too few to fill the GPU a block a row are split into slices of a block each (at
// least kSample columns), and a second launch selects each row's k from its slices' (at
// most kSample of them: the whole-row path). Where every SM has a row already, only rows
// wider than kWidestWholeRowOnBusySms: the split's merge costs more than a second block an
// SM saves on narrower rows (H100 and H200, 192-256 rows, docs/design/backward-and-topk.md:
// two slices 0.80-1.09x at 50257-131072 wide, 0.95-1.71x at 151936-262144).
struct Split {
  int slices = 1;
  int64_t slice_width = 0;
};
constexpr int64_t kWidestWholeRowOnBusySms = int64_t{1} << 17;
int plan_split(int64_t rows, int64_t width, int64_t k, Split* split) {
  split->slices = 1;
  split->slice_width = width;
  int sms = 0;
  if (const int error = current_device_sms(&sms); error != cudaSuccess) return error;
  if (rows >= sms && width <= kWidestWholeRowOnBusySms) return cudaSuccess;
  const int64_t resident = int64_t{sms} * kBlocksPerSm;
  const int64_t slices = std::min({resident / rows, width / kSample, int64_t{kSample} / k});
  if (slices < 2) return cudaSuccess;
  // Each slice holds at least k columns: the last one, the shortest, at least
  // width / slices - slices + 1 >= kSample - kSample / k + 1.
  split->slices = static_cast<int>(slices);
  split->slice_width = (width + slices - 1) / slices;
  return cudaSuccess;
}
// The workspace of a split: each slice's k values and their columns.
template <class T>
int64_t split_bytes(int64_t rows, int64_t k, const Split& split) {
  return split.slices == 1 ? 0 : rows * split.slices * k * static_cast<int64_t>(sizeof(int64_t) + sizeof(T));
}

// Sets `taken` where the arg-extreme kernel runs k 1 largest: where no cluster does, and
// not on fewer rows than SMs wider than kArgExtremeMaxWidthFewRows.
int arg_extreme_takes(int64_t rows, int64_t width, int64_t k, int largest, bool* taken) {
  *taken = false;
  if (k != 1 || largest == 0) return cudaSuccess;
  int sms = 0;
  if (const int error = current_device_sms(&sms); error != cudaSuccess) return error;
  *taken = rows >= sms || width <= kArgExtremeMaxWidthFewRows;
  return cudaSuccess;
}

int check_arguments(int64_t rows, int64_t width, int64_t k) {
  if (k < 1 || k > NATIVE_OPS_TOPK_MAX_K || k > width || width >= (int64_t{1} << 31) || rows > 0x7fffffff) {
    return static_cast<int>(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_topk_workspace(int dtype, int largest, int64_t rows, int64_t width, int64_t k,
                                                         int64_t* bytes) {
  using namespace native_ops::cuda;
  *bytes = 0;
  if (const int error = check_arguments(rows, width, k); error != cudaSuccess || rows == 0) return error;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    ClusterPlan cluster;
    if (const int error = plan_cluster(rows, width, k, sizeof(T), &cluster); error != cudaSuccess) return error;
    if (cluster.blocks > 0) return static_cast<int>(cudaSuccess);
    bool arg_extreme = false;
    if (const int error = arg_extreme_takes(rows, width, k, largest, &arg_extreme);
        error != cudaSuccess || arg_extreme) {
      return error;
    }
    Split split;
    const int error = plan_split(rows, width, k, &split);
    *bytes = split_bytes<T>(rows, k, split);
    return error;
  });
}

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_topk_rows(int dtype, int largest, const void* in, void* values,
                                                    int64_t* indices, int64_t rows, int64_t width, int64_t k,
                                                    void* workspace, int64_t workspace_bytes, void* stream) {
  using namespace native_ops::cuda;
  if (const int error = check_arguments(rows, width, k); error != cudaSuccess || rows == 0) return error;
  auto* cuda_stream = static_cast<cudaStream_t>(stream);
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    const int selected = static_cast<int>(k);
    ClusterPlan cluster;
    if (const int error = plan_cluster(rows, width, k, sizeof(T), &cluster); error != cudaSuccess) return error;
    if (cluster.blocks > 0) {
      const ClusterTopkArgs<T> args{static_cast<const T*>(in),
                                    static_cast<T*>(values),
                                    indices,
                                    width,
                                    selected,
                                    cluster.sample_rank,
                                    largest != 0};
      const bool dense = cluster.sample_per_thread == kDenseSamplePerThread;
      switch (cluster.vectors) {
        case 1: return launch_cluster_rows<T, 1, kPerThread>(args, rows, cluster.blocks, cuda_stream);
        case 2:
          return dense ? launch_cluster_rows<T, 2, kDenseSamplePerThread>(args, rows, cluster.blocks, cuda_stream)
                       : launch_cluster_rows<T, 2, kPerThread>(args, rows, cluster.blocks, cuda_stream);
        default:
          return dense
                     ? launch_cluster_rows<T, kClusterMaxVectors, kDenseSamplePerThread>(args, rows, cluster.blocks,
                                                                                         cuda_stream)
                     : launch_cluster_rows<T, kClusterMaxVectors, kPerThread>(args, rows, cluster.blocks, cuda_stream);
      }
    }
    bool arg_extreme = false;
    if (const int error = arg_extreme_takes(rows, width, k, largest, &arg_extreme); error != cudaSuccess) return error;
    if (arg_extreme) return native_ops_cuda_arg_extreme_rows(dtype, largest, in, values, indices, rows, width, stream);
    Split split;
    if (const int error = plan_split(rows, width, k, &split); error != cudaSuccess) return error;
    if (split.slices == 1) {
      const TopkArgs<T> args{static_cast<const T*>(in),
                             static_cast<T*>(values),
                             indices,
                             nullptr,
                             width,
                             width,
                             1,
                             selected,
                             largest != 0};
      topk_rows<T><<<static_cast<unsigned>(rows), kThreads, 0, cuda_stream>>>(args);
      return static_cast<int>(cudaGetLastError());
    }
    if (workspace == nullptr || workspace_bytes < split_bytes<T>(rows, k, split)) {
      return static_cast<int>(cudaErrorInvalidValue);
    }
    const int64_t merged = int64_t{split.slices} * k;  // a row's candidates from its slices
    auto* slice_columns = static_cast<int64_t*>(workspace);
    auto* slice_values = reinterpret_cast<T*>(slice_columns + rows * merged);
    const TopkArgs<T> slices{static_cast<const T*>(in), slice_values, slice_columns, nullptr,     width,
                             split.slice_width,         split.slices, selected,      largest != 0};
    topk_rows<T><<<static_cast<unsigned>(rows * split.slices), kThreads, 0, cuda_stream>>>(slices);
    const TopkArgs<T> merge{slice_values, static_cast<T*>(values), indices, slice_columns, merged, merged, 1, selected,
                            largest != 0};
    topk_rows<T><<<static_cast<unsigned>(rows), kThreads, 0, cuda_stream>>>(merge);
    return static_cast<int>(cudaGetLastError());
  });
}
