// bmm at CPU when the inner dimension is 1: out[b, i, j] = a[b, i, 0] * m[b, 0, j].
// aten sends this through a general GEMM; here each output row is one scaled copy of a
// row of `mat2`, written once, which is what the memory floor allows.
#include <ATen/EmptyTensor.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm_ops.h>

#include "dsls/cpp/cpu_dispatch.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

// Output rows [begin, end) of the flattened (batch, row) index. Kept in one function per
// dtype so that the loop over rows runs inside the CPU clone: a call per row costs more
// than the row itself when rows are short.
struct OuterProduct {
  int64_t rows, cols;
  int64_t a_batch, a_row;  // strides of self (batch, row)
  int64_t m_batch;         // batch stride of mat2; its rows are unit-stride
};

template <class T>
inline void outer_rows(const OuterProduct& p, const T* a, const T* m, T* y, int64_t begin, int64_t end) {
  // The row's batch and index within it are stepped, not divided out: on 16-column rows a
  // division per row made the kernel 0.44x aten.
  int64_t b = begin / p.rows, i = begin - b * p.rows;
  for (int64_t r = begin; r < end; ++r) {
    const T scale = a[b * p.a_batch + i * p.a_row];
    const T* __restrict source = m + b * p.m_batch;
    T* __restrict target = y + r * p.cols;
    for (int64_t j = 0; j < p.cols; ++j) target[j] = scale * source[j];
    if (++i == p.rows) {
      i = 0;
      ++b;
    }
  }
}

NATIVE_OPS_CPU_CLONES void outer_rows_f32(const OuterProduct& p, const float* a, const float* m, float* y,
                                          int64_t begin, int64_t end) {
  outer_rows(p, a, m, y, begin, end);
}
NATIVE_OPS_CPU_CLONES void outer_rows_f64(const OuterProduct& p, const double* a, const double* m, double* y,
                                          int64_t begin, int64_t end) {
  outer_rows(p, a, m, y, begin, end);
}
inline void outer_rows_any(const OuterProduct& p, const float* a, const float* m, float* y, int64_t begin,
                           int64_t end) {
  outer_rows_f32(p, a, m, y, begin, end);
}
inline void outer_rows_any(const OuterProduct& p, const double* a, const double* m, double* y, int64_t begin,
                           int64_t end) {
  outer_rows_f64(p, a, m, y, begin, end);
}

Verdict outer_product_applies(const at::Tensor& self, const at::Tensor& mat2) {
  const auto dtype = self.scalar_type();
  if (self.dim() != 3 || mat2.dim() != 3 || self.size(0) != mat2.size(0) || self.size(2) != mat2.size(1)) {
    return decline("not a valid bmm (aten reports the error)");
  }
  if (self.size(2) != 1) return decline("inner dimension is not 1");
  if (dtype != mat2.scalar_type()) return decline("dtypes differ");
  if (dtype != at::kFloat && dtype != at::kDouble) return decline("dtype is not float32 or float64");
  if (self.numel() == 0 || mat2.numel() == 0) return decline("empty input");
  if (const char* slower = cpp_outer_product_slower_than_aten(self.size(0), self.size(1), mat2.size(2))) {
    return decline(slower);
  }
  if (mat2.stride(2) != 1 && mat2.size(2) != 1) return decline("mat2's rows are not unit-stride");
  if (self.is_neg() || mat2.is_neg()) return decline("a negative-bit view");
  if (self.device() != mat2.device()) return decline("inputs on different devices");
  return true;
}

template <class T>
at::Tensor outer_product(const at::Tensor& self, const at::Tensor& mat2) {
  const int64_t batches = self.size(0);
  const OuterProduct p{self.size(1), mat2.size(2), self.stride(0), self.stride(1), mat2.stride(0)};
  // Allocated without a trip through the dispatcher, as aten's own CPU kernels do.
  at::Tensor out =
      at::detail::empty_cpu({batches, p.rows, p.cols}, self.scalar_type(), /*pin_memory=*/false, std::nullopt);
  const T* a = self.const_data_ptr<T>();
  const T* m = mat2.const_data_ptr<T>();
  T* y = out.mutable_data_ptr<T>();
  // About 32K output elements per task: enough to amortise a thread hand-off.
  const int64_t grain = std::max<int64_t>(1, 32768 / p.cols);
  at::parallel_for(0, batches * p.rows, grain,
                   [&](int64_t begin, int64_t end) { outer_rows_any(p, a, m, y, begin, end); });
  return out;
}

}  // namespace

void register_bmm_cpp() {
  register_op_override<at::_ops::bmm>(
      "cpp", c10::DispatchKey::CPU, &outer_product_applies, [](const at::Tensor& self, const at::Tensor& mat2) {
        return self.scalar_type() == at::kFloat ? outer_product<float>(self, mat2) : outer_product<double>(self, mat2);
      });
}

}  // namespace native_ops::kernels
