// The shape features of the norms and their gradients that decide which kernel is fastest:
// rows and the width normalized over (selection.h).
#include <array>

#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm_backward_ops.h>
#include <ATen/ops/_fused_rms_norm_ops.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/native_layer_norm_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

namespace {

int64_t width_of(c10::SymIntArrayRef normalized_shape) {
  int64_t width = 1;
  for (const c10::SymInt& size : normalized_shape) width *= size.guard_int(__FILE__, __LINE__);
  return width;
}

int64_t width_of(at::IntArrayRef normalized_shape) { return c10::multiply_integers(normalized_shape); }

}  // namespace

void register_norm_features() {
  register_shape_features<at::_ops::native_layer_norm>(
      {"rows", "width"},
      [](const at::Tensor& input, c10::SymIntArrayRef normalized_shape, const std::optional<at::Tensor>&,
         const std::optional<at::Tensor>&, double) { return row_features(input, width_of(normalized_shape)); });
  register_shape_features<at::_ops::_fused_rms_norm>(
      {"rows", "width"}, [](const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>&,
                            std::optional<double>) { return row_features(input, width_of(normalized_shape)); });
  register_shape_features<at::_ops::native_layer_norm_backward>(
      {"rows", "width"},
      [](const at::Tensor&, const at::Tensor& input, c10::SymIntArrayRef normalized_shape, const at::Tensor&,
         const at::Tensor&, const std::optional<at::Tensor>&, const std::optional<at::Tensor>&,
         std::array<bool, 3>) { return row_features(input, width_of(normalized_shape)); });
  register_shape_features<at::_ops::_fused_rms_norm_backward>(
      {"rows", "width"}, [](const at::Tensor&, const at::Tensor& input, at::IntArrayRef normalized_shape,
                            const at::Tensor&, const std::optional<at::Tensor>&,
                            std::array<bool, 2>) { return row_features(input, width_of(normalized_shape)); });
}

}  // namespace native_ops::kernels
