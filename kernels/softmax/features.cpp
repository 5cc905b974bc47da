// The shape features of _softmax and _log_softmax that decide which kernel is fastest:
// rows and the width of the last dimension (selection.h).
#include <ATen/core/Tensor.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_softmax_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

namespace {

ShapeFeatures last_dim_rows(const at::Tensor& self, int64_t, bool) {
  return row_features(self, self.dim() == 0 ? 1 : self.sizes().back());
}

}  // namespace

void register_softmax_features() {
  register_shape_features<at::_ops::_softmax>({"rows", "width"}, &last_dim_rows);
  register_shape_features<at::_ops::_log_softmax>({"rows", "width"}, &last_dim_rows);
}

}  // namespace native_ops::kernels
