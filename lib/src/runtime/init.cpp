// init(): reads the environment, loads plugins, orders the graphs and installs the routers.
#include <algorithm>
#include <cstring>
#include <map>

#include "native_ops/faults.h"
#include "native_ops/log.h"
#include "native_ops/names.h"
#include "native_ops/plugin.h"
#include "native_ops/policy.h"
#include "native_ops/selection.h"
#include "runtime/env.h"
#include "runtime/registry_state.h"
#include "runtime/tuned_tables.h"

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

// Puts the shipped selection tables in force: every policy applied from now on keeps them
// for the graphs it has no table for. Tables that do not parse, or do not fit this build
// (a graph or node it lacks: drop_tuned_tables), are all left out with a warning: init()
// never fails for them.
void set_tuned_tables(std::vector<Policy> tables) {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.tuned_tables = std::move(tables);
}

void drop_tuned_tables(const Error& why) {
  log::warn(std::string("the tuned selection tables are left out: ") + why.what());
  set_tuned_tables({});
}

void load_tuned_tables() {
  try {
    set_tuned_tables(detail::tables_for_gpus(detail::tuned_policies(), nvidia_gpu_models()));
  } catch (const Error& e) {
    drop_tuned_tables(e);
  }
}

}  // namespace

namespace detail {

std::vector<Policy> tables_for_gpus(const std::vector<TunedPolicy>& files, const std::vector<std::string>& gpu_models) {
  std::vector<Policy> tables;
  for (const TunedPolicy& file : files) {
    const bool names_a_gpu = std::any_of(gpu_models.begin(), gpu_models.end(), [&](const std::string& model) {
      return std::strstr(file.json, ("\"" + model + "\"").c_str()) != nullptr;
    });
    if (gpu_models.empty() || names_a_gpu) tables.push_back(parse_policy(file.json, file.name));
  }
  // The rank among this machine's GPUs of the one a table was tuned on: the lowest is kept.
  auto rank = [&](const PolicySelection& selection) {
    const auto& device = selection.table.device;
    const auto found = device ? std::find(gpu_models.begin(), gpu_models.end(), device->name) : gpu_models.end();
    return found - gpu_models.begin();
  };
  auto graph = [](const PolicySelection& selection) {
    return parse_op_symbol(selection.op_symbol).str() + "@" + selection.key;
  };
  std::map<std::string, const PolicySelection*> keep;  // graph -> its table in force
  for (const Policy& file : tables) {
    for (const PolicySelection& selection : file.select) {
      const auto [at, added] = keep.emplace(graph(selection), &selection);
      if (!added && rank(selection) < rank(*at->second)) at->second = &selection;
    }
  }
  for (Policy& file : tables) {
    std::vector<PolicySelection> kept;
    for (PolicySelection& selection : file.select) {
      if (keep.at(graph(selection)) == &selection) kept.push_back(std::move(selection));
    }
    file.select = std::move(kept);
  }
  return tables;
}

}  // namespace detail

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
  const std::optional<std::string> tuned_switch = env::get("NATIVE_OPS_TUNED_TABLES");
  const bool tuned_tables = !tuned_switch || tuned_switch->empty() || env::flag("NATIVE_OPS_TUNED_TABLES");
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
    bool program_ordering = false;  // set_ordering_function() before init(): the program's choice
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      program_ordering = static_cast<bool>(r.ordering);
    }
    const bool with_tuned_tables = tuned_tables && order_fn.empty() && !program_ordering;
    if (with_tuned_tables) load_tuned_tables();
    // Not initialised yet: these order nodes only; the routers come below.
    if (!policy_path.empty()) {
      if (with_tuned_tables) {
        try {
          plan_policy(Policy{});  // the tables alone: a misfit is theirs, not the policy's
        } catch (const Error& e) {
          drop_tuned_tables(e);
        }
      }
      try {
        apply_policy(load_policy(policy_path), Apply::nodes_only);
      } catch (const Error& e) {
        throw Error(std::string("NATIVE_OPS_ORDER_POLICY: ") + e.what());
      }
    } else if (with_tuned_tables) {
      try {
        apply_policy(Policy{}, Apply::nodes_only);  // registration order and the tuned tables
      } catch (const Error& e) {
        drop_tuned_tables(e);
        detail::apply_ordering(Apply::nodes_only);
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

namespace detail {

std::vector<Policy> tuned_tables() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.tuned_tables;
}

}  // namespace detail

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
