#pragma once
// What the GPU norm kernels (cuda: layer and RMS norm; triton: RMS norm) take in common.

#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/util/accumulate.h>

#include "native_ops/verdict.h"

namespace native_ops::kernels {

// Why a cond declines a weight or bias (reasons must be literals: see verdict.h).
struct ParameterReasons {
  const char* shape;
  const char* dtype;
  const char* device;
  const char* layout;
};
constexpr ParameterReasons kWeight{"weight is not shaped like normalized_shape (aten reports the error)",
                                   "weight's dtype differs from the input's", "weight is on another device",
                                   "weight is not contiguous"};
constexpr ParameterReasons kBias{"bias is not shaped like normalized_shape (aten reports the error)",
                                 "bias's dtype differs from the input's", "bias is on another device",
                                 "bias is not contiguous"};

inline Verdict parameter_applies(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                 const std::optional<at::Tensor>& parameter, const ParameterReasons& reasons) {
  if (!parameter.has_value() || !parameter->defined()) return true;
  if (parameter->sizes() != normalized_shape) return decline(reasons.shape);
  if (parameter->scalar_type() != input.scalar_type()) return decline(reasons.dtype);
  if (parameter->device() != input.device()) return decline(reasons.device);
  if (!parameter->is_contiguous() || parameter->is_neg()) return decline(reasons.layout);
  return true;
}

/// Both norms, both GPU DSLs: float32, float16 or bfloat16 contiguous rows of the trailing
/// normalized_shape dimensions; weight and bias (either may be absent) like normalized_shape,
/// of the input's dtype and device, contiguous; at most 2^31 - 1 rows.
inline Verdict gpu_norm_applies(const at::Tensor& input, at::IntArrayRef normalized_shape,
                                const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias) {
  const auto dtype = input.scalar_type();
  if (dtype != at::kFloat && dtype != at::kHalf && dtype != at::kBFloat16)
    return decline("dtype is not float32, float16 or bfloat16");
  const int64_t normalized_dims = static_cast<int64_t>(normalized_shape.size());
  if (normalized_dims == 0 || normalized_dims > input.dim() ||
      input.sizes().slice(input.dim() - normalized_dims) != normalized_shape) {
    return decline("normalized_shape is not the input's trailing shape (aten reports the error)");
  }
  if (input.numel() == 0) return decline("empty input");
  if (!input.is_contiguous()) return decline("not contiguous");
  if (input.is_neg()) return decline("a negative-bit view");
  if (const Verdict verdict = parameter_applies(input, normalized_shape, weight, kWeight); !verdict.accepted()) {
    return verdict;
  }
  if (const Verdict verdict = parameter_applies(input, normalized_shape, bias, kBias); !verdict.accepted()) {
    return verdict;
  }
  const int64_t width = c10::multiply_integers(normalized_shape);
  if (input.numel() / width > 0x7fffffff) return decline("more rows than one launch covers");
  return true;
}

}  // namespace native_ops::kernels
