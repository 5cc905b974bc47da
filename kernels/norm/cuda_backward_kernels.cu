// The gradients of layer norm and RMS norm (aten::native_layer_norm_backward,
// aten::_fused_rms_norm_backward) on the GPU. With xhat = (x - mean) * rstd (RMS norm: mean
// 0) and y = xhat * w + b over rows of n elements:
//   grad_in = rstd * (g * w - mean(g * w) - xhat * mean(g * w * xhat))  (row reductions;
//             RMS norm has no mean(g * w) term)
//   grad_w  = sum over rows of g * xhat,  grad_b = sum over rows of g  (column reductions)
// A persistent grid of row workers (a warp or a block each) holds each row's g and x in
// registers, so that both are read from DRAM once and grad_in is written once; each thread
// owns the same columns in every row, so it keeps their column sums across its rows
// (16-bit rows in its own slots of shared memory, float32 in registers). The blocks then
// write one float partial per column each, and a second kernel sums the partials of each
// column in a fixed order (deterministic, unlike atomics). Where rows are few for their
// width, those partials cost more than the rows (a block a row), and the column gradients
// are taken apart instead (column_partials, where speed.h says): the rows kernel writes
// grad_in alone, then tiles of a chunk of rows by 32 vectors of columns read grad_out and
// the input again, one partial row a chunk.
#include <algorithm>
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/rows.cuh"
#include "speed.h"

