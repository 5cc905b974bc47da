#pragma once
// What the GPU outer-product kernels of bmm (cuda and triton) take in common.

#include <ATen/core/Tensor.h>

#include "native_ops/verdict.h"

namespace native_ops::kernels {

/// A valid bmm with an inner dimension of 1, float32, float16 or bfloat16 alike, on one
/// device, not empty, without negative-bit views. Each kernel adds its launch limits.
inline Verdict gpu_outer_product_applies(const at::Tensor& self, const at::Tensor& mat2) {
  if (self.dim() != 3 || mat2.dim() != 3 || self.size(0) != mat2.size(0) || self.size(2) != mat2.size(1)) {
    return decline("not a valid bmm (aten reports the error)");
  }
  if (self.size(2) != 1) return decline("inner dimension is not 1");
  const auto dtype = self.scalar_type();
  if (dtype != mat2.scalar_type()) return decline("dtypes differ");
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  if (self.device() != mat2.device()) return decline("inputs on different devices");
  if (self.numel() == 0 || mat2.numel() == 0) return decline("empty input");
  if (self.is_neg() || mat2.is_neg()) return decline("a negative-bit view");
  return true;
}

}  // namespace native_ops::kernels
