#pragma once
// Putting routers into the dispatcher and taking them out. Internal to lib/src.

#include <memory>
#include <string>
#include <vector>

#include <torch/library.h>

#include "native_ops/detail/router.h"

namespace native_ops::detail {

/// The kernel the dispatcher runs now for (op, key): what a router installed now
/// replaces. A copy: it keeps working after the router is installed.
c10::KernelFunction capture_original(const c10::OperatorHandle& op, c10::DispatchKey key);

/// The kernels registered at (op, key) by anyone but libtorch and native-ops, as the
/// dispatcher describes them ("registered at FILE:LINE"): other libraries overriding the
/// same (op, key). libtorch's own kernel is the oldest registration at the key.
std::vector<std::string> foreign_kernels(const c10::OperatorHandle& op, c10::DispatchKey key);

/// The dispatcher kernel of a boxed router.
torch::CppFunction boxed_router_kernel(const RouterState* router);

/// Registers `kernel` for `qualified_name` ("aten::add_.Tensor") at `key`. Destroying the
/// returned library restores the previous kernel exactly. The dispatcher's one-time
/// "overriding a previously registered kernel" warning goes to the DEBUG log.
std::unique_ptr<torch::Library> install_router(const std::string& lib_symbol, c10::DispatchKey key,
                                               const std::string& qualified_name, torch::CppFunction kernel);

}  // namespace native_ops::detail
