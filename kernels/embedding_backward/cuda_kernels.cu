// embedding_dense_backward on the GPU. The indices are sorted first, with their positions,
// by a stable radix sort over only the bits a weight row's number takes (cub's; an index
// outside [0, num_weights) is sorted as num_weights, after every row): 17-18 bits of a
// vocabulary are three 8-bit passes where aten's sort of the int64 indices (at::sort) runs
// eight. A thread a weight row then finds where the row's segment of the sorted indices
// starts (a binary search, all rows at once), and a warp a weight row sums the gradient rows
// at its segment's positions in position order, in float, a few 16-byte vectors a lane at
// a time, and writes the row once (zeros where the segment is empty): a warp's chain of
// dependent loads is a start, a position and a gradient row, where a search of its own took
// eight rounds of probes of the L2 at 65536 indices. Each gradient element is read once and
// each weight element written once; no atomics, so every run gives the same bits. float32
// sums are compensated (Kahan): a plain float sum of a long segment (thousands of rows of
// one index) drifts further from the exact sum than aten's partial sums do.
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <type_traits>

#include "cuda_abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
// 16-byte vectors a lane sums at once: a lane's loads in flight a gradient row (more held
// more registers than the rows' loads need).
constexpr int kUnroll = 4;

template <class T>
struct EmbeddingBackwardArgs {
  const T* grad;
  const uint32_t* starts;  // row w's segment of positions: [starts[w], starts[w + 1])
  const uint32_t* positions;
  int64_t count;
  int64_t num_weights;
  int64_t width;
  int64_t padding_idx;
  bool scale_by_freq;
  T* grad_weight;
};

// The sort's input: each index as its key (num_weights where it names no row, so that it
// sorts after every row), and its position.
template <class Index>
__global__ void sort_keys(const Index* indices, int64_t count, int64_t num_weights, uint32_t* keys,
                          uint32_t* positions) {
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t index = static_cast<int64_t>(indices[i]);
  keys[i] = static_cast<uint32_t>(index >= 0 && index < num_weights ? index : num_weights);
  positions[i] = static_cast<uint32_t>(i);
}

// starts[w] for w in [0, num_weights]: the first i with keys[i] >= w (count if none).
__global__ void segment_starts(const uint32_t* keys, int64_t count, int64_t num_weights, uint32_t* starts) {
  const int64_t row = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (row > num_weights) return;
  int64_t lo = 0, hi = count;
  while (lo < hi) {
    const int64_t middle = lo + (hi - lo) / 2;
    if (keys[middle] < row) {
      lo = middle + 1;
    } else {
      hi = middle;
    }
  }
  starts[row] = static_cast<uint32_t>(lo);
}

template <class T, int VEC>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) embedding_backward_rows(EmbeddingBackwardArgs<T> a) {
  using Vector = Vec<T, VEC>;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= a.num_weights) return;
  const int64_t vectors = a.width / VEC;
  Vector* out = reinterpret_cast<Vector*>(a.grad_weight + row * a.width);
  int64_t begin = 0, end = 0;
  if (row != a.padding_idx && a.count > 0) {
    begin = a.starts[row];
    end = a.starts[row + 1];
  }
  if (begin == end) {
    Vector zero;
#pragma unroll
    for (int k = 0; k < VEC; ++k) zero.v[k] = from_float<T>(0.f);
    for (int64_t v = lane; v < vectors; v += 32) out[v] = zero;
    return;
  }
  const float scale = a.scale_by_freq ? 1.f / static_cast<float>(end - begin) : 1.f;
  for (int64_t first = lane; first < vectors; first += 32 * kUnroll) {
    constexpr bool kCompensated = std::is_same_v<T, float>;
    float sum[kUnroll][VEC] = {};
    float lost[kCompensated ? kUnroll : 1][VEC] = {};  // what each float32 sum has rounded away
    for (int64_t i = begin; i < end; ++i) {
      const Vector* in = reinterpret_cast<const Vector*>(a.grad + int64_t{a.positions[i]} * a.width);
      Vector g[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {  // every load issued before the first use
        if (first + u * 32 < vectors) g[u] = in[first + u * 32];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          if constexpr (kCompensated) {
            const float term = to_float(g[u].v[k]) - lost[u][k];
            const float next = sum[u][k] + term;
            lost[u][k] = isfinite(next) ? (next - sum[u][k]) - term : 0.f;  // an inf stays an inf, not NaN
            sum[u][k] = next;
          } else {
            sum[u][k] += to_float(g[u].v[k]);
          }
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (first + u * 32 >= vectors) continue;
      Vector result;
#pragma unroll
      for (int k = 0; k < VEC; ++k) result.v[k] = from_float<T>(sum[u][k] * scale);
      out[first + u * 32] = result;
    }
  }
}

constexpr int kSortThreads = 256;
constexpr int64_t kAlignment = 256;

constexpr int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// The bits of a key: enough for num_weights, the key of an index that names no row.
int key_bits(int64_t num_weights) { return 64 - __builtin_clzll(static_cast<unsigned long long>(num_weights)); }

// The workspace: keys and positions before and after the sort (count each), the segments'
// starts (num_weights + 1), all 32-bit, then cub's temporary storage. 32-bit keys and
// positions where aten sorts int64: half the bytes a pass, and up to 4864 keys cub sorts in
// one kernel (its single tile, 256 threads of 19 keys) where it took 2304 int64 keys.
struct SortWorkspace {
  uint32_t* keys_in;
  uint32_t* positions_in;
  uint32_t* keys;
  uint32_t* positions;
  uint32_t* starts;
  void* cub_storage;
  size_t cub_bytes;
};

int sort_workspace(int64_t count, int64_t num_weights, char* base, SortWorkspace* layout, int64_t* bytes) {
  const int64_t array = aligned(count * static_cast<int64_t>(sizeof(uint32_t)));
  size_t cub_bytes = 0;
  const cudaError_t error = cub::DeviceRadixSort::SortPairs(
      nullptr, cub_bytes, static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr),
      static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), count, 0, key_bits(num_weights));
  if (error != cudaSuccess) return static_cast<int>(error);
  const int64_t starts = aligned((num_weights + 1) * static_cast<int64_t>(sizeof(uint32_t)));
  *bytes = 4 * array + starts + static_cast<int64_t>(cub_bytes);
  if (layout != nullptr) {
    *layout = {reinterpret_cast<uint32_t*>(base),
               reinterpret_cast<uint32_t*>(base + array),
               reinterpret_cast<uint32_t*>(base + 2 * array),
               reinterpret_cast<uint32_t*>(base + 3 * array),
               reinterpret_cast<uint32_t*>(base + 4 * array),
               base + 4 * array + starts,
               cub_bytes};
  }
  return cudaSuccess;
}

