#pragma once
// The built-in overrides, one registration function per op folder under kernels/.

namespace native_ops::kernels {

/// bmm at CPU when the inner dimension is 1 (a batched outer product): kernels/bmm/.
void register_bmm_overrides();
/// _softmax over the last dimension of contiguous float32 at CPU: kernels/softmax/.
void register_softmax_overrides();
/// add_.Tensor of same-shape contiguous floating tensors at CPU: kernels/add_/.
void register_add__overrides();

/// All of the above, in this order. Called once, when the registry is first used.
inline void register_builtin_overrides() {
  register_bmm_overrides();
  register_softmax_overrides();
  register_add__overrides();
}

}  // namespace native_ops::kernels
