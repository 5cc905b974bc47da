// _softmax and _log_softmax at CUDA over the last dimension of contiguous float32, float16
// and bfloat16 tensors: one block per row, one DRAM read and one write per element
// (kernels/softmax/cuda_kernels.cu).
#include <c10/core/DeviceGuard.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty.h>

#include "builtin.h"
#include "dsls/cuda_kernels.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"

namespace native_ops::kernels {

namespace {

Verdict rows_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16) return decline("dtype is not float32, float16 or bfloat16");
  if (half_to_float) return decline("half_to_float is set");
  if (self.dim() == 0 || (dim != -1 && dim != self.dim() - 1)) return decline("not over the last dimension");
  if (self.numel() == 0) return decline("empty input");
  if (!self.is_contiguous()) return decline("not contiguous");
  if (self.is_neg()) return decline("a negative-bit view");
  if (self.numel() / self.size(-1) > 0x7fffffff) return decline("more rows than one launch covers");
  return true;
}

at::Tensor rows(const at::Tensor& self, bool log) {
  const c10::DeviceGuard device(self.device());
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int64_t width = self.size(-1);
  cuda::check(cuda::kernels().softmax_rows(cuda::dtype_code(self), log ? 1 : 0, self.const_data_ptr(),
                                           out.mutable_data_ptr(), self.numel() / width, width,
                                           cuda::current_stream(self)),
              log ? "log_softmax_rows" : "softmax_rows");
  return out;
}

}  // namespace

void register_softmax_cuda_overrides() {
  register_op_override<at::_ops::_softmax>("cuda", c10::DispatchKey::CUDA, &rows_apply,
                                           [](const at::Tensor& self, int64_t, bool) { return rows(self, false); });
  register_op_override<at::_ops::_log_softmax>("cuda", c10::DispatchKey::CUDA, &rows_apply,
                                               [](const at::Tensor& self, int64_t, bool) { return rows(self, true); });
}

}  // namespace native_ops::kernels
