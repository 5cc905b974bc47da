// add_.Tensor at CPU for same-shape contiguous float32/float64 tensors: self += alpha * other.
// aten builds a TensorIterator for every call; a flat loop skips that set-up, which is
// most of the time of small in-place adds, and runs at memory speed on large ones.
#include <ATen/MemoryOverlap.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/add_ops.h>

#include "dsls/cpp/cpu_dispatch.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

template <class T>
inline void axpy(T alpha, const T* __restrict x, T* __restrict y, int64_t n) {
  if (alpha == T(1)) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
  }
}

NATIVE_OPS_CPU_CLONES void axpy_f32(float alpha, const float* x, float* y, int64_t n) { axpy(alpha, x, y, n); }
NATIVE_OPS_CPU_CLONES void axpy_f64(double alpha, const double* x, double* y, int64_t n) { axpy(alpha, x, y, n); }
inline void axpy_any(float alpha, const float* x, float* y, int64_t n) { axpy_f32(alpha, x, y, n); }
inline void axpy_any(double alpha, const double* x, double* y, int64_t n) { axpy_f64(alpha, x, y, n); }

// y += alpha * x with y == x (self.add_(self)): the restrict loop must not see aliases.
template <class T>
void scale_in_place(T factor, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= factor;
}

Verdict flat_add_applies(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kDouble) return decline("dtype is not float32 or float64");
  if (other.scalar_type() != dtype) return decline("dtypes differ");
  if (self.sizes() != other.sizes()) return decline("shapes differ (broadcast)");
  if (self.numel() == 0) return decline("empty input");
  if (!self.is_contiguous() || !other.is_contiguous()) return decline("not contiguous");
  if (self.is_neg() || other.is_neg()) return decline("a negative-bit view");
  if (alpha.isComplex() || alpha.isBoolean()) return decline("alpha is complex or bool");
  if (self.device() != other.device()) return decline("inputs on different devices");
  const at::MemOverlapStatus overlap = at::get_overlap_status(self, other);
  if (overlap != at::MemOverlapStatus::No && overlap != at::MemOverlapStatus::Full) {
    return decline("self and other partly overlap");
  }
  return true;
}

template <class T>
void flat_add(at::Tensor& self, const at::Tensor& other, T alpha) {
  T* y = self.mutable_data_ptr<T>();
  const T* x = other.const_data_ptr<T>();
  const int64_t n = self.numel();
  const bool aliased = x == y;
  at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
    if (aliased) {
      scale_in_place(T(1) + alpha, y + begin, end - begin);
    } else {
      axpy_any(alpha, x + begin, y + begin, end - begin);
    }
  });
}

at::Tensor& flat_add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (self.scalar_type() == at::kFloat) {
    flat_add<float>(self, other, alpha.to<float>());
  } else {
    flat_add<double>(self, other, alpha.to<double>());
  }
  return self;
}

}  // namespace

void register_add__cpp() {
  register_op_override<at::_ops::add__Tensor>("cpp", c10::DispatchKey::CPU, &flat_add_applies, &flat_add_);
}

}  // namespace native_ops::kernels
