#include "runtime/names.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DispatchKeySet.h>

#include "native_ops/dsl.h"
#include "native_ops/error.h"
#include "native_ops/registry.h"
#include "native_ops/typed.h"

namespace native_ops {

OpSymbol parse_op_symbol(std::string_view op_symbol) {
  const auto valid_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  if (op_symbol.empty() || !std::all_of(op_symbol.begin(), op_symbol.end(), valid_char) || op_symbol.front() == '.' ||
      op_symbol.back() == '.') {
    throw Error("'" + excerpt(op_symbol) +
                "' is not an op symbol: write the op name, and a named overload after a dot "
                "(\"bmm\", \"add_.Tensor\")");
  }
  const size_t dot = op_symbol.find('.');
  OpSymbol parsed{std::string(op_symbol.substr(0, dot)), ""};
  if (dot != std::string_view::npos) {
    parsed.overload = std::string(op_symbol.substr(dot + 1));
    if (parsed.overload == "default") {
      parsed.overload.clear();
    }
  }
  return parsed;
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string excerpt(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  std::string shown;
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      shown += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      shown += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    }
  }
  if (text.size() > kMaxShown) shown += "... (" + std::to_string(text.size()) + " bytes)";
  return shown;
}

std::vector<std::string> closest(std::string_view wanted, const std::vector<std::string>& candidates, size_t max) {
  if (wanted.size() > kMaxSuggestedName) return {};
  const size_t limit = std::max<size_t>(2, wanted.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& candidate : candidates) {
    // A truncated name ("dsl_prio") is as plausible a typo as one wrong letter.
    const bool truncated = wanted.size() >= 3 && candidate.rfind(wanted, 0) == 0;
    const size_t distance = truncated ? 1 : edit_distance(wanted, candidate);
    if (distance <= limit) {
      scored.emplace_back(distance, candidate);
    }
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> best;
  for (size_t i = 0; i < scored.size() && best.size() < max; ++i) {
    if (std::find(best.begin(), best.end(), scored[i].second) == best.end()) {
      best.push_back(scored[i].second);
    }
  }
  return best;
}

std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates) {
  const std::vector<std::string> best = closest(wanted, candidates);
  if (best.empty()) {
    return "";
  }
  std::string text = " Did you mean: ";
  for (size_t i = 0; i < best.size(); ++i) {
    text += (i ? ", " : "") + best[i];
  }
  return text + "?";
}

std::string unknown_op_message(std::string_view lib_symbol, const OpSymbol& symbol) {
  return "unknown op " + std::string(lib_symbol) + "::" + excerpt(symbol.str()) + "." +
         did_you_mean(symbol.str(), detail::dispatcher_op_symbols(lib_symbol));
}

std::string unknown_dsl_message(std::string_view name) {
  return "unknown dsl '" + excerpt(name) + "'." + did_you_mean(name, dsl_names()) + " `native-ops dsls` lists the DSLs";
}

const Dsl& require_dsl(std::string_view name) {
  const Dsl* dsl = find_dsl(name);
  if (dsl == nullptr) throw Error(unknown_dsl_message(name));
  return *dsl;
}

std::string unknown_node_message(std::string_view id, const std::vector<std::string>& node_ids) {
  return "unknown node id '" + excerpt(id) + "'." + did_you_mean(id, node_ids) +
         " `native-ops list` lists the node ids";
}

NodeInfo require_node(std::string_view id) {
  if (std::optional<NodeInfo> node = find_node(id)) return std::move(*node);
  std::vector<std::string> ids;
  for (const GraphInfo& graph : graphs()) {
    for (const NodeInfo& node : graph.nodes) ids.push_back(node.id);
  }
  throw Error(unknown_node_message(id, ids));
}

