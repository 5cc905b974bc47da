// A plugin whose registration throws something that is not a std::exception after
// registering a node: the node must end up unavailable and the error reach the caller.
#include <ATen/core/Tensor.h>

#include "native_ops/native_ops.h"
#include "native_ops/plugin.h"

namespace {

void register_then_throw() {
  native_ops::register_op_override<at::_ops::atan2>(
      "cpp", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
      [](const at::Tensor& a, const at::Tensor&) { return a; });  // wrong on purpose: must never run
  throw 42;
}

}  // namespace

NATIVE_OPS_PLUGIN(register_then_throw)
