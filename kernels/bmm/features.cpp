// The shape features of bmm that decide which kernel is fastest: the batch and the output's
// rows and columns (selection.h). The overrides take an inner dimension of 1 only.
#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

void register_bmm_features() {
  register_shape_features<at::_ops::bmm>({"batch", "m", "n"}, [](const at::Tensor& self, const at::Tensor& mat2) {
    if (self.dim() != 3 || mat2.dim() != 3) return tensor_features(self, {0, 0, 0});  // aten reports the error
    return tensor_features(self, {self.size(0), self.size(1), mat2.size(2)});
  });
}

}  // namespace native_ops::kernels
