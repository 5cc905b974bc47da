#pragma once
// The runtime's own name checks, beside the shared ones of native_ops/names.h.

#include <string>
#include <string_view>
#include <vector>

#include <c10/core/DispatchKey.h>

#include "native_ops/names.h"

namespace native_ops::detail {

/// "" when `name` is one of `node_ids` or a registered DSL's name; otherwise what is wrong
/// with it ("\"x\" is neither a node id nor a dsl.", with the closest names suggested).
std::string unknown_node_or_dsl(const std::string& name, const std::vector<std::string>& node_ids);

/// The op symbols ("add.Tensor") the dispatcher knows in namespace `lib_symbol`.
std::vector<std::string> dispatcher_op_symbols(std::string_view lib_symbol);

/// Throws native_ops::Error unless `key` is a backend key an override may use.
void check_override_key(c10::DispatchKey key);

}  // namespace native_ops::detail
