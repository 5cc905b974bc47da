// The shape features of embedding_dense_backward that decide which kernel is fastest: the
// number of indices, the weight rows and their width (selection.h).
#include <ATen/core/Tensor.h>
#include <ATen/ops/embedding_dense_backward_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

void register_embedding_backward_features() {
  register_shape_features<at::_ops::embedding_dense_backward>(
      {"indices", "num_weights", "width"},
      [](const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights, c10::SymInt, bool) {
        return tensor_features(
            grad, {indices.numel(), num_weights.guard_int(__FILE__, __LINE__), grad.dim() > 0 ? grad.size(-1) : 0});
      });
}

}  // namespace native_ops::kernels
