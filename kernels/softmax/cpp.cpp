// _softmax over the last dimension of contiguous float32 at CPU. Per row: the maximum,
// then exp(x - max) written out while summing, then one scale pass while the row is
// still in L1. exp is a Cephes-style polynomial (about 1 ulp) written so that GCC
// vectorises it for each CPU level (cpu_dispatch.h).
#include <cmath>
#include <cstdint>
#include <cstring>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty_like.h>

#include "builtin.h"
#include "cpu_dispatch.h"
#include "native_ops/typed.h"

namespace native_ops::kernels {

namespace {

constexpr int kLanes = 16;  // independent accumulators: vectorisable without reassociation

// exp(x) for x <= 0 (softmax shifts by the row maximum); 0 below the float range.
inline float exp_nonpositive(float x) {
  constexpr float kLowest = -87.3365447f;  // log(FLT_MIN)
  const float clamped = x < kLowest ? kLowest : x;
  const float n = std::floor(clamped * 1.44269504088896341f + 0.5f);
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < kLowest ? 0.0f : p * scale;
}

NATIVE_OPS_CPU_CLONES void softmax_rows(const float* input, float* output, int64_t rows, int64_t width) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* x = input + row * width;
    float* y = output + row * width;
    const int64_t body = width - width % kLanes;

    float lane_max[kLanes];
    for (int l = 0; l < kLanes; ++l) lane_max[l] = -INFINITY;
    for (int64_t i = 0; i < body; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lane_max[l] = x[i + l] > lane_max[l] ? x[i + l] : lane_max[l];
    }
    float max = -INFINITY;
    for (int l = 0; l < kLanes; ++l) max = lane_max[l] > max ? lane_max[l] : max;
    for (int64_t i = body; i < width; ++i) max = x[i] > max ? x[i] : max;
    // NaN anywhere makes the row NaN, as in aten.
    bool has_nan = false;
    for (int64_t i = 0; i < width; ++i) has_nan |= x[i] != x[i];
    if (has_nan) max = NAN;

    float lane_sum[kLanes] = {};
    for (int64_t i = 0; i < body; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        const float e = exp_nonpositive(x[i + l] - max);
        y[i + l] = e;
        lane_sum[l] += e;
      }
    }
    float sum = 0.0f;
    for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
    for (int64_t i = body; i < width; ++i) {
      y[i] = exp_nonpositive(x[i] - max);
      sum += y[i];
    }

    const float inverse = 1.0f / sum;
    for (int64_t i = 0; i < width; ++i) y[i] *= inverse;
  }
}

bool softmax_applies(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return self.scalar_type() == at::kFloat && !half_to_float && self.dim() >= 1 &&
         (dim == -1 || dim == self.dim() - 1) && self.numel() > 0 && self.is_contiguous() &&
         !self.is_neg();
}

at::Tensor softmax_last_dim(const at::Tensor& self, int64_t /*dim*/, bool /*half_to_float*/) {
  at::Tensor out = at::empty_like(self, at::MemoryFormat::Contiguous);
  const int64_t width = self.size(-1);
  const int64_t rows = self.numel() / width;
  const float* x = self.const_data_ptr<float>();
  float* y = out.mutable_data_ptr<float>();
  // About 16K elements per task: enough to amortise a thread hand-off.
  const int64_t grain = std::max<int64_t>(1, 16384 / width);
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    softmax_rows(x + begin * width, y + begin * width, end - begin, width);
  });
  return out;
}

}  // namespace

void register_softmax_overrides() {
  register_op_override<at::_ops::_softmax>("cpp", c10::DispatchKey::CPU, &softmax_applies, &softmax_last_dim);
}

}  // namespace native_ops::kernels
