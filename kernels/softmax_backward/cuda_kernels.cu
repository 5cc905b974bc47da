// The gradients of softmax and log-softmax over the last dimension on the GPU, as row
// kernels (lib/src/dsls/cuda/rows.cuh) of two row operands: with y the forward's output and
// g the incoming gradient of a row,
//   softmax      grad = g * y - y * sum(g * y)
//   log-softmax  grad = g - exp(y) * sum(g)
// y and g are read from DRAM once, held on chip side by side while the row's sum is
// reduced, and grad is written once.
#include <cstdint>

#include "cuda_abi.h"
#include "dsls/cuda/rows.cuh"

namespace native_ops::cuda {
namespace {

template <class T, int VEC>
struct SoftmaxBackwardRows {
  using Element = T;
  static constexpr int kColumnOperands = 0;
  static constexpr int kRowOperands = 2;
  const T* in;      // y, the forward's output
  const T* paired;  // g, the incoming gradient
  T* out;
  int64_t width;
  bool log;

  template <class Row, class Reduce>
  __device__ __forceinline__ void operator()(const Row& row, int64_t r, int, Reduce reduce) const {
    // Softmax as aten computes it: g * y rounded to T, then less y * sum (16-bit results
    // then agree with aten's where the two terms nearly cancel).
    auto product = [](float y, float g) { return to_float(from_float<T>(g * y)); };
    float sum = 0.f;
    if (log) {
      row.for_each([&](float, float g) { sum += g; });
    } else {
      row.for_each([&](float y, float g) { sum += product(y, g); });
    }
    sum = reduce(sum, Sum{});
    row.store(out + r * width, [&](int64_t, float(&vals)[VEC], const Vec<T, VEC>& g) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const float y = vals[k], gk = to_float(g.v[k]);
        vals[k] = log ? gk - exp_for<T>(y) * sum : product(y, gk) - y * sum;
      }
    });
  }
};

}  // namespace
}  // namespace native_ops::cuda

NATIVE_OPS_CUDA_ENTRY int native_ops_cuda_softmax_backward_rows(int dtype, int log, const void* grad_out,
                                                                const void* out, void* grad_in, int64_t rows,
                                                                int64_t width, void* stream) {
  using namespace native_ops::cuda;
  return dispatch_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    return launch_rows_of_any_width<T>({out, grad_out, grad_in}, std::array<const void*, 0>{}, rows, width,
                                       static_cast<cudaStream_t>(stream), [&](auto vec) {
                                         return SoftmaxBackwardRows<T, decltype(vec)::value>{
                                             static_cast<const T*>(out), static_cast<const T*>(grad_out),
                                             static_cast<T*>(grad_in), width, log != 0};
                                       });
  });
}