namespace native_ops::cuda {
namespace {

// g and x held as 2 vectors a thread; w is read at each use (from L1: every row reads the
// same). Four vectors a thread, w held too, took 128-144 registers, leaving an SM too few
// warps to keep its loads in flight.
constexpr int kVectorsPerThread = 2;
constexpr int kMaxThreads = 1024;
static_assert(kMaxThreads * kVectorsPerThread == NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS, "the widest plan");

template <class T, int VEC>
struct BackwardArgs {
  const T* grad_out;
  const T* in;
  const float* mean;  // null: RMS norm
  const float* rstd;
  const T* weight;  // null: ones
  T* grad_in;       // null: not wanted
  float* partials;  // [planes][gridDim.x][width]: grad_w's, then grad_b's (layer norm); null: not wanted
  int64_t rows;
  int64_t width;
};

template <class T, int VEC>
__device__ __forceinline__ Vec<T, VEC> load_vector(const T* base, int64_t c) {
  return *reinterpret_cast<const Vec<T, VEC>*>(base + c);
}

// The column sums a thread keeps across its rows, kPlanes x kVectorsPerThread x VEC floats:
// 16-bit rows keep them in shared memory, float4 slot s of thread t at [s][t] (a warp's
// accesses free of bank conflicts). In registers they spilled where a block takes a row (512
// threads at 64 registers: 64-72 bytes a thread), and the narrower plans' 80 registers
// capped their blocks an SM; in shared memory 16-bit layer norm backward ran 1.09-1.39x
// faster on the H200 at 4096-65536 rows (docs/design/backward-and-topk.md). float32 rows,
// which never spilled, keep them in registers: 0-3.5% faster there.
template <int VEC, int THREADS, bool CENTERED>
struct ColumnSums {
  static constexpr int kPlanes = CENTERED ? 2 : 1;
  static constexpr int kSlots = kPlanes * kVectorsPerThread * VEC / 4;
  static constexpr int kBytes = kSlots * THREADS * static_cast<int>(sizeof(float4));
  static_assert(VEC % 4 == 0, "a vector's sums fill whole float4 slots");
  float4* base;
  __device__ float4& at(int plane, int i, int q) const {
    return base[((plane * kVectorsPerThread + i) * (VEC / 4) + q) * THREADS + static_cast<int>(threadIdx.x)];
  }
};

template <class T, bool COLUMNS>
constexpr bool kSharedColumnSums = COLUMNS && sizeof(T) == 2;

template <class T, int VEC, int THREADS, bool CENTERED, bool COLUMNS>
constexpr int kColumnSumsBytes = kSharedColumnSums<T, COLUMNS> ? ColumnSums<VEC, THREADS, CENTERED>::kBytes : 0;

// ROW_THREADS threads (a warp, or the whole block) take rows worker, worker + workers, ...
// 512-thread blocks are held to 64 registers, two an SM (float16's took 80, one block an
// SM). Other sizes get no minimum (0): bounded alike they spill, and even a minimum of 1
// moves the compiler's choices (docs/design/history.md). CENTERED: layer norm (mean given,
// grad_b summed beside grad_w); COLUMNS: the column gradients are wanted (16-bit: in dynamic
// shared memory, kColumnSumsBytes).
template <class T, int VEC, int THREADS, int ROW_THREADS, bool CENTERED, bool COLUMNS>
__global__ void __launch_bounds__(THREADS, THREADS == 512 ? 2 : 0) norm_backward_rows(BackwardArgs<T, VEC> a) {
  constexpr int kGroups = THREADS / ROW_THREADS;
  constexpr int kVecs = kVectorsPerThread;
  using Sums = ColumnSums<VEC, THREADS, CENTERED>;
  constexpr int kPlanes = Sums::kPlanes;
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
  constexpr bool kShared = kSharedColumnSums<T, COLUMNS>;
  extern __shared__ float4 column_sums_shared[];
  const Sums sums{column_sums_shared};
  float held_sums[kShared ? 1 : kPlanes][kShared ? 1 : kVecs][kShared ? 1 : VEC] = {};  // grad_w's, grad_b's
  if constexpr (kShared) {
#pragma unroll
    for (int s = 0; s < Sums::kSlots; ++s) sums.base[s * THREADS + threadIdx.x] = float4{0.f, 0.f, 0.f, 0.f};
  }
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
    const float mean = CENTERED ? a.mean[row] : 0.f;
    const float rstd = a.rstd[row];
    // The row's sums and the column sums in one pass over the held elements, each
    // converted once: with the column sums in a pass of their own after the reduction, the
    // 16-bit layer norm loop ran 547 instructions a row a thread where it runs 480 (SASS,
    // sm_90, 1024 threads).
    float2 dots{0.f, 0.f};  // sum(g * w), sum(g * w * xhat)
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!held(i)) continue;
      float w[VEC];
      weight(i, w);
#pragma unroll
      for (int q = 0; q < VEC / 4; ++q) {
        float gk[4], gx[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          gk[j] = to_float(g[i].v[4 * q + j]);
          const float xhat = (to_float(x[i].v[4 * q + j]) - mean) * rstd;
          const float gw = gk[j] * w[4 * q + j];
          gx[j] = gk[j] * xhat;
          dots.x += gw;
          dots.y += gw * xhat;
        }
        if constexpr (COLUMNS && !kShared) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            held_sums[0][i][4 * q + j] += gx[j];
            if constexpr (CENTERED) held_sums[kPlanes - 1][i][4 * q + j] += gk[j];
          }
        }
        if constexpr (kShared) {
          float4& w_sum = sums.at(0, i, q);
          w_sum = float4{w_sum.x + gx[0], w_sum.y + gx[1], w_sum.z + gx[2], w_sum.w + gx[3]};
          if constexpr (CENTERED) {
            float4& b_sum = sums.at(1, i, q);
            b_sum = float4{b_sum.x + gk[0], b_sum.y + gk[1], b_sum.z + gk[2], b_sum.w + gk[3]};
          }
        }
      }
    }
    if constexpr (CENTERED) {
      dots = reduce(dots, Sum{});
    } else {
      dots.y = reduce(dots.y, Sum{});
    }
    const float mean_gw = CENTERED ? dots.x * inverse_width : 0.f;
    const float mean_gw_xhat = dots.y * inverse_width;
    if (a.grad_in == nullptr) continue;
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      if (!held(i)) continue;
      auto grad_in = [&](int64_t, float(&vals)[VEC]) {  // vals: g
        float w[VEC];
        weight(i, w);
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          const float xhat = (to_float(x[i].v[k]) - mean) * rstd;
          vals[k] = rstd * (vals[k] * w[k] - mean_gw - xhat * mean_gw_xhat);
        }
      };
      store_vector(a.grad_in + row * a.width, column(i), g[i], grad_in);
    }
  }
  if constexpr (COLUMNS) {
    // The block's row workers add their sums into one partial row a plane, in group order.
    for (int turn = 0; turn < kGroups; ++turn) {
      if (group == turn) {
#pragma unroll
        for (int plane = 0; plane < kPlanes; ++plane) {
          auto* partial = reinterpret_cast<float4*>(a.partials + (int64_t{plane} * gridDim.x + blockIdx.x) * a.width);
#pragma unroll
          for (int i = 0; i < kVecs; ++i) {
            if (!held(i)) continue;
#pragma unroll
            for (int q = 0; q < VEC / 4; ++q) {
              const int64_t c4 = column(i) / 4 + q;
              float4 sum;
              if constexpr (kShared) {
                sum = sums.at(plane, i, q);
              } else {
                sum = float4{held_sums[plane][i][4 * q], held_sums[plane][i][4 * q + 1], held_sums[plane][i][4 * q + 2],
                             held_sums[plane][i][4 * q + 3]};
              }
              if (turn == 0) {
                partial[c4] = sum;
              } else {
                const float4 before = partial[c4];
                partial[c4] = float4{before.x + sum.x, before.y + sum.y, before.z + sum.z, before.w + sum.w};
              }
            }
          }
        }
      }
      if constexpr (kGroups > 1) __syncthreads();  // the partial's writes are visible to the block
    }
  }
}

