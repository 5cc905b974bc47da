#pragma once
// Plugins: shared libraries that register overrides when native-ops loads them
// (`native-ops --load LIB`, NATIVE_OPS_PLUGINS, or native_ops::load_plugin).
//
// A plugin defines its entry points with one macro:
//
//   void register_my_overrides() {
//     native_ops::register_op_override<at::_ops::bmm>("cpp", c10::DispatchKey::CPU, cond, impl);
//   }
//   NATIVE_OPS_PLUGIN(register_my_overrides)
//
// Its nodes are listed with the library's path as their origin.

#include <string>
#include "native_ops/export.h"

#include "native_ops/registry.h"

/// Bumped whenever what a plugin may assume of native-ops changes incompatibly.
#define NATIVE_OPS_PLUGIN_ABI 2

#define NATIVE_OPS_PLUGIN(register_function)                                                                      \
  extern "C" __attribute__((visibility("default"))) int native_ops_plugin_abi() { return NATIVE_OPS_PLUGIN_ABI; } \
  extern "C" __attribute__((visibility("default"))) void native_ops_plugin_register() { register_function(); }

namespace native_ops {

/// The type of an ordering function that a shared library exports for
/// NATIVE_OPS_ORDER_FN=LIB.so:symbol: declare it extern "C" so that its name is `symbol`.
using OrderingFunctionPointer = Graph (*)(const std::string& op_symbol, c10::DispatchKey key, const Graph& graph);

/// Loads the ordering function `symbol` from the library `LIB.so` named by "LIB.so:symbol".
/// Throws native_ops::Error when the text is malformed, LIB.so is a bare name (a path is
/// required: libraries are never searched for), the library cannot be loaded, or it has
/// no such symbol.
NATIVE_OPS_API OrderingFn load_ordering_function(const std::string& library_and_symbol);

/// Loads the plugin at `path` and runs its registration, once per path. Throws
/// native_ops::Error when `path` is a bare name (a path is required: plugins are never
/// searched for, not in the current directory either), the file is missing, cannot be
/// loaded, is not a native-ops
/// plugin, or was built for another plugin ABI. If its registration throws, the nodes it
/// had registered are kept but unavailable (the reason names the error), and the error
/// propagates.
NATIVE_OPS_API void load_plugin(const std::string& path);

}  // namespace native_ops
