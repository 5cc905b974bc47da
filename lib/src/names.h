#pragma once
// Names of ops and dispatch keys: parsing, checking, and "did you mean" suggestions.

#include <string>
#include <string_view>
#include <vector>

#include <c10/core/DispatchKey.h>

namespace native_ops::detail {

/// An op symbol split at its first '.': "add_.Tensor" -> {"add_", "Tensor"};
/// "bmm" and "bmm.default" -> {"bmm", ""}.
struct OpSymbol {
  std::string name;
  std::string overload;
  /// "bmm" or "add_.Tensor": the form graphs and node ids use.
  std::string str() const { return overload.empty() ? name : name + "." + overload; }
};
/// Throws native_ops::Error for an empty or malformed symbol.
OpSymbol parse_op_symbol(std::string_view op_symbol);

/// Up to `max` candidates closest to `wanted` by edit distance, closest first, among
/// those close enough to be a plausible typo.
std::vector<std::string> closest(std::string_view wanted, const std::vector<std::string>& candidates,
                                 size_t max = 3);
/// " Did you mean: a, b?" or "" when there is nothing close.
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates);

/// "" when `name` is one of `node_ids` or a registered DSL's name; otherwise what is wrong
/// with it ("\"x\" is neither a node id nor a dsl.", with the closest names suggested).
std::string unknown_node_or_dsl(const std::string& name, const std::vector<std::string>& node_ids);

/// The op symbols ("add.Tensor") the dispatcher knows in namespace `lib_symbol`.
std::vector<std::string> dispatcher_op_symbols(std::string_view lib_symbol);

/// Throws native_ops::Error unless `key` is a backend key an override may use.
void check_override_key(c10::DispatchKey key);

}  // namespace native_ops::detail
