// The shape feature of add_.Tensor that decides which kernel is fastest: how many elements
// it adds (selection.h).
#include <ATen/core/Tensor.h>
#include <ATen/ops/add_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

void register_add__features() {
  register_shape_features<at::_ops::add__Tensor>({"elements"},
                                                 [](const at::Tensor& self, const at::Tensor&, const at::Scalar&) {
                                                   return tensor_features(self, {self.numel()});
                                                 });
}

}  // namespace native_ops::kernels
