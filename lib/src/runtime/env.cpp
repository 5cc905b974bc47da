#include "runtime/env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "native_ops/error.h"

namespace native_ops::env {

std::optional<std::string> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    return std::nullopt;
  }
  return std::string(value);
}

bool flag(const char* name) {
  std::string value = get(name).value_or("");
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value.empty() || value == "0" || value == "false" || value == "no" || value == "off") {
    return false;
  }
  if (value == "1" || value == "true" || value == "yes" || value == "on") {
    return true;
  }
  throw Error(std::string(name) + "='" + get(name).value_or("") +
              "' is not a switch: set it to 1 (on) or 0 (off), or unset it");
}

}  // namespace native_ops::env