bool valid_sizes(int index_bytes, int64_t count, int64_t num_weights) {
  return count >= 0 && count <= NATIVE_OPS_EMBEDDING_BACKWARD_MAX_ROWS && num_weights > 0 &&
         num_weights <= NATIVE_OPS_EMBEDDING_BACKWARD_MAX_ROWS && (index_bytes == 4 || index_bytes == 8);
}

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_embedding_backward_workspace(int index_bytes, int64_t count,
                                                                       int64_t num_weights, int64_t* bytes) {
  using namespace native_ops::cuda;
  *bytes = 0;
  if (!valid_sizes(index_bytes, count, num_weights)) return static_cast<int>(cudaErrorInvalidValue);
  return count == 0 ? cudaSuccess : sort_workspace(count, num_weights, nullptr, nullptr, bytes);
}

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_embedding_backward(int dtype, int index_bytes, const void* grad,
                                                             const void* indices, int64_t count, int64_t num_weights,
                                                             int64_t width, int64_t padding_idx, int scale_by_freq,
                                                             void* grad_weight, void* workspace,
                                                             int64_t workspace_bytes, void* stream) {
  using namespace native_ops::cuda;
  if (!valid_sizes(index_bytes, count, num_weights)) return static_cast<int>(cudaErrorInvalidValue);
  auto* cuda_stream = static_cast<cudaStream_t>(stream);
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    if (width <= 0 || width % kVec != 0) return static_cast<int>(cudaErrorInvalidValue);
    SortWorkspace sorted{};
    if (count > 0) {
      int64_t needed = 0;
      if (const int error = sort_workspace(count, num_weights, static_cast<char*>(workspace), &sorted, &needed);
          error != cudaSuccess) {
        return error;
      }
      if (workspace == nullptr || workspace_bytes < needed) return static_cast<int>(cudaErrorInvalidValue);
      const auto blocks = static_cast<unsigned>((count + kSortThreads - 1) / kSortThreads);
      if (index_bytes == 4) {
        sort_keys<<<blocks, kSortThreads, 0, cuda_stream>>>(static_cast<const int32_t*>(indices), count, num_weights,
                                                            sorted.keys_in, sorted.positions_in);
      } else {
        sort_keys<<<blocks, kSortThreads, 0, cuda_stream>>>(static_cast<const int64_t*>(indices), count, num_weights,
                                                            sorted.keys_in, sorted.positions_in);
      }
      const cudaError_t error = cub::DeviceRadixSort::SortPairs(sorted.cub_storage, sorted.cub_bytes, sorted.keys_in,
                                                                sorted.keys, sorted.positions_in, sorted.positions,
                                                                count, 0, key_bits(num_weights), cuda_stream);
      if (error != cudaSuccess) return static_cast<int>(error);
      segment_starts<<<static_cast<unsigned>((num_weights + kSortThreads) / kSortThreads), kSortThreads, 0,
                       cuda_stream>>>(sorted.keys, count, num_weights, sorted.starts);
    }
    const int64_t blocks = (num_weights + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const EmbeddingBackwardArgs<T> args{static_cast<const T*>(grad),
                                        sorted.starts,
                                        sorted.positions,
                                        count,
                                        num_weights,
                                        width,
                                        padding_idx,
                                        scale_by_freq != 0,
                                        static_cast<T*>(grad_weight)};
    embedding_backward_rows<T, kVec><<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, cuda_stream>>>(args);
    return static_cast<int>(cudaGetLastError());
  });
}