// out[blockIdx.y][c] = the sum of partials[blockIdx.y][b][c] over b, in order of b: 32
// columns a block, kSlices threads a column each summing every kSlices-th partial, then one
// adding theirs. A null output plane is skipped.
constexpr int kSlices = 32;
template <class T>
struct ColumnOutputs {
  T* plane[2];
};
template <class T>
__global__ void __launch_bounds__(32 * kSlices)
    sum_partials(const float* partials, int64_t count, int64_t width, ColumnOutputs<T> outputs) {
  T* out = outputs.plane[blockIdx.y];
  if (out == nullptr) return;
  partials += int64_t{blockIdx.y} * count * width;
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
    out[c] = from_float<T>(total);
  }
}

// The column sums of a chunk of rows (blockIdx.y) over 32 vectors of columns (blockIdx.x):
// each warp takes every kColumnWarps-th row of the chunk, kColumnRowsInFlight at a time,
// then the warps' sums are added in warp order into one partial row a chunk and plane.
constexpr int kColumnWarps = 8;
constexpr int kColumnRowsInFlight = 4;
template <class T, int VEC, bool CENTERED>
__global__ void __launch_bounds__(32 * kColumnWarps)
    column_partials(BackwardArgs<T, VEC> a, int64_t chunk_rows, int64_t chunks) {
  constexpr int kPlanes = CENTERED ? 2 : 1;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int64_t tile = int64_t{blockIdx.x} * 32 * VEC;
  const int64_t c = tile + int64_t{lane} * VEC;
  const int64_t first = int64_t{blockIdx.y} * chunk_rows;
  const int64_t end = min(a.rows, first + chunk_rows);
  float sums[kPlanes][VEC] = {};
  if (c < a.width) {
    for (int64_t row = first + warp; row < end; row += kColumnWarps * kColumnRowsInFlight) {
      Vec<T, VEC> g[kColumnRowsInFlight], x[kColumnRowsInFlight];
      float mean[kColumnRowsInFlight], rstd[kColumnRowsInFlight];
#pragma unroll
      for (int j = 0; j < kColumnRowsInFlight; ++j) {  // every load issued before the first use
        const int64_t r = row + j * kColumnWarps;
        if (r >= end) continue;
        g[j] = load_vector<T, VEC>(a.grad_out + r * a.width, c);
        x[j] = load_vector<T, VEC>(a.in + r * a.width, c);
        mean[j] = CENTERED ? a.mean[r] : 0.f;
        rstd[j] = a.rstd[r];
      }
#pragma unroll
      for (int j = 0; j < kColumnRowsInFlight; ++j) {
        if (row + j * kColumnWarps >= end) continue;
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          const float gk = to_float(g[j].v[k]);
          sums[0][k] += gk * ((to_float(x[j].v[k]) - mean[j]) * rstd[j]);
          if constexpr (CENTERED) sums[kPlanes - 1][k] += gk;
        }
      }
    }
  }
  // Element k of lane l's vector at [k][l]: the stores and the sums below are free of bank conflicts.
  __shared__ float staged[kPlanes][kColumnWarps][VEC][32];
#pragma unroll
  for (int plane = 0; plane < kPlanes; ++plane) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) staged[plane][warp][k][lane] = sums[plane][k];
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < kPlanes * VEC * 32; i += 32 * kColumnWarps) {
    const int plane = i / (VEC * 32), k = i / 32 % VEC, l = i % 32;
    const int64_t column = tile + int64_t{l} * VEC + k;
    if (column >= a.width) continue;
    float total = 0.f;
#pragma unroll
    for (int w = 0; w < kColumnWarps; ++w) total += staged[plane][w][k][l];
    a.partials[(plane * chunks + blockIdx.y) * a.width + column] = total;
  }
}

