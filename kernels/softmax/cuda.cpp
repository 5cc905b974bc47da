// _softmax and _log_softmax at CUDA over the last dimension of contiguous float32, float16
// and bfloat16 tensors: one block per row, one DRAM read and one write per element
// (kernels/softmax/cuda_kernels.cu).
#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "gpu_domain.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

at::Tensor rows(const at::Tensor& self, bool log) {
  const c10::DeviceGuard device(self.device());
  at::Tensor out = at::empty(self.sizes(), self.options());
  const int64_t width = self.size(-1);
  static const auto softmax_rows = cuda::kernel<NativeOpsSoftmaxRowsFn>(NATIVE_OPS_SOFTMAX_ROWS_SYMBOL);
  cuda::check(softmax_rows(cuda::dtype_code(self), log ? 1 : 0, self.const_data_ptr(), out.mutable_data_ptr(),
                           self.numel() / width, width, cuda::current_stream(self)),
              log ? "log_softmax_rows" : "softmax_rows");
  return out;
}

// The cuda kernels decline the shape classes where the H200 grid has aten at least as fast
// (speed.h), so that a GPU without a tuned table is not made slower either.
Verdict rows_apply(const at::Tensor& self, int64_t dim, bool half_to_float, bool log) {
  const Verdict gpu = gpu_rows_apply(self, dim, half_to_float);
  if (!gpu.accepted()) return gpu;
  const int64_t width = self.size(-1);
  if (const char* slower = cuda_softmax_slower_than_aten(self.numel() / width, width, self.element_size(), log)) {
    return decline(slower);
  }
  return true;
}

Verdict softmax_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return rows_apply(self, dim, half_to_float, false);
}

Verdict log_softmax_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return rows_apply(self, dim, half_to_float, true);
}

}  // namespace

void register_softmax_cuda() {
  register_op_override<at::_ops::_softmax>("cuda", c10::DispatchKey::CUDA, &softmax_apply,
                                           [](const at::Tensor& self, int64_t, bool) { return rows(self, false); });
  register_op_override<at::_ops::_log_softmax>("cuda", c10::DispatchKey::CUDA, &log_softmax_apply,
                                               [](const at::Tensor& self, int64_t, bool) { return rows(self, true); });
}

}  // namespace native_ops::kernels
