// The registry of override graphs: registration, filters, snapshots, and putting routers
// into the dispatcher. Ordering (ordering.cpp), explain (explain.cpp) and init (init.cpp)
// work on the same state (registry_state.h).
#include "runtime/registry_state.h"

#include <algorithm>
#include <sstream>

#include <torch/version.h>

#include "native_ops/dsl.h"
#include "native_ops/log.h"
#include "runtime/builtins.h"
#include "runtime/origin.h"
#include "runtime/router.h"

namespace native_ops {

namespace detail {

Registry& registry() {
  static Registry* instance = new Registry;  // never destroyed: routers may run at exit
  return *instance;
}

// The built-in overrides come first in every graph, whoever touches the registry first.
void ensure_builtins() {
  static std::once_flag once;
  static thread_local bool registering = false;
  if (registering) return;
  std::call_once(once, [] {
    registering = true;
    try {
      OriginScope origin("built-in");
      register_builtin_overrides();
    } catch (...) {
      registering = false;
      throw;
    }
    registering = false;
  });
}

GraphEntry* find_graph(Registry& r, std::string_view lib_symbol, const std::string& op_symbol, c10::DispatchKey key) {
  for (auto& graph : r.graphs) {
    if (graph->lib_symbol == lib_symbol && graph->op_symbol == op_symbol && graph->key == key) {
      return graph.get();
    }
  }
  return nullptr;
}

void publish(GraphEntry& graph, std::vector<const Node*> nodes, bool with_selection) {
  auto list = std::make_unique<RouteList>();
  list->nodes = std::move(nodes);
  if (with_selection && graph.selection) {
    const OpFeatures* features = find_features(graph.lib_symbol, graph.op_symbol);
    if (features != nullptr && features->typed == graph.typed) {  // checked when the table was set
      list->selection = compile_selection(*graph.selection, list->nodes, graph.selection_devices);
      list->features = features->fn.get();
    }
  }
  graph.router->routes.store(list.get(), std::memory_order_release);
  graph.published.push_back(std::move(list));
}

void install(Registry& r, GraphEntry& graph) {
  if (graph.router == nullptr) {
    if (r.routers_made == kMaxRouters) {
      throw Error("cannot route " + graph.label() + ": native-ops routes at most " + std::to_string(kMaxRouters) +
                  " (op, key) pairs per process");
    }
    graph.router = new RouterState{*graph.op, graph.key, r.routers_made++, graph.label(), {}};
  }
  graph.router->original = capture_original(*graph.op, graph.key);
  publish(graph, graph.active_nodes());
  graph.library =
      install_router(graph.lib_symbol, graph.key, graph.qualified_name, graph.make_router_kernel(graph.router));
  log::info("router installed: " + graph.label());
}

static void uninstall(GraphEntry& graph) {
  graph.library.reset();
  log::info("router removed, original kernel restored: " + graph.label());
}

// Makes the dispatcher match the graph (see Apply).
void update_dispatcher(Registry& r, GraphEntry& graph, Apply apply) {
  if (!r.initialized || r.disabled) return;
  const bool wanted = !graph.active_nodes().empty();
  if (graph.library) {
    publish(graph, graph.active_nodes());
    if (!wanted && apply == Apply::now) uninstall(graph);
  } else if (wanted && apply == Apply::now) {
    install(r, graph);
  } else if (wanted) {
    log::warn(graph.qualified_name + " @ " + std::string(c10::toString(graph.key)) +
              " has active nodes but no router, so they route nothing yet: call sync_routers() when none of "
              "its calls runs (Apply::nodes_only installs no router)");
  }
}

static bool torch_older_than(std::string_view release) {
  int major = 0;
  int minor = 0;
  std::istringstream text{std::string(release)};
  char dot = 0;
  if (!(text >> major >> dot >> minor) || dot != '.') {
    throw Error("since_torch='" + std::string(release) + "' is not a release: write it as \"2.9\"");
  }
  return TORCH_VERSION_MAJOR < major || (TORCH_VERSION_MAJOR == major && TORCH_VERSION_MINOR < minor);
}

// Makes a new graph for a registration, or throws why the op cannot have one.
static std::unique_ptr<GraphEntry> make_graph(const NodeRequest& request, const OpSymbol& symbol) {
  auto graph = std::make_unique<GraphEntry>();
  graph->lib_symbol = std::string(request.lib_symbol);
  graph->op_symbol = symbol.str();
  graph->qualified_name = graph->lib_symbol + "::" + graph->op_symbol;
  graph->key = request.key;
  graph->typed = request.typed;
  graph->make_router_kernel = request.make_router_kernel;
  graph->op = c10::Dispatcher::singleton().findSchema({graph->lib_symbol + "::" + symbol.name, symbol.overload});
  if (!graph->op) {
    if (request.options.since_torch.empty() || !torch_older_than(request.options.since_torch)) {
      throw Error(unknown_op_message(request.lib_symbol, symbol) +
                  " If the op comes with a later libtorch, set Options::since_torch to the release that added it");
    }
  } else if (graph->op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) &&
             !graph->op->hasKernelForDispatchKey(request.key)) {
    // Some such ops also have a kernel of their own at a backend key (_fused_rms_norm at
    // CUDA, under an autograd kernel): there an override has something to fall back to.
    throw Error(graph->qualified_name + " is CompositeImplicitAutograd at " + c10::toString(request.key) +
                ": it has no " + c10::toString(request.key) +
                " kernel to fall back to, and an override there would break its autograd. Override the ops "
                "it decomposes into");
  }
  return graph;
}

static std::string unavailable_reason(const GraphEntry& graph, const Dsl& dsl, const NodeRequest& request) {
  if (!graph.op) {
    return graph.qualified_name + " is not in libtorch " + TORCH_VERSION + " (added in " + request.options.since_torch +
           ")";
  }
  if (!graph.op->hasComputedKernelForDispatchKey(graph.key)) {
    return graph.qualified_name + " has no " + c10::toString(graph.key) + " kernel in this libtorch";
  }
  if (!dsl.runtime_available()) {
    return "dsl " + std::string(dsl.name()) + " is unavailable: " + dsl.unavailable_reason();
  }
  return "";
}

NodeInfo info_of(const GraphEntry& graph, const Node& node) {
  NodeInfo info;
  info.id = node.id;
  info.dsl = node.dsl;
  info.op_symbol = graph.op_symbol;
  info.key = graph.key;
  info.unconditional = node.unconditional;
  info.registration_index = node.slot - 1;
  info.origin = node.origin;
  if (!node.unavailable_reason.empty()) {
    info.state = NodeState::unavailable;
    info.reason = node.unavailable_reason;
  } else if (!node.disabled_by.empty()) {
    info.state = NodeState::disabled;
    info.reason = node.disabled_by;
  } else if (graph.order && std::find(graph.order->begin(), graph.order->end(), &node) == graph.order->end()) {
    info.state = NodeState::dropped;
    info.reason = node.dropped_by;
  }
  info.hits = graph.router ? counter_total(graph.router->index, node.slot) : 0;
  info.cond_errors = node.cond_errors.load(std::memory_order_relaxed);
  return info;
}

std::vector<GraphInfo> graph_infos(bool with_overlaps) {
  ensure_builtins();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<GraphInfo> result;
  for (const auto& graph : r.graphs) result.push_back(info_of(*graph, with_overlaps));
  return result;
}

GraphInfo info_of(const GraphEntry& graph, bool with_overlaps) {
  GraphInfo info;
  info.lib_symbol = graph.lib_symbol;
  info.op_symbol = graph.op_symbol;
  info.key = graph.key;
  info.typed = graph.typed;
  info.router_installed = graph.library != nullptr;
  info.fallthroughs = graph.router ? counter_total(graph.router->index, kFallthroughSlot) : 0;
  if (graph.op && with_overlaps) info.overlaps = foreign_kernels(*graph.op, graph.key);
  const std::vector<const Node*> order = graph.routing_order();
  for (const Node* node : order) info.nodes.push_back(info_of(graph, *node));
  info.selection = graph.selection;
  info.selection_source = graph.selection_source;
  for (const auto& node : graph.nodes) {
    if (std::find(order.begin(), order.end(), node.get()) == order.end()) {
      info.nodes.push_back(info_of(graph, *node));
    }
  }
  return info;
}

static std::string describe(const Filter& filter) {
  std::string text;
  const auto add = [&](const char* field, const std::string& value) {
    if (!value.empty()) text += (text.empty() ? "" : ", ") + std::string(field) + "=" + value;
  };
  add("dsl", filter.dsl);
  add("op", filter.op_symbol);
  add("key", filter.key ? c10::toString(*filter.key) : "");
  return "deregister_overrides(" + (text.empty() ? "all" : text) + ")";
}

static size_t set_disabled(const Filter& filter, bool disable, Apply apply) {
  ensure_builtins();
  if (!filter.dsl.empty()) require_dsl(filter.dsl);
  std::optional<std::string> op_symbol;
  if (!filter.op_symbol.empty()) op_symbol = parse_op_symbol(filter.op_symbol).str();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (op_symbol) {
    const bool has_graph = std::any_of(r.graphs.begin(), r.graphs.end(),
                                       [&](const auto& graph) { return graph->op_symbol == *op_symbol; });
    if (!has_graph) {
      const std::vector<std::string> known = dispatcher_op_symbols("aten");
      if (std::find(known.begin(), known.end(), *op_symbol) == known.end()) {
        throw Error(unknown_op_message("aten", parse_op_symbol(*op_symbol)));
      }
    }
  }
  const std::string reason = describe(filter);
  size_t changed = 0;
  for (auto& graph : r.graphs) {
    if ((op_symbol && graph->op_symbol != *op_symbol) || (filter.key && graph->key != *filter.key)) continue;
    bool graph_changed = false;
    for (auto& node : graph->nodes) {
      if (!filter.dsl.empty() && node->dsl != filter.dsl) continue;
      if (disable == node->disabled_by.empty()) {
        node->disabled_by = disable ? reason : "";
        graph_changed = true;
        ++changed;
      }
    }
    if (graph_changed) update_dispatcher(r, *graph, apply);
  }
  return changed;
}

std::string register_node(NodeRequest request) {
  ensure_builtins();
  const Dsl& dsl = require_dsl(request.dsl);
  if (request.lib_symbol != "aten") {
    throw Error("namespace '" + std::string(request.lib_symbol) +
                "' is not allowed: native-ops overrides ops of the aten namespace only");
  }
  check_override_key(request.key);
  if (!request.has_cond && !request.options.unconditional_override) {
    throw Error(
        "an override needs a cond: pass one, or set Options::unconditional_override to run "
        "the impl on every call");
  }
  if (request.has_cond && request.options.unconditional_override) {
    throw Error(
        "an unconditional override takes no cond: pass an empty cond, or drop "
        "Options::unconditional_override");
  }
  const OpSymbol symbol = parse_op_symbol(request.op_symbol);

  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  GraphEntry* graph = find_graph(r, request.lib_symbol, symbol.str(), request.key);
  std::unique_ptr<GraphEntry> new_graph;
  if (graph == nullptr) {
    new_graph = make_graph(request, symbol);
    graph = new_graph.get();
  } else {
    if (graph->typed != request.typed) {
      throw Error(graph->label() + " already has " + (graph->typed ? "typed" : "boxed") +
                  " overrides: register this one through the " +
                  (graph->typed ? "typed API (register_op_override<at::_ops::...>)" : "boxed API") + " too");
    }
    for (const auto& node : graph->nodes) {
      if (node->dsl == request.dsl && !request.options.allow_multiple_override) {
        throw Error(graph->label() + " already has the " + node->dsl + " override " + node->id +
                    ": set Options::allow_multiple_override to add another");
      }
    }
    if (graph->nodes.size() + 1 >= kSlotsPerRouter) {
      throw Error(graph->label() + " has " + std::to_string(graph->nodes.size()) +
                  " overrides, the most one (op, key) can have");
    }
  }

  auto node = std::make_unique<Node>();
  std::string id_stem = graph->op_symbol;
  std::replace(id_stem.begin(), id_stem.end(), '.', '_');
  id_stem += "_" + std::string(request.dsl);
  node->id = id_stem + "_" + std::to_string(r.next_id[id_stem]);
  node->dsl = std::string(request.dsl);
  node->slot = static_cast<uint32_t>(graph->nodes.size() + 1);
  node->unconditional = request.options.unconditional_override;
  node->kernels_load_at_run_time = dsl.kernels_load_at_run_time();
  node->origin = registering_origin();
  node->callables = std::move(request.callables);
  node->unavailable_reason = unavailable_reason(*graph, dsl, request);
  node->strict_on_error.store(strict_on_error(r, *node), std::memory_order_relaxed);
  if (!node->unavailable_reason.empty()) {
    log::info(node->id + " is unavailable and will not be installed: " + node->unavailable_reason);
  }
  const std::string id = node->id;
  graph->nodes.push_back(std::move(node));
  if (new_graph) r.graphs.push_back(std::move(new_graph));
  try {
    update_dispatcher(r, *graph, Apply::now);
  } catch (...) {
    graph->nodes.pop_back();
    if (graph->nodes.empty()) r.graphs.pop_back();
    throw;
  }
  ++r.next_id[id_stem];
  return id;
}

namespace {
thread_local std::string origin_of_this_thread = "program";
}  // namespace

const std::string& registering_origin() { return origin_of_this_thread; }

OriginScope::OriginScope(std::string origin) : previous_(std::move(origin_of_this_thread)) {
  origin_of_this_thread = std::move(origin);
}

OriginScope::~OriginScope() { origin_of_this_thread = std::move(previous_); }

void make_origin_unavailable(const std::string& origin, const std::string& reason) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& graph : r.graphs) {
    bool changed = false;
    for (auto& node : graph->nodes) {
      if (node->origin == origin) {
        node->unavailable_reason = reason;
        changed = true;
      }
    }
    if (changed) update_dispatcher(r, *graph, Apply::now);
  }
}

}  // namespace detail

