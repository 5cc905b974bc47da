#pragma once
// What the build generates from the DSL table (lib/src/dsls/dsls.cmake) and the op list
// (kernels/ops.cmake), in cmake/NativeOpsOp.cmake: the built-in DSLs and the built-in
// ops' registrations, each in its table's order.

#include <memory>
#include <vector>

#include "native_ops/dsl.h"

namespace native_ops::detail {

/// One descriptor per built-in DSL, in the DSL table's order.
std::vector<std::unique_ptr<Dsl>> make_builtin_dsls();

/// Registers every built-in op's overrides: the ops in the op list's order, and within an
/// op its DSLs in the DSL table's order. Called once, when the registry is first used.
void register_builtin_overrides();

}  // namespace native_ops::detail
