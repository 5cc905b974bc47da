// argmax, argmin, max.dim and min.dim at CUDA over the last dimension (or, for argmax and
// argmin without a dim, the whole tensor as one row) of contiguous float32, float16 and
// bfloat16 tensors: each element read once (kernels/argmax/cuda_kernels.cu). The conds decline
// what the H200 grid shows aten at least as fast on.
#include <optional>
#include <tuple>

#include <ATen/core/Tensor.h>
#include <ATen/ops/argmax_ops.h>
#include <ATen/ops/argmin_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/max_ops.h>
#include <ATen/ops/min_ops.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

// The rows a call reduces: the last dimension's, or, without a dim, the whole tensor's.
struct Rows {
  int64_t rows;
  int64_t width;
};
Rows rows_of(const at::Tensor& self, std::optional<int64_t> dim) {
  const int64_t width = dim.has_value() ? self.size(-1) : self.numel();
  return {self.numel() / width, width};
}

Verdict applies(const at::Tensor& self, std::optional<int64_t> dim) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  if (self.dim() == 0) return decline("a 0-dim tensor");
  if (dim.has_value() && *dim != -1 && *dim != self.dim() - 1) return decline("not over the last dimension");
  if (self.numel() == 0) return decline("empty input");
  if (!self.is_contiguous()) return decline("not contiguous");
  if (self.is_neg()) return decline("a negative-bit view");
  const Rows shape = rows_of(self, dim);
  if (shape.rows > 0x7fffffff) return decline("more rows than one launch covers");
  if (const char* slower = cuda_arg_extreme_slower_than_aten(shape.rows, shape.width, self.element_size())) {
    return decline(slower);
  }
  return true;
}

// The indices, and with `with_values` the elements, of the largest (or smallest) element
// of each row, shaped as aten shapes them.
std::tuple<at::Tensor, at::Tensor> arg_extreme(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                               bool largest, bool with_values) {
  const c10::DeviceGuard device(self.device());
  std::vector<int64_t> sizes;
  if (dim.has_value()) {
    sizes = self.sizes().vec();
    if (keepdim) {
      sizes.back() = 1;
    } else {
      sizes.pop_back();
    }
  } else if (keepdim) {
    sizes.assign(self.dim(), 1);
  }
  at::Tensor indices = at::empty(sizes, self.options().dtype(at::kLong));
  at::Tensor values = with_values ? at::empty(sizes, self.options()) : at::Tensor();
  const Rows shape = rows_of(self, dim);
  static const auto arg_extreme_rows = cuda::kernel<NativeOpsArgExtremeRowsFn>(NATIVE_OPS_ARG_EXTREME_ROWS_SYMBOL);
  cuda::check(arg_extreme_rows(cuda::dtype_code(self), largest ? 1 : 0, self.const_data_ptr(),
                               with_values ? values.mutable_data_ptr() : nullptr, indices.mutable_data_ptr<int64_t>(),
                               shape.rows, shape.width, cuda::current_stream(self)),
              largest ? "arg_extreme_rows (largest)" : "arg_extreme_rows (smallest)");
  return {values, indices};
}

Verdict arg_applies(const at::Tensor& self, std::optional<int64_t> dim, bool) { return applies(self, dim); }
Verdict dim_applies(const at::Tensor& self, int64_t dim, bool) { return applies(self, dim); }

at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(arg_extreme(self, dim, keepdim, /*largest=*/true, /*with_values=*/false));
}
at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(arg_extreme(self, dim, keepdim, /*largest=*/false, /*with_values=*/false));
}
std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return arg_extreme(self, dim, keepdim, /*largest=*/true, /*with_values=*/true);
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return arg_extreme(self, dim, keepdim, /*largest=*/false, /*with_values=*/true);
}

}  // namespace

void register_argmax_cuda() {
  register_op_override<at::_ops::argmax>("cuda", c10::DispatchKey::CUDA, &arg_applies, &argmax);
  register_op_override<at::_ops::argmin>("cuda", c10::DispatchKey::CUDA, &arg_applies, &argmin);
  register_op_override<at::_ops::max_dim>("cuda", c10::DispatchKey::CUDA, &dim_applies, &max_dim);
  register_op_override<at::_ops::min_dim>("cuda", c10::DispatchKey::CUDA, &dim_applies, &min_dim);
}

}  // namespace native_ops::kernels
