// Layer norm and RMS norm over the last dimensions on the GPU, as row kernels
// (lib/src/dsls/cuda/rows.cuh): each row is read from DRAM once and held on chip, where its mean and
// variance are taken in two passes (no E[x^2] - E[x]^2 cancellation; the persistent
// holder's rows in one reduction of each thread's pair), then normalised, scaled and
// written. Rows too wide for the chip take one pass of both sums, then a second read to
// write.
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/rows.cuh"

namespace native_ops::cuda {
namespace {

template <class T, int VEC>
struct NormRows {
  using Element = T;
  const T* in;
  T* out;
  const T* weight;  // may be null
  const T* bias;    // may be null
  float* mean_out;  // may be null
  float* rstd_out;
  int64_t width;
  float eps;
  bool centered;  // layer norm; RMS norm when not

  static constexpr int kColumnOperands = 2;
  __device__ __forceinline__ const T* column_operand(int k) const { return k == 0 ? weight : bias; }

  /// A row's mean, as shift + offset, and its variance (RMS norm: offset 0, the mean square).
  struct Moments {
    float shift, offset, variance;
  };

  template <class Row, class Reduce>
  __device__ __forceinline__ Moments moments(const Row& row, int64_t r, Reduce reduce) const {
    // Sums of x - shift, with shift the row's first element: for a row far from zero (values
    // near 1000, say) x - shift is exact and small, where a plain sum of x would lose the
    // mean to rounding; the mean is carried as shift + offset.
    const float shift = centered ? to_float(in[r * width]) : 0.f;
    if constexpr (Row::kMomentsAtOnce) {
      // Each thread's own mean and variance (two passes over its registers; RMS norm's about
      // 0), combined over the row in one reduction of equal halves (MeanVariance).
      float sum = 0.f, count = 0.f;
      row.for_each([&](float x) {
        sum += x - shift;
        count += 1.f;
      });
      const float local = centered ? sum / count : 0.f;
      float squares = 0.f;
      row.for_each([&](float x) { squares += ((x - shift) - local) * ((x - shift) - local); });
      const float2 combined = reduce(float2{local, squares / count}, MeanVariance{});
      return {shift, combined.x, combined.y};
    } else {
      const float n = static_cast<float>(width);
      float offset = 0.f, variance = 0.f;
      if constexpr (Row::kOnChip) {
        if (centered) {
          float sum = 0.f;
          row.for_each([&](float x) { sum += x - shift; });
          offset = reduce(sum, Sum{}) / n;
        }
        float squares = 0.f;
        row.for_each([&](float x) { squares += ((x - shift) - offset) * ((x - shift) - offset); });
        variance = reduce(squares, Sum{}) / n;
      } else {  // one reading pass for both sums
        float2 sums{0.f, 0.f};
        row.for_each([&](float x) {
          sums.x += x - shift;
          sums.y += (x - shift) * (x - shift);
        });
        sums = reduce(sums, Sum{});
        offset = centered ? sums.x / n : 0.f;
        variance = fmaxf(sums.y / n - offset * offset, 0.f);
      }
      return {shift, offset, variance};
    }
  }

  template <class Row, class Reduce>
  __device__ __forceinline__ void operator()(const Row& row, int64_t r, int thread, Reduce reduce) const {
    const Moments m = moments(row, r, reduce);
    const float shift = m.shift, offset = m.offset, rstd = rsqrtf(m.variance + eps);
    if (thread == 0) {
      if (mean_out != nullptr) mean_out[r] = shift + offset;
      rstd_out[r] = rstd;
    }
    row.store(out + r * width, [&](int64_t c, float(&vals)[VEC]) {
      float w[VEC], b[VEC];
      load_column(row, 0, weight, c, w, 1.f);
      load_column(row, 1, bias, c, b, 0.f);
#pragma unroll
      for (int k = 0; k < VEC; ++k) vals[k] = ((vals[k] - shift) - offset) * rstd * w[k] + b[k];
    });
  }
};

// How the rows share their reads of weight and bias, measured: RMS norm gains from reading
// its weight once for two rows; layer norm does not, but gains from persistent blocks that
// keep weight and bias for all their rows.
ColumnReuse column_reuse(bool centered, const void* weight, const void* bias) {
  if (weight == nullptr && bias == nullptr) return ColumnReuse::per_row;
  return centered ? ColumnReuse::persistent : ColumnReuse::two_rows;
}

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_norm_rows(int dtype, int centered, const void* in, const void* weight,
                                                    const void* bias, void* out, float* mean, float* rstd, int64_t rows,
                                                    int64_t width, float eps, void* workspace, void* stream) {
  using namespace native_ops::cuda;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    return launch_rows_of_any_width<T>(
        {in, out}, std::array<const void*, 2>{weight, bias}, rows, width, static_cast<cudaStream_t>(stream),
        [&](auto vec) {
          return NormRows<T, decltype(vec)::value>{static_cast<const T*>(in),
                                                   static_cast<T*>(out),
                                                   static_cast<const T*>(weight),
                                                   static_cast<const T*>(bias),
                                                   mean,
                                                   rstd,
                                                   width,
                                                   eps,
                                                   centered != 0};
        },
        column_reuse(centered != 0, weight, bias), static_cast<RowClaims*>(workspace));
  });
}
