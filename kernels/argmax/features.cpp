// The shape features of argmax, argmin, max.dim and min.dim that decide which kernel is
// fastest: rows and the width of the rows they reduce (selection.h).
#include <optional>

#include <ATen/core/Tensor.h>
#include <ATen/ops/argmax_ops.h>
#include <ATen/ops/argmin_ops.h>
#include <ATen/ops/max_ops.h>
#include <ATen/ops/min_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

namespace {

// Without a dim, the whole tensor is one row.
ShapeFeatures arg_rows(const at::Tensor& self, std::optional<int64_t> dim, bool) {
  return row_features(self, !dim.has_value() ? self.numel() : self.dim() == 0 ? 1 : self.sizes().back());
}
ShapeFeatures dim_rows(const at::Tensor& self, int64_t, bool) {
  return row_features(self, self.dim() == 0 ? 1 : self.sizes().back());
}

}  // namespace

void register_argmax_features() {
  register_shape_features<at::_ops::argmax>({"rows", "width"}, &arg_rows);
  register_shape_features<at::_ops::argmin>({"rows", "width"}, &arg_rows);
  register_shape_features<at::_ops::max_dim>({"rows", "width"}, &dim_rows);
  register_shape_features<at::_ops::min_dim>({"rows", "width"}, &dim_rows);
}

}  // namespace native_ops::kernels
