// A third-party override pack: its own DSL and a typed override of aten::hypot.
#include <ATen/ATen.h>

#include "native_ops/native_ops.h"
#include "native_ops/plugin.h"

namespace {

void register_vendor_overrides() {
  native_ops::register_dsl(native_ops::make_compiled_in_dsl("vendor", "0.1"));
  native_ops::register_op_override<at::_ops::hypot>(
      "vendor", c10::DispatchKey::CPU,
      [](const at::Tensor& a, const at::Tensor& b) -> native_ops::Verdict {
        if (a.sizes() != b.sizes()) return native_ops::decline("broadcasting hypot is left to aten");
        return true;
      },
      [](const at::Tensor& a, const at::Tensor& b) { return at::sqrt(a * a + b * b); });
}

}  // namespace

NATIVE_OPS_PLUGIN(register_vendor_overrides)
