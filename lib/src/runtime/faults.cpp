// Fault containment (faults.h): the on_error settings, and what the router does when an
// override's kernel cannot run.
#include "native_ops/faults.h"

#include <algorithm>

#include "native_ops/error.h"
#include "native_ops/log.h"
#include "runtime/names.h"
#include "runtime/registry_state.h"

namespace native_ops {

namespace detail {

namespace {

// Every node's resolved action, after the settings changed. Call with the mutex held.
void resolve_all(Registry& r) {
  for (auto& graph : r.graphs) {
    for (auto& node : graph->nodes) node->strict_on_error.store(strict_on_error(r, *node), std::memory_order_relaxed);
  }
}

std::vector<std::string> node_ids(const Registry& r) {
  std::vector<std::string> ids;
  for (const auto& graph : r.graphs) {
    for (const auto& node : graph->nodes) ids.push_back(node->id);
  }
  return ids;
}

}  // namespace

bool strict_on_error(const Registry& r, const Node& node) {
  for (const std::string& target : {node.id, node.dsl, std::string("*")}) {
    const auto found = r.on_error.find(target);
    if (found != r.on_error.end()) return found->second == OnError::strict;
  }
  return false;  // the default: fallback
}

std::vector<std::pair<std::string, OnError>> parse_on_error_list(std::string_view text) {
  std::vector<std::pair<std::string, OnError>> settings;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, comma - start);
    const size_t equals = entry.find('=');
    if (equals == std::string_view::npos) {
      settings.emplace_back("*", parse_on_error(entry));
    } else if (equals == 0) {
      throw Error("'" + std::string(entry) + "' names no target: write TARGET=ACTION, TARGET a node id, a dsl or *");
    } else {
      settings.emplace_back(std::string(entry.substr(0, equals)), parse_on_error(entry.substr(equals + 1)));
    }
    start = comma + 1;
  }
  return settings;
}

bool may_contain_kernel_failure(const ThreadRouting& t, const Node& node) {
  return node.kernels_load_at_run_time && t.strict_depth == 0 && !node.strict_on_error.load(std::memory_order_relaxed);
}

bool contain_kernel_failure(ThreadRouting& t, const RouterState& router, const Node& node,
                            const KernelUnavailable& failure) {
  if (!may_contain_kernel_failure(t, node)) return false;
  recount(t, router.index, node.slot, kFallthroughSlot);  // the original runs this call
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& graph : r.graphs) {
    for (auto& owned : graph->nodes) {
      if (owned.get() != &node || !owned->unavailable_reason.empty()) continue;
      owned->unavailable_reason = std::string("its kernel failed, so aten runs instead: ") + failure.what();
      log::warn(router.name + ": " + node.id + " (dsl " + node.dsl + ") is switched off: " + failure.what() +
                ". aten runs instead (on_error fallback; set it to strict to get the error: see faults.h)");
      // Only the route list changes: the router stays installed while it is running.
      if (graph->router != nullptr) publish(*graph, graph->active_nodes());
    }
  }
  return true;
}

}  // namespace detail

OnError parse_on_error(std::string_view text) {
  if (text == "fallback") return OnError::fallback;
  if (text == "strict") return OnError::strict;
  throw Error("'" + std::string(text) + "' is not an on_error action: use fallback or strict");
}

std::string_view to_string(OnError action) { return action == OnError::strict ? "strict" : "fallback"; }

void set_on_error(const std::string& target, OnError action) {
  detail::ensure_builtins();
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (target != "*") {
    if (const std::string why = detail::unknown_node_or_dsl(target, detail::node_ids(r)); !why.empty()) {
      throw Error("on_error: " + why + " (* sets every node)");
    }
  }
  r.on_error[target] = action;
  detail::resolve_all(r);
}

void clear_on_error() {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.on_error.clear();
  detail::resolve_all(r);
}

OnError on_error_of(std::string_view node_id) {
  detail::ensure_builtins();
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> ids;
  for (const auto& graph : r.graphs) {
    for (const auto& node : graph->nodes) {
      if (node->id == node_id) return detail::strict_on_error(r, *node) ? OnError::strict : OnError::fallback;
      ids.push_back(node->id);
    }
  }
  throw Error(unknown_node_message(node_id, ids));
}

}  // namespace native_ops
