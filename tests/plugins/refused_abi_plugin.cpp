// A plugin built for another plugin ABI whose static constructor registers an override at
// dlopen, before its ABI can be checked: the node must end up unavailable, never called.
#include <ATen/core/Tensor.h>

#include "native_ops/native_ops.h"

namespace {

const std::string registered_at_load = native_ops::register_op_override<at::_ops::atan2>(
    "cpp", c10::DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
    [](const at::Tensor& a, const at::Tensor&) { return a; });  // wrong on purpose: must never run

}  // namespace

extern "C" __attribute__((visibility("default"))) int native_ops_plugin_abi() { return 999; }
extern "C" __attribute__((visibility("default"))) void native_ops_plugin_register() {}