// How column_partials covers the rows: `chunks` chunks of `chunk_rows` rows; chunks 0: the
// column gradients stay in the rows kernel.
struct ColumnPlan {
  int64_t chunks = 0;
  int64_t chunk_rows = 0;
};

// Apart where speed.h says, in chunks of at least a row a warp's load, as many as fill the
// SMs about 8 times.
int plan_columns(int64_t rows, int64_t width, int element_bytes, bool centered, ColumnPlan* plan) {
  *plan = {};
  if (!kernels::cuda_norm_backward_columns_apart(rows, width, element_bytes, centered)) return cudaSuccess;
  int sms = 0;
  if (const int error = current_device_sms(&sms); error != cudaSuccess) return error;
  const int64_t tiles = (width * element_bytes / 16 + 31) / 32;
  const int64_t most_chunks = std::max<int64_t>(1, rows / (kColumnWarps * kColumnRowsInFlight));
  plan->chunks = std::clamp<int64_t>(int64_t{sms} * 8 / tiles, 1, most_chunks);
  plan->chunk_rows = (rows + plan->chunks - 1) / plan->chunks;
  plan->chunks = (rows + plan->chunk_rows - 1) / plan->chunk_rows;
  return cudaSuccess;
}

// The rows kernel of a plan, its shared memory allowed (once a device: the attribute is the
// context's), and the count of its blocks that fit on the device at once, asked of the
// runtime once a device (asked on every call, the launch-bound shapes lost microseconds to it).
template <class T, int VEC, int THREADS, int ROW_THREADS, bool CENTERED, bool COLUMNS>
int blocks_for(int64_t rows, int* blocks) {
  static DeviceAnswers<> answers;
  int resident = 0;
  const int error = answers.get(0, &resident, [](int, int* count) {
    constexpr int kSharedBytes = kColumnSumsBytes<T, VEC, THREADS, CENTERED, COLUMNS>;
    auto* kernel = &norm_backward_rows<T, VEC, THREADS, ROW_THREADS, CENTERED, COLUMNS>;
    int sms = 0, per_sm = 0;
    cudaError_t status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);
    if (status == cudaSuccess) status = static_cast<cudaError_t>(current_device_sms(&sms));
    if (status == cudaSuccess) {
      status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, kSharedBytes);
    }
    *count = per_sm * sms;
    return static_cast<int>(status);
  });
  if (error != cudaSuccess) return error;
  constexpr int kGroups = THREADS / ROW_THREADS;
  const int64_t needed = (rows + kGroups - 1) / kGroups;
  *blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(needed, resident)));
  return cudaSuccess;
}

