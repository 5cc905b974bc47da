// embedding_dense_backward at CUDA for float32, float16 and bfloat16 gradients with int64 or
// int32 indices: a stable sort of the indices, then one kernel that writes every weight row
// once (kernels/embedding_backward/cuda_kernels.cu). Deterministic, as aten's is: each row
// sums its gradients in position order.
#include <ATen/core/Tensor.h>
#include <ATen/ops/embedding_dense_backward_ops.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include "cuda_abi.h"
#include "dsls/cuda/kernels_library.h"
#include "native_ops/typed.h"
#include "native_ops/verdict.h"
#include "speed.h"

namespace native_ops::kernels {

namespace {

Verdict embedding_backward_applies(const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights,
                                   c10::SymInt padding_idx, bool) {
  const auto dtype = grad.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("grad_output's dtype is not float32, float16 or bfloat16");
  if (indices.scalar_type() != at::kLong && indices.scalar_type() != at::kInt)
    return decline("indices are not int64 or int32");
  if (indices.device() != grad.device()) return decline("indices are on another device");
  const auto weights = num_weights.maybe_as_int();
  if (!weights.has_value() || !padding_idx.maybe_as_int().has_value())
    return decline("symbolic num_weights or padding_idx");
  if (*weights <= 0) return decline("no weight rows");
  if (grad.dim() != indices.dim() + 1 || grad.sizes().slice(0, indices.dim()) != indices.sizes())
    return decline("grad_output is not shaped indices.shape + [width] (aten reports the error)");
  const int64_t width = grad.size(-1);
  if (width == 0) return decline("an empty embedding width");
  if (!grad.is_contiguous() || grad.is_neg()) return decline("grad_output is not contiguous");
  if (width * static_cast<int64_t>(grad.element_size()) % 16 != 0)
    return decline("rows are not a multiple of 16 bytes");
  if (reinterpret_cast<uintptr_t>(grad.const_data_ptr()) % 16 != 0)
    return decline("grad_output is not aligned to 16 bytes");
  static_assert(NATIVE_OPS_EMBEDDING_BACKWARD_MAX_ROWS == 0x7fffffff, "the reasons below name the limit");
  if (*weights > NATIVE_OPS_EMBEDDING_BACKWARD_MAX_ROWS) return decline("more than 2^31 - 1 weight rows");
  if (indices.numel() > NATIVE_OPS_EMBEDDING_BACKWARD_MAX_ROWS) return decline("more than 2^31 - 1 indices");
  if (const char* slower =
          cuda_embedding_backward_slower_than_aten(indices.numel(), *weights, width, grad.element_size())) {
    return decline(slower);
  }
  return true;
}

at::Tensor embedding_backward(const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights,
                              c10::SymInt padding_idx, bool scale_grad_by_freq) {
  const c10::DeviceGuard device(grad.device());
  const int64_t weights = num_weights.expect_int();
  const int64_t width = grad.size(-1);
  const at::Tensor flat_indices = indices.reshape({-1}).contiguous();
  const int64_t count = flat_indices.numel();
  const int index_bytes = static_cast<int>(flat_indices.element_size());
  static const auto workspace_bytes =
      cuda::kernel<NativeOpsEmbeddingBackwardWorkspaceFn>(NATIVE_OPS_EMBEDDING_BACKWARD_WORKSPACE_SYMBOL);
  int64_t bytes = 0;
  cuda::check(workspace_bytes(index_bytes, count, weights, &bytes), "embedding_backward_workspace");
  at::Tensor workspace;
  if (bytes > 0) workspace = at::empty({bytes}, grad.options().dtype(at::kByte));
  at::Tensor grad_weight = at::empty({weights, width}, grad.options());
  static const auto embedding_backward_rows =
      cuda::kernel<NativeOpsEmbeddingBackwardFn>(NATIVE_OPS_EMBEDDING_BACKWARD_SYMBOL);
  cuda::check(embedding_backward_rows(
                  cuda::dtype_code(grad), index_bytes, grad.const_data_ptr(), flat_indices.const_data_ptr(), count,
                  weights, width, padding_idx.expect_int(), scale_grad_by_freq ? 1 : 0, grad_weight.mutable_data_ptr(),
                  workspace.defined() ? workspace.mutable_data_ptr() : nullptr, bytes, cuda::current_stream(grad)),
              "embedding_backward");
  return grad_weight;
}

}  // namespace

void register_embedding_backward_cuda() {
  register_op_override<at::_ops::embedding_dense_backward>("cuda", c10::DispatchKey::CUDA, &embedding_backward_applies,
                                                           &embedding_backward);
}

}  // namespace native_ops::kernels
