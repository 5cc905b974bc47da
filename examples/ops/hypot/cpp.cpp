// hypot at CPU for two same-shape contiguous float32 or float64 tensors: one pass over both
// inputs, std::hypot per element (no overflow where a * a would), the rows split over
// ATen's threads.
#include <cmath>

#include <ATen/EmptyTensor.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/hypot_ops.h>

#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

Verdict flat_hypot_applies(const at::Tensor& self, const at::Tensor& other) {
  if (self.scalar_type() != at::kFloat && self.scalar_type() != at::kDouble) return decline("not float32 or float64");
  if (other.scalar_type() != self.scalar_type()) return decline("mixed dtypes promote: left to aten");
  if (self.sizes() != other.sizes()) return decline("broadcasting is left to aten");
  if (!self.is_contiguous() || !other.is_contiguous()) return decline("not contiguous");
  return true;
}

template <class T>
void flat_hypot(const T* a, const T* b, T* out, int64_t n) {
  at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = std::hypot(a[i], b[i]);
  });
}

at::Tensor hypot_impl(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out = at::detail::empty_cpu(self.sizes(), self.options());
  if (self.scalar_type() == at::kFloat) {
    flat_hypot(self.const_data_ptr<float>(), other.const_data_ptr<float>(), out.mutable_data_ptr<float>(),
               self.numel());
  } else {
    flat_hypot(self.const_data_ptr<double>(), other.const_data_ptr<double>(), out.mutable_data_ptr<double>(),
               self.numel());
  }
  return out;
}

}  // namespace

void register_hypot_cpp() {
  register_op_override<at::_ops::hypot>("cpp", c10::DispatchKey::CPU, &flat_hypot_applies, &hypot_impl);
}

}  // namespace native_ops::kernels
