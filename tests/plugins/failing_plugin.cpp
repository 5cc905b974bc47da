// A plugin whose registration fails half-way: its first node must end up unavailable.
#include <ATen/core/Tensor.h>

#include "native_ops/native_ops.h"
#include "native_ops/plugin.h"

namespace {

void register_then_fail() {
  native_ops::register_op_override<at::_ops::atan2>(
      "cpp", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
      [](const at::Tensor& a, const at::Tensor& b) { return native_ops::call_original<at::_ops::atan2>(a, b); });
  native_ops::register_op_override(
      "cpp", "aten", "no_such_op", c10::DispatchKey::CPU, [](const native_ops::BoxedArgs&) { return true; },
      [](const c10::OperatorHandle&, torch::jit::Stack&) {});
}

}  // namespace

NATIVE_OPS_PLUGIN(register_then_fail)
