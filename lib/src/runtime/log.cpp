// The spdlog side of native_ops/log.h. No torch header may be included here: libtorch
// ships its own fmt, and spdlog is built against the system's.
#include "native_ops/log.h"

#include <memory>
#include <mutex>
#include <sstream>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "native_ops/error.h"
#include "runtime/env.h"

namespace native_ops::log {

namespace detail {
std::atomic<bool> debug_on{false};
}

namespace {

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::trace: return spdlog::level::trace;
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
    case Level::off: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

// TORCH_LOGS is a comma-separated list; only the native_dsl entry concerns us.
std::optional<Level> level_from_torch_logs(const std::string& value) {
  std::stringstream entries(value);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    if (entry == "+native_dsl") return Level::debug;
    if (entry == "native_dsl") return Level::info;
    if (entry == "-native_dsl") return Level::error;
  }
  return std::nullopt;
}

Level env_level_or_default() {
  try {
    return level_from_env();
  } catch (const Error&) {
    return Level::warn;  // init() reports the bad value; logging must not throw
  }
}

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto made = spdlog::stderr_color_mt("native_dsl");
    made->set_pattern("[%n] %l: %v");
    const Level level = env_level_or_default();
    made->set_level(to_spdlog(level));
    detail::debug_on.store(level <= Level::debug, std::memory_order_relaxed);
    return made;
  }();
  return *instance;
}

}  // namespace

std::optional<Level> parse_level(std::string_view text) {
  if (text == "trace") return Level::trace;
  if (text == "debug") return Level::debug;
  if (text == "info") return Level::info;
  if (text == "warn" || text == "warning") return Level::warn;
  if (text == "error") return Level::error;
  if (text == "off") return Level::off;
  return std::nullopt;
}

Level level_from_env() {
  if (auto value = env::get("NATIVE_OPS_LOG"); value && !value->empty()) {
    if (auto level = parse_level(*value)) {
      return *level;
    }
    throw Error("NATIVE_OPS_LOG='" + *value + "' is not a log level: use trace, debug, info, warn, error or off");
  }
  if (auto value = env::get("TORCH_LOGS")) {
    if (auto level = level_from_torch_logs(*value)) {
      return *level;
    }
  }
  return Level::warn;
}

void set_level(Level level) {
  logger().set_level(to_spdlog(level));
  detail::debug_on.store(level <= Level::debug, std::memory_order_relaxed);
}

Level level() {
  switch (logger().level()) {
    case spdlog::level::trace: return Level::trace;
    case spdlog::level::debug: return Level::debug;
    case spdlog::level::info: return Level::info;
    case spdlog::level::warn: return Level::warn;
    case spdlog::level::err: return Level::error;
    default: return Level::off;
  }
}

void trace(const std::string& message) { logger().trace(message); }
void debug(const std::string& message) { logger().debug(message); }
void info(const std::string& message) { logger().info(message); }
void warn(const std::string& message) { logger().warn(message); }
void error(const std::string& message) { logger().error(message); }

}  // namespace native_ops::log
