#pragma once
// The `native_dsl` logger. Quiet by default (warnings only).
//
// NATIVE_OPS_LOG=trace|debug|info|warn|error|off sets the level; TORCH_LOGS=+native_dsl
// turns on debug, TORCH_LOGS=native_dsl info, TORCH_LOGS=-native_dsl errors only.
// INFO: registration diagnostics (missing ops, unavailable DSLs). WARN: misuse (failing
// conds, failing ordering functions). DEBUG: one line per routed call.
//
// The spdlog logger lives behind this header so that no torch translation unit includes
// spdlog (libtorch bundles its own fmt, which differs from the one spdlog links).

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include "native_ops/export.h"

namespace native_ops::log {

enum class Level { trace, debug, info, warn, error, off };

/// Parses "trace", "debug", "info", "warn", "error" or "off"; nullopt for anything else.
NATIVE_OPS_API std::optional<Level> parse_level(std::string_view text);
/// The level the environment asks for (NATIVE_OPS_LOG first, then TORCH_LOGS).
/// Throws native_ops::Error naming the variable when its value is not understood.
NATIVE_OPS_API Level level_from_env();
/// Sets the level of the `native_dsl` logger.
NATIVE_OPS_API void set_level(Level level);
NATIVE_OPS_API Level level();

NATIVE_OPS_API void trace(const std::string& message);
NATIVE_OPS_API void debug(const std::string& message);
NATIVE_OPS_API void info(const std::string& message);
NATIVE_OPS_API void warn(const std::string& message);
NATIVE_OPS_API void error(const std::string& message);

namespace detail {
extern NATIVE_OPS_API std::atomic<bool> debug_on;
}
/// True when DEBUG lines are logged; a relaxed load, so the router can ask on every call.
inline bool debug_enabled() { return detail::debug_on.load(std::memory_order_relaxed); }

}  // namespace native_ops::log
