// libFuzzer target: the policy parser and its validator. Any input must either parse and
// validate, or be refused with native_ops::Error; nothing else may escape or crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "native_ops/error.h"
#include "native_ops/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const native_ops::Policy policy = native_ops::parse_policy(text, "fuzz");
    native_ops::plan_policy(policy);  // checks every name against the registered graphs
  } catch (const native_ops::Error&) {
  }
  return 0;
}
