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

}  // namespace

void register_softmax_cuda() {
  register_op_override<at::_ops::_softmax>("cuda", c10::DispatchKey::CUDA, &gpu_rows_apply,
                                           [](const at::Tensor& self, int64_t, bool) { return rows(self, false); });
  register_op_override<at::_ops::_log_softmax>("cuda", c10::DispatchKey::CUDA, &gpu_rows_apply,
                                               [](const at::Tensor& self, int64_t, bool) { return rows(self, true); });
}

}  // namespace native_ops::kernels
