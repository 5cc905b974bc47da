// The shape features of topk that decide which kernel is fastest: rows, the width of the
// last dimension and k (selection.h).
#include <ATen/core/Tensor.h>
#include <ATen/ops/topk_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

void register_topk_features() {
  register_shape_features<at::_ops::topk>(
      {"rows", "width", "k"}, [](const at::Tensor& self, c10::SymInt k, int64_t, bool, bool) {
        const int64_t width = self.dim() == 0 ? 1 : self.size(-1);
        return tensor_features(self, {width > 0 ? self.numel() / width : 0, width, k.guard_int(__FILE__, __LINE__)});
      });
}

}  // namespace native_ops::kernels
