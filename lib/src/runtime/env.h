#pragma once
// Reading native-ops' environment variables, with errors that name the variable.

#include <optional>
#include <string>

namespace native_ops::env {

/// The value of `name`, or nullopt when unset.
std::optional<std::string> get(const char* name);
/// A boolean switch: unset, "", 0, false, no, off -> false; 1, true, yes, on -> true.
/// Throws native_ops::Error naming the variable for any other value.
bool flag(const char* name);

}  // namespace native_ops::env
