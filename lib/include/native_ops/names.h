#pragma once
// Names: op symbols, and the lookups of DSLs and node ids that every tool shares, so that
// an unknown name gets the same message wherever it is given.

#include <string>
#include <string_view>
#include <vector>

#include "native_ops/export.h"

#include <c10/core/ScalarType.h>
#include "native_ops/registry.h"

namespace native_ops {

class Dsl;

/// An op symbol split at its first '.': "add_.Tensor" -> {"add_", "Tensor"};
/// "bmm" and "bmm.default" -> {"bmm", ""}.
struct OpSymbol {
  std::string name;
  std::string overload;
  /// "bmm" or "add_.Tensor": the form graphs and node ids use.
  std::string str() const { return overload.empty() ? name : name + "." + overload; }
};

/// Throws native_ops::Error for an empty or malformed symbol.
NATIVE_OPS_API OpSymbol parse_op_symbol(std::string_view op_symbol);

/// At most 64 characters of `text`, for an error message to quote: non-printable bytes
/// escaped (\xNN), a longer text cut with its length said ("abc... (1048576 bytes)").
NATIVE_OPS_API std::string excerpt(std::string_view text);

/// Names longer than this get no suggestions: no name is, and the edit distance against
/// every candidate would cost their product.
inline constexpr size_t kMaxSuggestedName = 256;

/// Up to `max` candidates closest to `wanted` by edit distance, closest first, among
/// those close enough to be a plausible typo; none when `wanted` is longer than
/// kMaxSuggestedName.
NATIVE_OPS_API std::vector<std::string> closest(std::string_view wanted, const std::vector<std::string>& candidates,
                                                size_t max = 3);

/// " Did you mean: a, b?" or "" when there is nothing close.
NATIVE_OPS_API std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates);

/// "unknown op aten::x. Did you mean: ...?", the candidates being the dispatcher's ops in
/// namespace `lib_symbol`.
NATIVE_OPS_API std::string unknown_op_message(std::string_view lib_symbol, const OpSymbol& symbol);

/// "unknown dsl 'x'. Did you mean: y? `native-ops dsls` lists the DSLs": what every tool
/// says of a DSL name that is not registered.
NATIVE_OPS_API std::string unknown_dsl_message(std::string_view name);

/// The DSL named `name`; throws native_ops::Error with unknown_dsl_message() otherwise.
NATIVE_OPS_API const Dsl& require_dsl(std::string_view name);

/// "unknown node id 'x'. Did you mean: y? `native-ops list` lists the node ids", the
/// suggestions drawn from `node_ids`: what every tool says of an id that names no node.
NATIVE_OPS_API std::string unknown_node_message(std::string_view id, const std::vector<std::string>& node_ids);

/// The node with id `id`; throws native_ops::Error with unknown_node_message() otherwise.
NATIVE_OPS_API NodeInfo require_node(std::string_view id);

/// A short dtype name: "f32", "bf16", "i64".
NATIVE_OPS_API std::string dtype_name(c10::ScalarType dtype);

/// The dtype a name stands for: a short name ("bf16") or torch's ("bfloat16", "float").
/// Throws native_ops::Error naming the accepted names.
NATIVE_OPS_API c10::ScalarType parse_dtype(std::string_view name);

}  // namespace native_ops