std::string register_op_override(std::string_view dsl, std::string_view lib_symbol, std::string_view op_symbol,
                                 c10::DispatchKey dispatch_key, BoxedCond cond, BoxedImpl impl, Options options) {
  auto callables = std::make_unique<detail::BoxedCallables>();
  const bool has_cond = static_cast<bool>(cond);
  callables->cond = std::move(cond);
  callables->impl = std::move(impl);
  return detail::register_node(detail::NodeRequest{dsl, lib_symbol, op_symbol, dispatch_key, has_cond,
                                                   std::move(callables), &detail::boxed_router_kernel,
                                                   /*typed=*/false, std::move(options)});
}

std::string_view to_string(NodeState state) {
  switch (state) {
    case NodeState::active: return "active";
    case NodeState::disabled: return "disabled";
    case NodeState::dropped: return "dropped";
    case NodeState::unavailable: return "unavailable";
  }
  return "?";
}

std::vector<GraphInfo> graphs() { return detail::graph_infos(/*with_overlaps=*/true); }

std::optional<NodeInfo> find_node(std::string_view id) {
  for (GraphInfo& graph : detail::graph_infos(/*with_overlaps=*/false)) {
    for (NodeInfo& node : graph.nodes) {
      if (node.id == id) return std::move(node);
    }
  }
  return std::nullopt;
}

size_t deregister_overrides(const Filter& filter, Apply apply) {
  return detail::set_disabled(filter, /*disable=*/true, apply);
}

size_t reenable_overrides(const Filter& filter, Apply apply) {
  return detail::set_disabled(filter, /*disable=*/false, apply);
}

void sync_routers() {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& graph : r.graphs) detail::update_dispatcher(r, *graph, Apply::now);
}

}  // namespace native_ops