namespace detail {

std::string unknown_node_or_dsl(const std::string& name, const std::vector<std::string>& node_ids) {
  std::vector<std::string> names = dsl_names();
  const bool is_dsl = std::find(names.begin(), names.end(), name) != names.end();
  if (is_dsl || std::find(node_ids.begin(), node_ids.end(), name) != node_ids.end()) return "";
  names.insert(names.end(), node_ids.begin(), node_ids.end());
  return "\"" + excerpt(name) + "\" is neither a node id nor a dsl." + did_you_mean(name, names);
}

std::vector<std::string> dispatcher_op_symbols(std::string_view lib_symbol) {
  const std::string prefix = std::string(lib_symbol) + "::";
  std::vector<std::string> symbols;
  for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
    if (name.name.rfind(prefix, 0) == 0) {
      symbols.push_back(op_symbol_of(name.name, name.overload_name));
    }
  }
  return symbols;
}

void check_override_key(c10::DispatchKey key) {
  using c10::DispatchKey;
  switch (key) {
    case DispatchKey::Meta:
      throw Error(
          "dispatch key Meta is refused: Meta kernels compute shapes only; register at a "
          "backend key such as CPU or CUDA");
    case DispatchKey::CompositeImplicitAutograd:
    case DispatchKey::CompositeExplicitAutograd:
    case DispatchKey::CompositeExplicitAutogradNonFunctional:
      throw Error(std::string("dispatch key ") + c10::toString(key) +
                  " is refused: it is an alias key that fills many backends at once; register at "
                  "a backend key such as CPU or CUDA");
    default: break;
  }
  if (c10::toFunctionalityKey(key) != DispatchKey::Dense ||
      c10::toBackendComponent(key) == c10::BackendComponent::InvalidBit) {
    throw Error(std::string("dispatch key ") + c10::toString(key) +
                " is not a backend key: register overrides at a backend key such as CPU or CUDA");
  }
}

}  // namespace detail

c10::DispatchKey parse_dispatch_key(std::string_view name) {
  static const std::vector<std::string> backend_keys = {"CPU", "CUDA", "XPU", "MPS", "HIP", "PrivateUse1"};
  try {
    return c10::parseDispatchKey(std::string(name));
  } catch (const std::exception&) {
    throw Error("unknown dispatch key '" + excerpt(name) + "'." + did_you_mean(name, backend_keys) +
                " Backend keys: CPU, CUDA, XPU, MPS, HIP, PrivateUse1");
  }
}

std::string dtype_name(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::kHalf: return "f16";
    case c10::kBFloat16: return "bf16";
    case c10::kFloat: return "f32";
    case c10::kDouble: return "f64";
    case c10::kBool: return "bool";
    case c10::kByte: return "u8";
    case c10::kChar: return "i8";
    case c10::kShort: return "i16";
    case c10::kInt: return "i32";
    case c10::kLong: return "i64";
    default: return c10::toString(dtype);
  }
}

c10::ScalarType parse_dtype(std::string_view name) {
  static const std::vector<std::pair<std::vector<std::string_view>, c10::ScalarType>> names = {
      {{"f16", "float16", "half"}, c10::kHalf},
      {{"bf16", "bfloat16"}, c10::kBFloat16},
      {{"f32", "float32", "float"}, c10::kFloat},
      {{"f64", "float64", "double"}, c10::kDouble},
      {{"bool"}, c10::kBool},
      {{"u8", "uint8"}, c10::kByte},
      {{"i8", "int8"}, c10::kChar},
      {{"i16", "int16", "short"}, c10::kShort},
      {{"i32", "int32", "int"}, c10::kInt},
      {{"i64", "int64", "long"}, c10::kLong}};
  std::string known;
  for (const auto& [aliases, dtype] : names) {
    for (std::string_view alias : aliases) {
      if (alias == name) return dtype;
    }
    known += (known.empty() ? "" : ", ") + std::string(aliases.front());
  }
  throw Error("unknown dtype '" + std::string(name) + "': use one of " + known + " (or torch's names, e.g. bfloat16)");
}

}  // namespace native_ops

namespace native_ops::detail {

std::string op_symbol_of(std::string_view qualified_name, std::string_view overload) {
  const size_t colons = qualified_name.find("::");
  std::string symbol(colons == std::string_view::npos ? qualified_name : qualified_name.substr(colons + 2));
  if (!overload.empty()) {
    symbol += ".";
    symbol += overload;
  }
  return symbol;
}

}  // namespace native_ops::detail
