// The shape features of multinomial that decide which kernel is fastest: rows and
// categories a row (selection.h).
#include <optional>

#include <ATen/core/Tensor.h>
#include <ATen/ops/multinomial_ops.h>

#include "native_ops/selection.h"

namespace native_ops::kernels {

void register_multinomial_features() {
  register_shape_features<at::_ops::multinomial>(
      {"rows", "width"}, [](const at::Tensor& self, c10::SymInt, bool, std::optional<at::Generator>) {
        return row_features(self, self.dim() == 0 ? 1 : self.sizes().back());
      });
}

}  // namespace native_ops::kernels
