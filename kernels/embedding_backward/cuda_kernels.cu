// embedding_dense_backward on the GPU, after a stable sort of the indices (cuda.cpp): a warp
// a weight row finds the row's segment of the sorted indices (a 32-way search: three probes
// of the L2 for 16384 indices), then sums the gradient rows at the segment's positions in
// position order, in float, a few 16-byte vectors a lane at a time, and writes the row once
// (zeros where the segment is empty). Each gradient element is read once and each weight
// element written once; no atomics, so every run gives the same bits. float32 sums are
// compensated (Kahan): a plain float sum of a long segment (thousands of rows of one index)
// drifts further from the exact sum than aten's partial sums do.
#include <cstdint>
#include <type_traits>

#include "cuda_abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;
// 16-byte vectors a lane sums at once: a lane's loads in flight a gradient row (more held
// more registers than the rows' loads need).
constexpr int kUnroll = 4;

template <class T, class Index>
struct EmbeddingBackwardArgs {
  const T* grad;
  const Index* sorted;
  const int64_t* positions;
  int64_t count;
  int64_t num_weights;
  int64_t width;
  int64_t padding_idx;
  bool scale_by_freq;
  T* grad_weight;
};

// The first i in [0, n) with sorted[i] >= key (n if none), found by the whole warp: each
// round 32 lanes probe evenly spaced elements and a ballot keeps the one gap that holds it.
template <class Index>
__device__ __forceinline__ int64_t lower_bound(const Index* sorted, int64_t n, int64_t key, int lane) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t step = (hi - lo + 31) / 32;
    const int64_t probe = lo + lane * step;
    const bool below = probe < hi && static_cast<int64_t>(sorted[probe]) < key;
    const int below_count = __popc(__ballot_sync(0xffffffffu, below));
    if (below_count == 0) return lo;
    const int64_t last_below = lo + (below_count - 1) * step;
    hi = min(hi, last_below + step);
    lo = last_below + 1;
  }
  return lo;
}

template <class T, class Index, int VEC>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) embedding_backward_rows(EmbeddingBackwardArgs<T, Index> a) {
  using Vector = Vec<T, VEC>;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= a.num_weights) return;
  const int64_t vectors = a.width / VEC;
  Vector* out = reinterpret_cast<Vector*>(a.grad_weight + row * a.width);
  int64_t begin = 0, end = 0;
  if (row != a.padding_idx) {
    begin = lower_bound(a.sorted, a.count, row, lane);
    end = lower_bound(a.sorted, a.count, row + 1, lane);
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
      const Vector* in = reinterpret_cast<const Vector*>(a.grad + a.positions[i] * a.width);
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

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_embedding_backward(int dtype, int index_bytes, const void* grad,
                                                             const void* sorted_indices, const int64_t* positions,
                                                             int64_t count, int64_t num_weights, int64_t width,
                                                             int64_t padding_idx, int scale_by_freq, void* grad_weight,
                                                             void* stream) {
  using namespace native_ops::cuda;
  if (num_weights <= 0 || (index_bytes != 4 && index_bytes != 8)) return static_cast<int>(cudaErrorInvalidValue);
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    if (width <= 0 || width % kVec != 0) return static_cast<int>(cudaErrorInvalidValue);
    const int64_t blocks = (num_weights + kWarpsPerBlock - 1) / kWarpsPerBlock;
    if (blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidValue);
    auto launch = [&](auto index) {
      using Index = decltype(index);
      const EmbeddingBackwardArgs<T, Index> args{static_cast<const T*>(grad),
                                                 static_cast<const Index*>(sorted_indices),
                                                 positions,
                                                 count,
                                                 num_weights,
                                                 width,
                                                 padding_idx,
                                                 scale_by_freq != 0,
                                                 static_cast<T*>(grad_weight)};
      embedding_backward_rows<T, Index, kVec>
          <<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(args);
      return static_cast<int>(cudaGetLastError());
    };
    return index_bytes == 4 ? launch(int32_t{}) : launch(int64_t{});
  });
}
