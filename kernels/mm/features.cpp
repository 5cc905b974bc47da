// The shape features of mm that decide which kernel is fastest (selection.h): the output's
// rows m, the inner dimension k, the output's columns n, and which operands are transposed
// (column-major): 2 for self, 1 for mat2, 3 for both.
#include <ATen/core/Tensor.h>
#include <ATen/ops/mm_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

void register_mm_features() {
  register_shape_features<at::_ops::mm>(
      {"m", "k", "n", "transposed"}, [](const at::Tensor& self, const at::Tensor& mat2) {
        if (self.dim() != 2 || mat2.dim() != 2) return tensor_features(self, {0, 0, 0, 0});  // aten reports the error
        // A transposed single row ([1, k], strides (1, 1)) counts as column-major.
        const auto column_major = [](const at::Tensor& x) {
          return x.stride(0) == 1 && (x.stride(1) != 1 || x.size(0) == 1);
        };
        return tensor_features(self, {self.size(0), self.size(1), mat2.size(1),
                                      (column_major(self) ? 2 : 0) + (column_major(mat2) ? 1 : 0)});
      });
}

}  // namespace native_ops::kernels
