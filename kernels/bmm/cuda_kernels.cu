// bmm with an inner dimension of 1 on the GPU: out[b, i, j] = a[b, i] * m[b, j]. All the
// cost is writing the output, so each thread keeps its slice of m[b] in registers and
// writes 16 contiguous bytes to each of several rows; cuBLAS treats the product as a
// general GEMM and reaches about a quarter of the write bandwidth.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda_common.cuh"

namespace native_ops::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRowsPerThread = 16;  // the slice of m and the index arithmetic serve 16 rows

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

// A block covers rows_per_pass * kRowsPerThread rows of one batch entry; within a pass,
// threads_per_row consecutive threads (a power of two) write consecutive vectors of a row.
template <class T, int VEC>
__global__ void __launch_bounds__(kThreads)
    outer_product(const T* __restrict__ a, int64_t a_batch_stride, int64_t a_row_stride, const T* __restrict__ m,
                  int64_t m_batch_stride, int64_t m_col_stride, T* __restrict__ out, int64_t rows, int64_t cols,
                  int64_t tiles_per_batch, int log2_threads_per_row, bool m_vectorised) {
  const int threads_per_row = 1 << log2_threads_per_row;
  const int rows_per_pass = kThreads >> log2_threads_per_row;
  const int lane = threadIdx.x & (threads_per_row - 1);
  const int sub_row = threadIdx.x >> log2_threads_per_row;
  const int64_t tile = blockIdx.x;
  const int64_t b = tile / tiles_per_batch;  // one division per thread, for all its rows
  const int64_t first_row = (tile - b * tiles_per_batch) * rows_per_pass * kRowsPerThread;
  const int64_t col = (int64_t{blockIdx.y} * threads_per_row + lane) * VEC;
  if (col >= cols) return;
  const int n = static_cast<int>(min(int64_t{VEC}, cols - col));

  const T* m_row = m + b * m_batch_stride;
  Vec<T, VEC> slice;
  if (VEC > 1 && m_vectorised && n == VEC) {
    slice = *reinterpret_cast<const Vec<T, VEC>*>(m_row + col);
  } else {
#pragma unroll
    for (int k = 0; k < VEC; ++k) slice.v[k] = k < n ? m_row[(col + k) * m_col_stride] : from_float<T>(0.f);
  }

#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int64_t i = first_row + int64_t{r} * rows_per_pass + sub_row;
    if (i >= rows) break;
    const T scale = a[b * a_batch_stride + i * a_row_stride];
    T* target = out + (b * rows + i) * cols + col;
    if (VEC > 1 && n == VEC) {
      *reinterpret_cast<Vec<T, VEC>*>(target) = scaled(scale, slice);
    } else {
      for (int k = 0; k < n; ++k) target[k] = from_float<T>(to_float(scale) * to_float(slice.v[k]));
    }
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
  const int64_t vectors_per_row = (cols + VEC - 1) / VEC;
  const int log2_threads_per_row = std::min(log2_ceil(vectors_per_row), 8);  // at most kThreads
  const int64_t rows_per_tile = int64_t{kThreads >> log2_threads_per_row} * kRowsPerThread;
  const int64_t tiles_per_batch = (rows + rows_per_tile - 1) / rows_per_tile;
  const int64_t column_blocks = (vectors_per_row + (1 << log2_threads_per_row) - 1) >> log2_threads_per_row;
  if (batch * tiles_per_batch > 0x7fffffff || column_blocks > 65535) return static_cast<int>(cudaErrorInvalidValue);
  const dim3 grid(static_cast<unsigned>(batch * tiles_per_batch), static_cast<unsigned>(column_blocks));
  // m's rows load as 16-byte vectors when they are unit-stride and 16-byte aligned.
  const bool m_vectorised = m_col_stride == 1 && (m_batch_stride * sizeof(T)) % 16 == 0 &&
                            reinterpret_cast<uintptr_t>(m) % 16 == 0;
  outer_product<T, VEC><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(a), a_batch_stride, a_row_stride,
                                                        static_cast<const T*>(m), m_batch_stride, m_col_stride,
                                                        static_cast<T*>(out), rows, cols, tiles_per_batch,
                                                        log2_threads_per_row, m_vectorised);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace
}  // namespace native_ops::cuda

extern "C" __attribute__((visibility("default"))) int native_ops_cuda_outer_product(
    int dtype, const void* a, int64_t a_batch_stride, int64_t a_row_stride, const void* m, int64_t m_batch_stride,
    int64_t m_col_stride, void* out, int64_t batch, int64_t rows, int64_t cols, void* stream) {
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

extern "C" __attribute__((visibility("default"))) const char* native_ops_cuda_error_string(int error) {
  return cudaGetErrorString(static_cast<cudaError_t>(error));
}