// Calls f(threads, row_threads, centered, columns) with compile-time constants: a warp per
// row for the narrowest rows, else the smallest block of 128-1024 threads that holds one.
template <int VEC, class F>
int with_plan(int64_t width, bool centered, bool columns, F&& f) {
  const int64_t vectors = width / VEC;
  auto pick = [&](auto threads, auto row_threads) {
    auto with_columns = [&](auto centred) {
      return columns ? f(threads, row_threads, centred, std::true_type{})
                     : f(threads, row_threads, centred, std::false_type{});
    };
    return centered ? with_columns(std::true_type{}) : with_columns(std::false_type{});
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

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_norm_backward_workspace(int dtype, int centered, int64_t rows, int64_t width,
                                                                  int64_t* floats) {
  using namespace native_ops::cuda;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    ColumnPlan plan;
    if (const int error = plan_columns(rows, width, sizeof(T), centered != 0, &plan); error != cudaSuccess)
      return error;
    if (plan.chunks > 0) {
      *floats = plan.chunks * width * (centered != 0 ? 2 : 1);
      return static_cast<int>(cudaSuccess);
    }
    return with_plan<kVec>(width, centered != 0, true, [&](auto threads, auto row_threads, auto centred, auto) {
      int blocks = 0;
      const int error =
          blocks_for<T, kVec, decltype(threads)::value, decltype(row_threads)::value, decltype(centred)::value, true>(
              rows, &blocks);
      *floats = int64_t{blocks} * width * (centered != 0 ? 2 : 1);
      return error;
    });
  });
}

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_norm_backward_rows(int dtype, const void* grad_out, const void* in,
                                                             const float* mean, const float* rstd, const void* weight,
                                                             void* grad_in, void* grad_weight, void* grad_bias,
                                                             float* workspace, int64_t workspace_floats, int64_t rows,
                                                             int64_t width, void* stream) {
  using namespace native_ops::cuda;
  auto* cuda_stream = static_cast<cudaStream_t>(stream);
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    constexpr int kVec = 16 / sizeof(T);
    const bool centered = mean != nullptr;
    if (width <= 0 || width % kVec != 0 || width / kVec > NATIVE_OPS_NORM_BACKWARD_MAX_VECTORS ||
        (!centered && grad_bias != nullptr)) {
      return static_cast<int>(cudaErrorInvalidValue);
    }
    if (rows == 0) {  // grad_in is empty; the column gradients sum no row
      for (void* column_grad : {grad_weight, grad_bias}) {
        if (column_grad == nullptr) continue;
        if (const cudaError_t error = cudaMemsetAsync(column_grad, 0, width * sizeof(T), cuda_stream)) {
          return static_cast<int>(error);
        }
      }
      return 0;
    }
    const bool columns = grad_weight != nullptr || grad_bias != nullptr;
    if (columns && reinterpret_cast<uintptr_t>(workspace) % 16 != 0) return static_cast<int>(cudaErrorInvalidValue);
    ColumnPlan plan;
    if (columns) {
      if (const int error = plan_columns(rows, width, sizeof(T), centered, &plan); error != cudaSuccess) return error;
    }
    const bool apart = plan.chunks > 0;
    const int planes = centered ? 2 : 1;
    const BackwardArgs<T, kVec> args{
        static_cast<const T*>(grad_out), static_cast<const T*>(in),     mean, rstd, static_cast<const T*>(weight),
        static_cast<T*>(grad_in),        columns ? workspace : nullptr, rows, width};
    int64_t partial_rows = plan.chunks;  // the partials of each plane sum_partials adds
    if (apart && workspace_floats < plan.chunks * width * planes) return static_cast<int>(cudaErrorInvalidValue);
    if (!apart || grad_in != nullptr) {
      const int error = with_plan<kVec>(
          width, centered, columns && !apart, [&](auto threads, auto row_threads, auto centred, auto cols) {
            constexpr int kThreads = decltype(threads)::value;
            constexpr int kRowThreads = decltype(row_threads)::value;
            constexpr bool kCentered = decltype(centred)::value;
            constexpr bool kColumns = decltype(cols)::value;
            int blocks = 0;
            const int status = blocks_for<T, kVec, kThreads, kRowThreads, kCentered, kColumns>(rows, &blocks);
            if (status != cudaSuccess) return status;
            if (kColumns && (workspace == nullptr || workspace_floats < int64_t{blocks} * width * planes)) {
              return static_cast<int>(cudaErrorInvalidValue);
            }
            norm_backward_rows<T, kVec, kThreads, kRowThreads, kCentered, kColumns>
                <<<blocks, kThreads, kColumnSumsBytes<T, kVec, kThreads, kCentered, kColumns>, cuda_stream>>>(args);
            if (kColumns) partial_rows = blocks;
            return static_cast<int>(cudaGetLastError());
          });
      if (error != cudaSuccess) return error;
    }
    if (apart) {
      const dim3 tiles(static_cast<unsigned>((width / kVec + 31) / 32), static_cast<unsigned>(plan.chunks));
      if (centered) {
        column_partials<T, kVec, true>
            <<<tiles, 32 * kColumnWarps, 0, cuda_stream>>>(args, plan.chunk_rows, plan.chunks);
      } else {
        column_partials<T, kVec, false>
            <<<tiles, 32 * kColumnWarps, 0, cuda_stream>>>(args, plan.chunk_rows, plan.chunks);
      }
    }
    if (columns) {
      const ColumnOutputs<T> outputs{{static_cast<T*>(grad_weight), static_cast<T*>(grad_bias)}};
      sum_partials<T><<<dim3(static_cast<unsigned>((width + 31) / 32), planes), 32 * kSlices, 0, cuda_stream>>>(
          workspace, partial_rows, width, outputs);
    }
    return static_cast<int>(cudaGetLastError());
  });
}
