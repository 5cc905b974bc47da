#pragma once
// The selection tables that ship with native-ops (policies/tuned/*.json), compiled in by
// lib/CMakeLists.txt. init() applies them unless NATIVE_OPS_TUNED_TABLES=0, a policy or an
// ordering function is set; each table holds for the device it was tuned on only.

#include <vector>

namespace native_ops::detail {

struct TunedPolicy {
  const char* name;  // "policies/tuned/h200-sm90.json"
  const char* json;
};

const std::vector<TunedPolicy>& tuned_policies();

}  // namespace native_ops::detail
