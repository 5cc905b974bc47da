// Softmax and log-softmax over the last dimension on the GPU, as row kernels
// (lib/src/dsls/cuda/rows.cuh): each row is read from DRAM once and held on chip, reduced twice (max,
// then the sum of exp) and written. Rows too wide for the chip keep a running (max, sum)
// per thread instead, so that they are read twice, not three times.
#include <cmath>
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/rows.cuh"

namespace native_ops::cuda {
namespace {

// Merges partial (max, sum of exp(x - max)) pairs; an empty part (max -inf) adds nothing.
template <class T>
struct MergeMaxSum {
  __device__ float2 operator()(float2 a, float2 b) const {
    const float max = fmaxf(a.x, b.x);
    const float sa = a.x == -INFINITY ? 0.f : a.y * exp_for<T>(a.x - max);
    const float sb = b.x == -INFINITY ? 0.f : b.y * exp_for<T>(b.x - max);
    return {max, sa + sb};
  }
};

template <class T, int VEC>
struct SoftmaxRows {
  using Element = T;
  static constexpr int kColumnOperands = 0;
  // Odd widths' edge columns one to a thread (RegisterRow): softmax bf16 [32768,4097] 208 ->
  // 184 us on the H100, as fast as 4104-wide rows; the norms and the backward pair lost
  // 3-11% to the registers it takes (docs/design/cuda-rows.md, "Odd widths").
  static constexpr bool kScalarEdges = true;
  const T* in;
  T* out;
  int64_t width;
  bool log;

  template <class Row, class Reduce>
  __device__ __forceinline__ void operator()(const Row& row, int64_t r, int, Reduce reduce) const {
    float max = -INFINITY, sum = 0.f;
    if constexpr (Row::kOnChip) {
      row.for_each([&](float x) { max = fmaxf(max, x); });
      max = reduce(max, Max{});
      // An all -inf row gives exp(-inf - -inf) = NaN, as aten's kernel does.
      row.for_each([&](float x) { sum += exp_for<T>(x - max); });
      sum = reduce(sum, Sum{});
    } else {
      row.for_each([&](float x) {  // one exp per element, two when the max moves
        if (x > max) {
          sum = (max == -INFINITY ? 0.f : sum * exp_for<T>(max - x)) + 1.f;
          max = x;
        } else if (max != -INFINITY || x != x) {  // -inf adds nothing while all is -inf; NaN spreads
          sum += exp_for<T>(x - max);
        }
      });
      const float2 part = reduce(float2{max, sum}, MergeMaxSum<T>{});
      max = part.x;
      sum = part.y;
    }
    const float inverse = 1.f / sum;
    const float log_sum = logf(sum);
    row.store(out + r * width, [&](int64_t, float(&vals)[VEC]) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const float shifted = vals[k] - max;
        vals[k] = log ? shifted - log_sum : exp_for<T>(shifted) * inverse;
      }
    });
  }
};

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_softmax_rows(int dtype, int log, const void* in, void* out, int64_t rows,
                                                       int64_t width, void* stream) {
  using namespace native_ops::cuda;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    return launch_rows_of_any_width<T>(
        {in, out}, std::array<const void*, 0>{}, rows, width, static_cast<cudaStream_t>(stream), [&](auto vec) {
          return SoftmaxRows<T, decltype(vec)::value>{static_cast<const T*>(in), static_cast<T*>(out), width, log != 0};
        });
  });
}
