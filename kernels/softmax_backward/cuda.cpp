// _softmax_backward_data and _log_softmax_backward_data at CUDA over the last dimension of
// contiguous float32, float16 and bfloat16 tensors: the forward's output and the incoming
// gradient read from DRAM once each, the gradient written once
// (kernels/softmax_backward/cuda_kernels.cu).
#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_softmax_backward_data_ops.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

at::Tensor backward_rows(const at::Tensor& grad_out, const at::Tensor& out, bool log) {
  const c10::DeviceGuard device(out.device());
  at::Tensor grad_in = at::empty(out.sizes(), out.options());
  const int64_t width = out.size(-1);
  static const auto softmax_backward_rows =
      cuda::kernel<NativeOpsSoftmaxBackwardRowsFn>(NATIVE_OPS_SOFTMAX_BACKWARD_ROWS_SYMBOL);
  cuda::check(softmax_backward_rows(cuda::dtype_code(out), log ? 1 : 0, grad_out.const_data_ptr(), out.const_data_ptr(),
                                    grad_in.mutable_data_ptr(), out.numel() / width, width, cuda::current_stream(out)),
              log ? "log_softmax_backward_rows" : "softmax_backward_rows");
  return grad_in;
}

// Both ops' domain: grad_out and out alike (float32, float16 or bfloat16, same shape and
// device, contiguous), over the last dimension, the gradient in the same dtype (no
// half_to_float forward behind it).
Verdict backward_rows_apply(const at::Tensor& grad_out, const at::Tensor& out, int64_t dim,
                            at::ScalarType input_dtype) {
  const auto dtype = out.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  if (grad_out.scalar_type() != dtype) return decline("grad_output's dtype differs from output's");
  if (input_dtype != dtype) return decline("input_dtype differs from output's (a half_to_float forward)");
  if (grad_out.sizes() != out.sizes()) return decline("grad_output is not shaped like output (aten reports the error)");
  if (grad_out.device() != out.device()) return decline("grad_output is on another device");
  if (out.dim() == 0 || (dim != -1 && dim != out.dim() - 1)) return decline("not over the last dimension");
  if (out.numel() == 0) return decline("empty input");
  if (!out.is_contiguous() || !grad_out.is_contiguous()) return decline("not contiguous");
  if (out.is_neg() || grad_out.is_neg()) return decline("a negative-bit view");
  const int64_t width = out.size(-1), rows = out.numel() / width;
  if (rows > 0x7fffffff) return decline("more rows than one launch covers");
  if (const char* slower = cuda_softmax_backward_slower_than_aten(rows, width, out.element_size()))
    return decline(slower);
  return true;
}

}  // namespace

void register_softmax_backward_cuda() {
  register_op_override<at::_ops::_softmax_backward_data>(
      "cuda", c10::DispatchKey::CUDA, &backward_rows_apply,
      [](const at::Tensor& grad_out, const at::Tensor& out, int64_t, at::ScalarType) {
        return backward_rows(grad_out, out, false);
      });
  register_op_override<at::_ops::_log_softmax_backward_data>(
      "cuda", c10::DispatchKey::CUDA, &backward_rows_apply,
      [](const at::Tensor& grad_out, const at::Tensor& out, int64_t, at::ScalarType) {
        return backward_rows(grad_out, out, true);
      });
}

}  // namespace native_ops::kernels
