#pragma once
// The built-in overrides, one registration function per op folder under kernels/.

namespace native_ops::kernels {

/// bmm at CPU when the inner dimension is 1 (a batched outer product): kernels/bmm/.
void register_bmm_overrides();
/// _softmax over the last dimension of contiguous float32 at CPU: kernels/softmax/.
void register_softmax_overrides();
/// add_.Tensor of same-shape contiguous floating tensors at CPU: kernels/add_/.
void register_add__overrides();

/// bmm at CUDA when the inner dimension is 1: kernels/bmm/cuda.cpp.
void register_bmm_cuda_overrides();
/// _softmax and _log_softmax at CUDA over the last dimension: kernels/softmax/cuda.cpp.
void register_softmax_cuda_overrides();
/// native_layer_norm and _fused_rms_norm at CUDA: kernels/norm/cuda.cpp.
void register_norm_cuda_overrides();

/// The triton DSL's, at CUDA, after the cuda DSL's (a policy puts them first):
/// bmm (kernels/bmm/triton.cpp), _softmax and _log_softmax (kernels/softmax/triton.cpp),
/// _fused_rms_norm (kernels/norm/triton.cpp).
void register_bmm_triton_overrides();
void register_softmax_triton_overrides();
void register_norm_triton_overrides();

/// All of the above, in this order. Called once, when the registry is first used.
inline void register_builtin_overrides() {
  register_bmm_overrides();
  register_softmax_overrides();
  register_add__overrides();
  register_bmm_cuda_overrides();
  register_softmax_cuda_overrides();
  register_norm_cuda_overrides();
  register_bmm_triton_overrides();
  register_softmax_triton_overrides();
  register_norm_triton_overrides();
}

/// The op database entries of the ops above, next to their kernels (kernels/<op>/op_db.cpp).
void register_bmm_op_entry();
void register_softmax_op_entry();
void register_add__op_entry();
void register_norm_op_entry();

/// All of the above. Called once, when the op database is first used.
inline void register_builtin_op_entries() {
  register_bmm_op_entry();
  register_softmax_op_entry();
  register_add__op_entry();
  register_norm_op_entry();
}

}  // namespace native_ops::kernels
