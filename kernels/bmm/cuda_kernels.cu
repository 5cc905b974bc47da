// bmm with an inner dimension of 1 on the GPU: out[b, i, j] = a[b, i] * m[b, j]. All the
// cost is writing the output, so each thread keeps its slice of m[b] in registers and
// writes 16 contiguous bytes to each of several rows; cuBLAS treats the product as a
// general GEMM and reaches about a quarter of the write bandwidth.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda_abi.h"
#include "dsls/cuda/common.cuh"

namespace native_ops::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kRowsPerThread = 4;  // the slice of m and the index arithmetic serve 4 rows

// scale * m, elementwise, rounded once to T. 16-bit types multiply in pairs: the exact
// product of two 16-bit values rounded to 16 bits is what the float route gives too.
template <class T, int VEC>
__device__ __forceinline__ Vec<T, VEC> scaled(T scale, const Vec<T, VEC>& m) {
  Vec<T, VEC> result;
  if constexpr (sizeof(T) == 2 && VEC % 2 == 0) {
    using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    const Pair scales{scale, scale};
    const Pair* pairs = reinterpret_cast<const Pair*>(m.v);
    Pair* out = reinterpret_cast<Pair*>(result.v);
#pragma unroll
    for (int k = 0; k < VEC / 2; ++k) out[k] = __hmul2(scales, pairs[k]);
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k) result.v[k] = from_float<T>(to_float(scale) * to_float(m.v[k]));
  }
  return result;
}

// A block covers rows_per_pass * kRowsPerThread rows of a batch entry, and at most a warp's
// worth of vectors of each (Triton's tile for this product, kernels/bmm/triton.py): within a
// pass, threads_per_row consecutive threads (a power of two, at most 32) write consecutive
// vectors of a row. Blocks run through one batch entry's tiles, row tiles first (x is the
// column block * row_tiles + the row tile), before the next entry's (z, and a loop past
// 65535 entries), so that the writes in flight at any time cover a few MB of the output
// rather than a slice of every row of it. Blocks of whole rows, and streaming stores, ran
// slower (docs/design/history.md).
template <class T, int VEC>
__global__ void __launch_bounds__(kThreads)
    outer_product(const T* __restrict__ a, int64_t a_batch_stride, int64_t a_row_stride, const T* __restrict__ m,
                  int64_t m_batch_stride, int64_t m_col_stride, T* __restrict__ out, int64_t batch, int64_t rows,
                  int64_t cols, unsigned row_tiles, int log2_threads_per_row, bool m_vectorised) {
  const int threads_per_row = 1 << log2_threads_per_row;
  const int rows_per_pass = kThreads >> log2_threads_per_row;
  const int lane = threadIdx.x & (threads_per_row - 1);
  const int sub_row = threadIdx.x >> log2_threads_per_row;
  const unsigned column_block = blockIdx.x / row_tiles;
  const int64_t first_row = int64_t{blockIdx.x - column_block * row_tiles} * rows_per_pass * kRowsPerThread;
  const int64_t col = (int64_t{column_block} * threads_per_row + lane) * VEC;
  if (col >= cols) return;
  const int n = static_cast<int>(min(int64_t{VEC}, cols - col));

  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const T* m_row = m + b * m_batch_stride;
    Vec<T, VEC> slice;
    if (VEC > 1 && m_vectorised && n == VEC) {
      slice = *reinterpret_cast<const Vec<T, VEC>*>(m_row + col);
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) slice.v[k] = k < n ? m_row[(col + k) * m_col_stride] : from_float<T>(0.f);
    }
    T scales[kRowsPerThread];  // all loaded before the first store
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int64_t i = first_row + int64_t{r} * rows_per_pass + sub_row;
      scales[r] = i < rows ? a[b * a_batch_stride + i * a_row_stride] : from_float<T>(0.f);
    }
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int64_t i = first_row + int64_t{r} * rows_per_pass + sub_row;
      if (i >= rows) break;
      T* target = out + (b * rows + i) * cols + col;
      if constexpr (VEC > 1) {
        if (n == VEC) {
          *reinterpret_cast<Vec<T, VEC>*>(target) = scaled(scales[r], slice);
          continue;
        }
      }
#pragma unroll
      for (int k = 0; k < VEC; ++k) {  // static indices keep the slice in registers
        if (k < n) target[k] = from_float<T>(to_float(scales[r]) * to_float(slice.v[k]));
      }
    }
  }
}

// The tile above where it divides the output exactly (rows a multiple of its 16, each row a
// whole number of warps' vectors, m's rows vectorised, a batch entry under 2^31 elements, at
// most 65535 entries, one to a z of the grid): no edge tests, no batch loop, and 32-bit
// offsets within a batch entry, which leave fewer instructions between a block's four
// stores (docs/design/history.md).
constexpr int kWarps = kThreads / 32;
constexpr int kFullTileRows = kWarps * kRowsPerThread;

