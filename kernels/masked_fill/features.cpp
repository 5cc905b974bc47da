// The shape features of masked_fill.Scalar and masked_fill_.Scalar that decide which kernel
// is fastest: how many input rows each mask row is used for, and the mask rows' width
// (mask_broadcast.h; selection.h).
#include <optional>

#include <ATen/core/Tensor.h>
#include <ATen/ops/masked_fill_ops.h>

#include "mask_broadcast.h"
#include "native_ops/selection.h"

namespace native_ops::kernels {

namespace {

ShapeFeatures mask_features(const at::Tensor& self, const at::Tensor& mask) {
  const std::optional<MaskBroadcast> shape = mask_broadcast(self.sizes(), mask.sizes());
  if (shape.has_value()) return tensor_features(self, {shape->repeats, shape->width});
  const int64_t mask_elements = mask.numel();
  return tensor_features(self, {mask_elements == 0 ? 0 : self.numel() / mask_elements, mask_elements});
}

}  // namespace

void register_masked_fill_features() {
  register_shape_features<at::_ops::masked_fill_Scalar>(
      {"repeats", "mask_width"},
      [](const at::Tensor& self, const at::Tensor& mask, const c10::Scalar&) { return mask_features(self, mask); });
  register_shape_features<at::_ops::masked_fill__Scalar>(
      {"repeats", "mask_width"},
      [](at::Tensor& self, const at::Tensor& mask, const c10::Scalar&) { return mask_features(self, mask); });
}

}  // namespace native_ops::kernels
