// The shape features of _softmax_backward_data and _log_softmax_backward_data that decide
// which kernel is fastest: rows and the width of the last dimension (selection.h).
#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_softmax_backward_data_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

namespace {

ShapeFeatures last_dim_rows(const at::Tensor&, const at::Tensor& out, int64_t, at::ScalarType) {
  return row_features(out, out.dim() == 0 ? 1 : out.sizes().back());
}

}  // namespace

void register_softmax_backward_features() {
  register_shape_features<at::_ops::_softmax_backward_data>({"rows", "width"}, &last_dim_rows);
  register_shape_features<at::_ops::_log_softmax_backward_data>({"rows", "width"}, &last_dim_rows);
}

}  // namespace native_ops::kernels
