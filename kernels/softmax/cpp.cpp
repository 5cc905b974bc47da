// _softmax over the last dimension of contiguous float32 at CPU. Per row: the maximum,
// then exp(x - max) written out while summing, then one scale pass while the row is
// still in L1. exp is a Cephes-style polynomial (about 1 ulp) in explicit SIMD (simd.h),
// compiled for each CPU level (cpu_dispatch.h).
#include <cmath>
#include <cstdint>

#include <ATen/EmptyTensor.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_softmax_ops.h>

#include "dsls/cpp/cpu_dispatch.h"
#include "dsls/cpp/simd.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

using simd::Floats;
using simd::kLanes;

NATIVE_OPS_CPU_CLONES void softmax_rows(const float* input, float* output, int64_t rows, int64_t width) {
  const int64_t body = width - width % kLanes;
  const int64_t tail = width - body;
  for (int64_t row = 0; row < rows; ++row) {
    const float* x = input + row * width;
    float* y = output + row * width;

    Floats lane_max = simd::splat(-INFINITY);
    simd::Ints nan = {};
    for (int64_t i = 0; i < body; i += kLanes) {
      const Floats v = simd::load(x + i);
      lane_max = v > lane_max ? v : lane_max;
      nan |= v != v;
    }
    if (tail) {
      const Floats v = simd::load_partial(x + body, tail, -INFINITY);
      lane_max = v > lane_max ? v : lane_max;
      nan |= v != v;
    }
    bool has_nan = false;
    for (int l = 0; l < kLanes; ++l) has_nan |= nan[l] != 0;
    // NaN anywhere makes the whole row NaN, as in aten.
    const Floats max = simd::splat(has_nan ? NAN : simd::max_of(lane_max));

    Floats lane_sum = {};
    for (int64_t i = 0; i < body; i += kLanes) {
      const Floats e = simd::exp_nonpositive(simd::load(x + i) - max);
      simd::store(y + i, e);
      lane_sum += e;
    }
    if (tail) {
      const Floats e = simd::exp_nonpositive(simd::load_partial(x + body, tail, -INFINITY) - max);
      simd::store_partial(y + body, e, tail);
      lane_sum += e;
    }

    const Floats inverse = simd::splat(1.0f / simd::sum_of(lane_sum));
    for (int64_t i = 0; i < body; i += kLanes) simd::store(y + i, simd::load(y + i) * inverse);
    for (int64_t i = body; i < width; ++i) y[i] *= inverse[0];
  }
}

// Below this many elements aten is as fast or faster on the 16-thread H200 host
// (`native-ops bench`, docs/PERFORMANCE.md: [16,1024] at 0.89x to 1.02x), so those calls
// stay with aten.
constexpr int64_t kMinElements = 65536;

Verdict softmax_applies(const at::Tensor& self, int64_t dim, bool half_to_float) {
  if (self.scalar_type() != at::kFloat) return decline("dtype is not float32");
  if (half_to_float) return decline("half_to_float is set");
  if (self.dim() == 0 || (dim != -1 && dim != self.dim() - 1)) return decline("not over the last dimension");
  if (self.numel() < kMinElements) return decline("fewer than 65536 elements: aten is as fast");
  if (!self.is_contiguous()) return decline("not contiguous");
  if (self.is_neg()) return decline("a negative-bit view");
  return true;
}

at::Tensor softmax_last_dim(const at::Tensor& self, int64_t /*dim*/, bool /*half_to_float*/) {
  // Allocated without a trip through the dispatcher, as aten's own CPU kernels do.
  at::Tensor out = at::detail::empty_cpu(self.sizes(), self.scalar_type(), /*pin_memory=*/false, std::nullopt);
  const int64_t width = self.size(-1);
  const int64_t rows = self.numel() / width;
  const float* x = self.const_data_ptr<float>();
  float* y = out.mutable_data_ptr<float>();
  // About 4K elements per task: exp makes each element cost about a nanosecond, so this
  // amortises a thread hand-off.
  const int64_t grain = std::max<int64_t>(1, 4096 / width);
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    softmax_rows(x + begin * width, y + begin * width, end - begin, width);
  });
  return out;
}

}  // namespace

void register_softmax_cpp() {
  register_op_override<at::_ops::_softmax>("cpp", c10::DispatchKey::CPU, &softmax_applies, &softmax_last_dim);
}

}  // namespace native_ops::kernels
