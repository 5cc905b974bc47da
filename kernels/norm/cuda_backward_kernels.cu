// The gradients of RMS norm (aten::_fused_rms_norm_backward) on the GPU. With y = x * rstd * w
// over rows of n elements:
//   grad_in  = rstd * (g * w) - x * rstd^3 * sum(g * w * x) / n      (a row reduction)
//   grad_w   = sum over rows of g * x * rstd                          (a column reduction)
// A persistent grid of row workers (a warp or a block each) holds each row's g and x in
// registers, so that both are read from DRAM once and grad_in is written once; each thread
// owns the same columns in every row, so it keeps their grad_w sums in registers across its
// rows. The blocks then write one float partial per column each, and a second kernel sums
// the partials of each column in a fixed order (deterministic, unlike atomics).
#include <algorithm>
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/rows.cuh"

namespace native_ops::cuda {
namespace {

// g and x held as 2 vectors a thread, grad_w's sums as 2 x VEC floats; w is read at each use
// (from L1: every row reads the same). Four vectors a thread, w held too, took 128-144
// registers, leaving an SM too few warps to keep its loads in flight.
constexpr int kVectorsPerThread = 2;
constexpr int kMaxThreads = 1024;
static_assert(kMaxThreads * kVectorsPerThread == NATIVE_OPS_RMS_NORM_BACKWARD_MAX_VECTORS, "the widest plan");

template <class T, int VEC>
struct BackwardArgs {
  const T* grad_out;
  const T* in;
  const float* rstd;
  const T* weight;  // null: ones
  T* grad_in;       // null: not wanted
  float* partials;  // [gridDim.x, width]; null when grad_w is not wanted
  int64_t rows;
  int64_t width;
};

template <class T, int VEC>
__device__ __forceinline__ Vec<T, VEC> load_vector(const T* base, int64_t c) {
  return *reinterpret_cast<const Vec<T, VEC>*>(base + c);
}

// ROW_THREADS threads (a warp, or the whole block) take rows worker, worker + workers, ...
// 512-thread blocks are held to 64 registers, two an SM (float16's took 80, one block an
// SM). Other sizes get no minimum (0): bounded alike they spill, and even a minimum of 1
// moves the compiler's choices (docs/design/history.md).
template <class T, int VEC, int THREADS, int ROW_THREADS, bool GRAD_WEIGHT>
__global__ void __launch_bounds__(THREADS, THREADS == 512 ? 2 : 0) rms_norm_backward_rows(BackwardArgs<T, VEC> a) {
  constexpr int kGroups = THREADS / ROW_THREADS;
  constexpr int kVecs = kVectorsPerThread;
  const int group = static_cast<int>(threadIdx.x) / ROW_THREADS;
  const int t = static_cast<int>(threadIdx.x) % ROW_THREADS;
  const int64_t workers = int64_t{gridDim.x} * kGroups;
  const int64_t vectors = a.width / VEC;
  const RowReduce<THREADS, ROW_THREADS == 32> reduce;
  auto column = [&](int i) { return (int64_t{i} * ROW_THREADS + t) * VEC; };
  auto held = [&](int i) { return int64_t{i} * ROW_THREADS + t < vectors; };

  auto weight = [&](int i, float(&w)[VEC]) {
    if (a.weight == nullptr) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) w[k] = 1.f;
      return;
    }
    const Vec<T, VEC> v = load_vector<T, VEC>(a.weight, column(i));
#pragma unroll
    for (int k = 0; k < VEC; ++k) w[k] = to_float(v.v[k]);
  };
  float grad_w[kVecs][VEC] = {};
  const float inverse_width = 1.f / static_cast<float>(a.width);
  for (int64_t row = int64_t{blockIdx.x} * kGroups + group; row < a.rows; row += workers) {
    const T* g_row = a.grad_out + row * a.width;
    const T* x_row = a.in + row * a.width;
    Vec<T, VEC> g[kVecs], x[kVecs];
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {  // every load issued before the first use
      if (!held(i)) continue;
      g[i] = load_vector<T, VEC>(g_row, column(i));
      x[i] = load_vector<T, VEC>(x_row, column(i));
    }
    const float rstd = a.rstd[row];
    float dot = 0.f;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!held(i)) continue;
      float w[VEC];
      weight(i, w);
#pragma unroll
      for (int k = 0; k < VEC; ++k) dot += to_float(g[i].v[k]) * w[k] * to_float(x[i].v[k]);
    }
    dot = reduce(dot, Sum{});
    const float x_scale = rstd * rstd * rstd * dot * inverse_width;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!held(i)) continue;
      if (a.grad_in != nullptr) {
        auto grad_in = [&](int64_t, float(&vals)[VEC]) {  // vals: g
          float w[VEC];
          weight(i, w);
#pragma unroll
          for (int k = 0; k < VEC; ++k) vals[k] = rstd * vals[k] * w[k] - to_float(x[i].v[k]) * x_scale;
        };
        store_vector(a.grad_in + row * a.width, column(i), g[i], grad_in);
      }
      if constexpr (GRAD_WEIGHT) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) grad_w[i][k] += to_float(g[i].v[k]) * to_float(x[i].v[k]) * rstd;
      }
    }
  }
  if constexpr (GRAD_WEIGHT) {
    // The block's row workers add their sums into one partial row, in group order.
    float* partial = a.partials + int64_t{blockIdx.x} * a.width;
    for (int turn = 0; turn < kGroups; ++turn) {
      if (group == turn) {
#pragma unroll
        for (int i = 0; i < kVecs; ++i) {
          if (!held(i)) continue;
#pragma unroll
          for (int k = 0; k < VEC; ++k) {
            const int64_t c = column(i) + k;
            partial[c] = turn == 0 ? grad_w[i][k] : partial[c] + grad_w[i][k];
          }
        }
      }
      if constexpr (kGroups > 1) __syncthreads();  // the partial's writes are visible to the block
    }
  }
}