template <class T, int VEC>
__global__ void __launch_bounds__(kThreads)
    outer_product_full_tiles(const T* __restrict__ a, int64_t a_batch_stride, int64_t a_row_stride,
                             const T* __restrict__ m, int64_t m_batch_stride, T* __restrict__ out, int rows, int cols) {
  const int lane = threadIdx.x % 32;
  const int first_row = blockIdx.x * kFullTileRows + threadIdx.x / 32;  // then every kWarps-th row
  const int col = (blockIdx.y * 32 + lane) * VEC;
  const T* a_entry = a + blockIdx.z * a_batch_stride;
  T* out_entry = out + int64_t{blockIdx.z} * rows * cols;
  const Vec<T, VEC> slice = *reinterpret_cast<const Vec<T, VEC>*>(m + blockIdx.z * m_batch_stride + col);
  T scales[kRowsPerThread];  // all loaded before the first store
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) scales[r] = a_entry[(first_row + r * kWarps) * a_row_stride];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    *reinterpret_cast<Vec<T, VEC>*>(out_entry + (first_row + r * kWarps) * cols + col) = scaled(scales[r], slice);
  }
}

int log2_ceil(int64_t x) {
  int log = 0;
  while ((int64_t{1} << log) < x) ++log;
  return log;
}

template <class T, int VEC>
int launch(const void* a, int64_t a_batch_stride, int64_t a_row_stride, const void* m, int64_t m_batch_stride,
           int64_t m_col_stride, void* out, int64_t batch, int64_t rows, int64_t cols, cudaStream_t stream) {
  // m's rows load as 16-byte vectors when they are unit-stride and 16-byte aligned.
  const bool m_vectorised =
      m_col_stride == 1 && (m_batch_stride * sizeof(T)) % 16 == 0 && reinterpret_cast<uintptr_t>(m) % 16 == 0;
  if (VEC > 1 && m_vectorised && rows % kFullTileRows == 0 && cols % (32 * VEC) == 0 && rows * cols <= 0x7fffffff &&
      batch <= 65535 && cols / (32 * VEC) <= 65535) {
    const dim3 grid(static_cast<unsigned>(rows / kFullTileRows), static_cast<unsigned>(cols / (32 * VEC)),
                    static_cast<unsigned>(batch));
    outer_product_full_tiles<T, VEC><<<grid, kThreads, 0, stream>>>(
        static_cast<const T*>(a), a_batch_stride, a_row_stride, static_cast<const T*>(m), m_batch_stride,
        static_cast<T*>(out), static_cast<int>(rows), static_cast<int>(cols));
    return static_cast<int>(cudaGetLastError());
  }
  const int64_t vectors_per_row = (cols + VEC - 1) / VEC;
  const int log2_threads_per_row = std::min(log2_ceil(vectors_per_row), 5);  // at most a warp
  const int64_t rows_per_tile = int64_t{kThreads >> log2_threads_per_row} * kRowsPerThread;
  const int64_t row_tiles = (rows + rows_per_tile - 1) / rows_per_tile;
  const int64_t column_blocks = (vectors_per_row + (1 << log2_threads_per_row) - 1) >> log2_threads_per_row;
  if (row_tiles * column_blocks > 0x7fffffff) return static_cast<int>(cudaErrorInvalidValue);
  const unsigned batch_blocks = static_cast<unsigned>(std::min<int64_t>(batch, 65535));  // z; blocks loop past it
  const dim3 grid(static_cast<unsigned>(row_tiles * column_blocks), 1, batch_blocks);
  outer_product<T, VEC><<<grid, kThreads, 0, stream>>>(
      static_cast<const T*>(a), a_batch_stride, a_row_stride, static_cast<const T*>(m), m_batch_stride, m_col_stride,
      static_cast<T*>(out), batch, rows, cols, static_cast<unsigned>(row_tiles), log2_threads_per_row, m_vectorised);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_outer_product(int dtype, const void* a, int64_t a_batch_stride,
                                                        int64_t a_row_stride, const void* m, int64_t m_batch_stride,
                                                        int64_t m_col_stride, void* out, int64_t batch, int64_t rows,
                                                        int64_t cols, void* stream) {
  using namespace native_ops::cuda;
  if (batch == 0 || rows == 0 || cols == 0) return cudaSuccess;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    // 16-byte stores need every output row to start 16-byte aligned.
    auto* const run = cols % kVec == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0 ? &launch<T, kVec> : &launch<T, 1>;
    return run(a, a_batch_stride, a_row_stride, m, m_batch_stride, m_col_stride, out, batch, rows, cols,
               static_cast<cudaStream_t>(stream));
  });
}
