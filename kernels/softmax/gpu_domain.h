#pragma once
// What the GPU row kernels of _softmax and _log_softmax (cuda and triton) take in common.

#include <ATen/core/Tensor.h>

#include "native_ops/verdict.h"

namespace native_ops::kernels {

/// A float32, float16 or bfloat16 contiguous tensor, over its last dimension, without
/// half_to_float, with at most 2^31 - 1 rows.
inline Verdict gpu_rows_apply(const at::Tensor& self, int64_t dim, bool half_to_float) {
  const auto dtype = self.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  if (half_to_float) return decline("half_to_float is set");
  if (self.dim() == 0 || (dim != -1 && dim != self.dim() - 1)) return decline("not over the last dimension");
  if (self.numel() == 0) return decline("empty input");
  if (!self.is_contiguous()) return decline("not contiguous");
  if (self.is_neg()) return decline("a negative-bit view");
  if (self.numel() / self.size(-1) > 0x7fffffff) return decline("more rows than one launch covers");
  return true;
}

}  // namespace native_ops::kernels
