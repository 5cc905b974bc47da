// The shape features of native_layer_norm and _fused_rms_norm that decide which kernel is
// fastest: rows and the width normalized over (selection.h).
#include <ATen/core/Tensor.h>
#include <ATen/ops/_fused_rms_norm_ops.h>
#include <ATen/ops/native_layer_norm_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

void register_norm_features() {
  register_shape_features<at::_ops::native_layer_norm>(
      {"rows", "width"}, [](const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                            const std::optional<at::Tensor>&, const std::optional<at::Tensor>&, double) {
        int64_t width = 1;
        for (const c10::SymInt& size : normalized_shape) width *= size.guard_int(__FILE__, __LINE__);
        return row_features(input, width);
      });
  register_shape_features<at::_ops::_fused_rms_norm>(
      {"rows", "width"}, [](const at::Tensor& input, at::IntArrayRef normalized_shape, const std::optional<at::Tensor>&,
                            std::optional<double>) {
        int64_t width = 1;
        for (const int64_t size : normalized_shape) width *= size;
        return row_features(input, width);
      });
}

}  // namespace native_ops::kernels