// grad_w[c] = the sum of partials[b, c] over b, in order of b: 32 columns a block row,
// kSlices threads a column each summing every kSlices-th partial, then one adding theirs.
constexpr int kSlices = 32;
template <class T>
__global__ void __launch_bounds__(32 * kSlices)
    sum_partials(const float* partials, int64_t count, int64_t width, T* grad_w) {
  __shared__ float slices[kSlices][33];
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int slice = static_cast<int>(threadIdx.x) / 32;
  const int64_t c = int64_t{blockIdx.x} * 32 + lane;
  float sum = 0.f;
  if (c < width) {
#pragma unroll 8
    for (int64_t b = slice; b < count; b += kSlices) sum += partials[b * width + c];
  }
  slices[slice][lane] = sum;
  __syncthreads();
  if (slice == 0 && c < width) {
    float total = 0.f;
#pragma unroll
    for (int s = 0; s < kSlices; ++s) total += slices[s][lane];
    grad_w[c] = from_float<T>(total);
  }
}

template <class T, int VEC, int THREADS, int ROW_THREADS, bool GRAD_WEIGHT>
int blocks_for(int64_t rows, int* blocks) {
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess) error = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (error == cudaSuccess) {
    error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, &rms_norm_backward_rows<T, VEC, THREADS, ROW_THREADS, GRAD_WEIGHT>, THREADS, 0);
  }
  if (error != cudaSuccess) return static_cast<int>(error);
  constexpr int kGroups = THREADS / ROW_THREADS;
  const int64_t needed = (rows + kGroups - 1) / kGroups;
  *blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(needed, int64_t{per_sm} * sms)));
  return cudaSuccess;
}

// Calls f(threads, row_threads, grad_weight) with compile-time constants: a warp per row
// for the narrowest rows, else the smallest block of 128-1024 threads that holds one.
template <int VEC, class F>
int with_plan(int64_t width, bool grad_weight, F&& f) {
  const int64_t vectors = width / VEC;
  auto pick = [&](auto threads, auto row_threads) {
    return grad_weight ? f(threads, row_threads, std::true_type{}) : f(threads, row_threads, std::false_type{});
  };
  auto block = [&](auto threads) { return pick(threads, threads); };
  if (vectors <= 32 * kVectorsPerThread)
    return pick(std::integral_constant<int, 128>{}, std::integral_constant<int, 32>{});
  if (vectors <= 128 * kVectorsPerThread) return block(std::integral_constant<int, 128>{});
  if (vectors <= 256 * kVectorsPerThread) return block(std::integral_constant<int, 256>{});
  if (vectors <= 512 * kVectorsPerThread) return block(std::integral_constant<int, 512>{});
  if (vectors <= kMaxThreads * kVectorsPerThread) return block(std::integral_constant<int, kMaxThreads>{});
  return static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_rms_norm_backward_workspace(int dtype, int64_t rows, int64_t width,
                                                                      int64_t* floats) {
  using namespace native_ops::cuda;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    return with_plan<kVec>(width, true, [&](auto threads, auto row_threads, auto) {
      int blocks = 0;
      const int error =
          blocks_for<T, kVec, decltype(threads)::value, decltype(row_threads)::value, true>(rows, &blocks);
      *floats = int64_t{blocks} * width;
      return error;
    });
  });
}

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_rms_norm_backward_rows(int dtype, const void* grad_out, const void* in,
                                                                 const float* rstd, const void* weight, void* grad_in,
                                                                 void* grad_weight, float* workspace,
                                                                 int64_t workspace_floats, int64_t rows, int64_t width,
                                                                 void* stream) {
  using namespace native_ops::cuda;
  auto* cuda_stream = static_cast<cudaStream_t>(stream);
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    if (width <= 0 || width % kVec != 0 || width / kVec > NATIVE_OPS_RMS_NORM_BACKWARD_MAX_VECTORS) {
      return static_cast<int>(cudaErrorInvalidValue);
    }
    if (rows == 0) {  // grad_in is empty; grad_w sums no row
      return grad_weight == nullptr ? 0
                                    : static_cast<int>(cudaMemsetAsync(grad_weight, 0, width * sizeof(T), cuda_stream));
    }
    const BackwardArgs<T, kVec> args{static_cast<const T*>(grad_out),
                                     static_cast<const T*>(in),
                                     rstd,
                                     static_cast<const T*>(weight),
                                     static_cast<T*>(grad_in),
                                     workspace,
                                     rows,
                                     width};
    return with_plan<kVec>(width, grad_weight != nullptr, [&](auto threads, auto row_threads, auto grad_w) {
      constexpr int kThreads = decltype(threads)::value;
      constexpr bool kGradWeight = decltype(grad_w)::value;
      int blocks = 0;
      int error = blocks_for<T, kVec, kThreads, decltype(row_threads)::value, kGradWeight>(rows, &blocks);
      if (error != cudaSuccess) return error;
      if (kGradWeight && (workspace == nullptr || workspace_floats < int64_t{blocks} * width)) {
        return static_cast<int>(cudaErrorInvalidValue);
      }
      rms_norm_backward_rows<T, kVec, kThreads, decltype(row_threads)::value, kGradWeight>
          <<<blocks, kThreads, 0, cuda_stream>>>(args);
      if constexpr (kGradWeight) {
        sum_partials<T><<<static_cast<unsigned>((width + 31) / 32), 32 * kSlices, 0, cuda_stream>>>(
            workspace, blocks, width, static_cast<T*>(grad_weight));
      }
      return static_cast<int>(cudaGetLastError());
    });
  });
}
