// bmm at CPU when the inner dimension is 1: out[b, i, j] = a[b, i, 0] * m[b, 0, j].
// aten sends this through a general GEMM; here each output row is one scaled copy of a
// row of `mat2`, written once, which is what the memory floor allows.
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/empty.h>

#include "builtin.h"
#include "cpu_dispatch.h"
#include "native_ops/typed.h"

namespace native_ops::kernels {

namespace {

template <class T>
inline void scaled_copy(T scale, const T* __restrict source, T* __restrict target, int64_t n) {
  for (int64_t j = 0; j < n; ++j) target[j] = scale * source[j];
}

NATIVE_OPS_CPU_CLONES void scaled_copy_f32(float scale, const float* source, float* target, int64_t n) {
  scaled_copy(scale, source, target, n);
}
NATIVE_OPS_CPU_CLONES void scaled_copy_f64(double scale, const double* source, double* target, int64_t n) {
  scaled_copy(scale, source, target, n);
}
inline void scaled_row(float s, const float* x, float* y, int64_t n) { scaled_copy_f32(s, x, y, n); }
inline void scaled_row(double s, const double* x, double* y, int64_t n) { scaled_copy_f64(s, x, y, n); }

bool outer_product_applies(const at::Tensor& self, const at::Tensor& mat2) {
  const auto dtype = self.scalar_type();
  return self.dim() == 3 && mat2.dim() == 3 && self.size(2) == 1 && mat2.size(1) == 1 &&
         self.size(0) == mat2.size(0) && dtype == mat2.scalar_type() &&
         (dtype == at::kFloat || dtype == at::kDouble) && self.numel() > 0 && mat2.numel() > 0 &&
         (mat2.stride(2) == 1 || mat2.size(2) == 1) && !self.is_neg() && !mat2.is_neg() &&
         self.device() == mat2.device();
}

template <class T>
at::Tensor outer_product(const at::Tensor& self, const at::Tensor& mat2) {
  const int64_t batches = self.size(0);
  const int64_t rows = self.size(1);
  const int64_t cols = mat2.size(2);
  at::Tensor out = at::empty({batches, rows, cols}, self.options());
  const T* a = self.const_data_ptr<T>();
  const T* m = mat2.const_data_ptr<T>();
  T* y = out.mutable_data_ptr<T>();
  const int64_t a_batch = self.stride(0);
  const int64_t a_row = self.stride(1);
  const int64_t m_batch = mat2.stride(0);
  // About 32K output elements per task: enough to amortise a thread hand-off.
  const int64_t grain = std::max<int64_t>(1, 32768 / cols);
  at::parallel_for(0, batches * rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / rows;
      const int64_t i = r % rows;
      scaled_row(a[b * a_batch + i * a_row], m + b * m_batch, y + r * cols, cols);
    }
  });
  return out;
}

}  // namespace

void register_bmm_overrides() {
  register_op_override<at::_ops::bmm>(
      "cpp", c10::DispatchKey::CPU, &outer_product_applies,
      [](const at::Tensor& self, const at::Tensor& mat2) {
        return self.scalar_type() == at::kFloat ? outer_product<float>(self, mat2)
                                                : outer_product<double>(self, mat2);
      });
}

}  // namespace native_ops::kernels
