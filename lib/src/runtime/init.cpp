// init(): reads the environment, loads plugins, orders the graphs and installs the routers.
#include "native_ops/faults.h"
#include "native_ops/log.h"
#include "native_ops/plugin.h"
#include "native_ops/policy.h"
#include "runtime/env.h"
#include "runtime/registry_state.h"

namespace native_ops {

namespace {

// NATIVE_OPS_PLUGINS: a ':'-separated list of plugin libraries, loaded by init().
void load_plugins_from_env() {
  const std::string list = env::get("NATIVE_OPS_PLUGINS").value_or("");
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(':', start), list.size());
    if (end > start) {
      try {
        load_plugin(list.substr(start, end - start));
      } catch (const Error& e) {
        throw Error(std::string("NATIVE_OPS_PLUGINS: ") + e.what());
      }
    }
    start = end + 1;
  }
}

}  // namespace

void init() {
  static std::mutex init_mutex;
  std::lock_guard<std::mutex> init_lock(init_mutex);
  detail::Registry& r = detail::registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.initialized) return;
  }
  // Read every variable before changing anything: a bad value leaves nothing installed.
  const log::Level level = log::level_from_env();
  // Both read, so that a bad value of either is an error whatever the other says.
  const bool native_ops_disable = env::flag("NATIVE_OPS_DISABLE");
  const bool torch_disable = env::flag("TORCH_DISABLE_NATIVE_JIT");
  const bool disabled = native_ops_disable || torch_disable;
  const std::string policy_path = env::get("NATIVE_OPS_ORDER_POLICY").value_or("");
  const std::string order_fn = env::get("NATIVE_OPS_ORDER_FN").value_or("");
  std::vector<std::pair<std::string, OnError>> on_error;
  if (const auto text = env::get("NATIVE_OPS_ON_ERROR"); text && !text->empty()) {  // "" is unset, as elsewhere
    try {
      on_error = detail::parse_on_error_list(*text);
    } catch (const Error& e) {
      throw Error("NATIVE_OPS_ON_ERROR='" + *text + "': " + e.what());
    }
  }
  if (!policy_path.empty() && !order_fn.empty()) {
    throw Error(
        "NATIVE_OPS_ORDER_POLICY and NATIVE_OPS_ORDER_FN are both set: a policy is the declarative form "
        "of an ordering function, so set one of them");
  }
  log::set_level(level);
  detail::ensure_builtins();
  if (!disabled) {
    load_plugins_from_env();
    for (const auto& [target, action] : on_error) {  // after the plugins: their node ids are targets too
      try {
        set_on_error(target, action);
      } catch (const Error& e) {
        throw Error(std::string("NATIVE_OPS_ON_ERROR: ") + e.what());
      }
    }
    // Not initialised yet: these order nodes only; the routers come below.
    if (!policy_path.empty()) {
      try {
        apply_policy(load_policy(policy_path), Apply::nodes_only);
      } catch (const Error& e) {
        throw Error(std::string("NATIVE_OPS_ORDER_POLICY: ") + e.what());
      }
    } else {
      if (!order_fn.empty()) {
        try {
          set_ordering_function(load_ordering_function(order_fn));
        } catch (const Error& e) {
          throw Error("NATIVE_OPS_ORDER_FN='" + order_fn + "': " + e.what());
        }
      }
      detail::apply_ordering(Apply::nodes_only);
    }
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  r.disabled = disabled;
  r.initialized = true;
  if (disabled) {
    log::info("native-ops is off (NATIVE_OPS_DISABLE or TORCH_DISABLE_NATIVE_JIT): no router installed");
    return;
  }
  try {
    for (auto& graph : r.graphs) detail::update_dispatcher(r, *graph, Apply::now);
  } catch (...) {
    for (auto& graph : r.graphs) graph->library.reset();
    r.initialized = false;
    throw;
  }
}

bool is_initialized() {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.initialized;
}

bool is_disabled() {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.disabled;
}

}  // namespace native_ops
