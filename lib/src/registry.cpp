// The registry of override graphs: registration, filters, ordering, snapshots and init.
// One mutex guards it; the routing hot path never takes it (it reads RouterState only).
#include "native_ops/registry.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <torch/version.h>

#include "builtin.h"
#include "env.h"
#include "names.h"
#include "origin.h"
#include "native_ops/detail/registration.h"
#include "native_ops/dsl.h"
#include "native_ops/log.h"
#include "native_ops/plugin.h"
#include "native_ops/policy.h"
#include "router.h"

namespace native_ops {

namespace detail {

namespace {

struct GraphEntry {
  std::string lib_symbol;
  std::string op_symbol;       // "bmm", "add_.Tensor"
  std::string qualified_name;  // "aten::add_.Tensor"
  c10::DispatchKey key;
  std::optional<c10::OperatorHandle> op;  // nullopt: this libtorch lacks the op
  bool typed;
  RouterKernelFactory make_router_kernel;
  std::vector<std::unique_ptr<Node>> nodes;       // registration order
  std::optional<std::vector<const Node*>> order;  // from the ordering function
  RouterState* router = nullptr;                  // made at first install, never freed
  std::unique_ptr<torch::Library> library;        // set while the router is installed
  std::vector<std::unique_ptr<const RouteList>> published;  // kept: calls may still read them

  std::vector<const Node*> routing_order() const {
    if (order) {
      return *order;
    }
    std::vector<const Node*> all;
    for (const auto& node : nodes) all.push_back(node.get());
    return all;
  }
  std::vector<const Node*> active_nodes() const {
    std::vector<const Node*> active;
    for (const Node* node : routing_order()) {
      if (node->disabled_by.empty() && node->unavailable_reason.empty()) active.push_back(node);
    }
    return active;
  }
  std::string label() const { return qualified_name + " @ " + c10::toString(key); }
};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<GraphEntry>> graphs;
  std::map<std::string, size_t> next_id;  // "<op>_<dsl>" -> next number
  OrderingFn ordering;
  bool initialized = false;
  bool disabled = false;
  uint32_t routers_made = 0;
};

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
      kernels::register_builtin_overrides();
    } catch (...) {
      registering = false;
      throw;
    }
    registering = false;
  });
}

GraphEntry* find_graph(Registry& r, std::string_view lib_symbol, const std::string& op_symbol,
                       c10::DispatchKey key) {
  for (auto& graph : r.graphs) {
    if (graph->lib_symbol == lib_symbol && graph->op_symbol == op_symbol && graph->key == key) {
      return graph.get();
    }
  }
  return nullptr;
}

void publish(GraphEntry& graph) {
  auto list = std::make_unique<RouteList>();
  list->nodes = graph.active_nodes();
  graph.router->routes.store(list.get(), std::memory_order_release);
  graph.published.push_back(std::move(list));
}

void install(Registry& r, GraphEntry& graph) {
  if (graph.router == nullptr) {
    if (r.routers_made == kMaxRouters) {
      throw Error("cannot route " + graph.label() + ": native-ops routes at most " +
                  std::to_string(kMaxRouters) + " (op, key) pairs per process");
    }
    graph.router = new RouterState{*graph.op, graph.key, r.routers_made++, graph.label(), {}};
  }
  graph.router->original = capture_original(*graph.op, graph.key);
  publish(graph);
  graph.library = install_router(graph.lib_symbol, graph.key, graph.qualified_name,
                                 graph.make_router_kernel(graph.router));
  log::info("router installed: " + graph.label());
}

void uninstall(GraphEntry& graph) {
  graph.library.reset();
  log::info("router removed, original kernel restored: " + graph.label());
}

// Makes the dispatcher match the graph (see Apply).
void update_dispatcher(Registry& r, GraphEntry& graph, Apply apply) {
  if (!r.initialized || r.disabled) return;
  const bool wanted = !graph.active_nodes().empty();
  if (graph.library) {
    publish(graph);
    if (!wanted && apply == Apply::now) uninstall(graph);
  } else if (wanted && apply == Apply::now) {
    install(r, graph);
  }
}

bool torch_older_than(std::string_view release) {
  int major = 0;
  int minor = 0;
  std::istringstream text{std::string(release)};
  char dot = 0;
  if (!(text >> major >> dot >> minor) || dot != '.') {
    throw Error("since_torch='" + std::string(release) + "' is not a release: write it as \"2.9\"");
  }
  return TORCH_VERSION_MAJOR < major || (TORCH_VERSION_MAJOR == major && TORCH_VERSION_MINOR < minor);
}

std::string known_dsl_names() {
  std::string names;
  for (const Dsl* dsl : dsls()) names += (names.empty() ? "" : ", ") + std::string(dsl->name());
  return names;
}

std::vector<std::string> dsl_name_list() {
  std::vector<std::string> names;
  for (const Dsl* dsl : dsls()) names.emplace_back(dsl->name());
  return names;
}

const Dsl& require_dsl(std::string_view name) {
  const Dsl* dsl = find_dsl(name);
  if (dsl == nullptr) {
    throw Error("unknown dsl '" + std::string(name) + "'." + did_you_mean(name, dsl_name_list()) +
                " Known DSLs: " + known_dsl_names() + "; a new one is added with native_ops::register_dsl");
  }
  return *dsl;
}

std::string unknown_op_message(std::string_view lib_symbol, const OpSymbol& symbol) {
  return "unknown op " + std::string(lib_symbol) + "::" + symbol.str() + "." +
         did_you_mean(symbol.str(), dispatcher_op_symbols(lib_symbol));
}

// Makes a new graph for a registration, or throws why the op cannot have one.
std::unique_ptr<GraphEntry> make_graph(const NodeRequest& request, const OpSymbol& symbol) {
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
  } else if (graph->op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) {
    throw Error(graph->qualified_name +
                " is CompositeImplicitAutograd: it has no backend kernel to fall back to, and an "
                "override at a backend key would break its autograd. Override the ops it decomposes into");
  }
  return graph;
}

std::string unavailable_reason(const GraphEntry& graph, const Dsl& dsl, const NodeRequest& request) {
  if (!graph.op) {
    return graph.qualified_name + " is not in libtorch " + TORCH_VERSION + " (added in " +
           request.options.since_torch + ")";
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

GraphInfo info_of(const GraphEntry& graph) {
  GraphInfo info;
  info.lib_symbol = graph.lib_symbol;
  info.op_symbol = graph.op_symbol;
  info.key = graph.key;
  info.typed = graph.typed;
  info.router_installed = graph.library != nullptr;
  info.fallthroughs = graph.router ? counter_total(graph.router->index, kFallthroughSlot) : 0;
  if (graph.op) info.overlaps = foreign_kernels(*graph.op, graph.key);
  const std::vector<const Node*> order = graph.routing_order();
  for (const Node* node : order) info.nodes.push_back(info_of(graph, *node));
  for (const auto& node : graph.nodes) {
    if (std::find(order.begin(), order.end(), node.get()) == order.end()) {
      info.nodes.push_back(info_of(graph, *node));
    }
  }
  return info;
}

std::string describe(const Filter& filter) {
  std::string text;
  const auto add = [&](const char* field, const std::string& value) {
    if (!value.empty()) text += (text.empty() ? "" : ", ") + std::string(field) + "=" + value;
  };
  add("dsl", filter.dsl);
  add("op", filter.op_symbol);
  add("key", filter.key ? c10::toString(*filter.key) : "");
  return "deregister_overrides(" + (text.empty() ? "all" : text) + ")";
}

size_t set_disabled(const Filter& filter, bool disable, Apply apply) {
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

// Runs the ordering function on one graph, outside the lock (it may call back into the
// API); returns the new order, or nullopt with `error` set.
std::optional<std::vector<const Node*>> order_of(const OrderingFn& ordering, const GraphEntry& graph,
                                                 const Graph& in, std::string& error) {
  Graph out;
  try {
    out = ordering(graph.op_symbol, graph.key, in);
  } catch (const std::exception& e) {
    error = graph.label() + ": the ordering function threw: " + e.what();
    return std::nullopt;
  }
  std::vector<const Node*> order;
  std::set<std::string> seen;
  for (const NodeInfo& info : out) {
    auto node = std::find_if(graph.nodes.begin(), graph.nodes.end(),
                             [&](const auto& candidate) { return candidate->id == info.id; });
    if (node == graph.nodes.end()) {
      std::string ids;
      for (const NodeInfo& member : in) ids += (ids.empty() ? "" : ", ") + member.id;
      error = graph.label() + ": the ordering function returned node '" + info.id +
              "', which is not in this graph (" + ids + "); the graph keeps its order";
      return std::nullopt;
    }
    if (!seen.insert(info.id).second) {
      error = graph.label() + ": the ordering function returned node '" + info.id +
              "' twice; the graph keeps its order";
      return std::nullopt;
    }
    order.push_back(node->get());
  }
  return order;
}

OrderingReport apply_ordering(Apply apply) {
  ensure_builtins();
  Registry& r = registry();
  OrderingFn ordering;
  std::vector<GraphEntry*> graphs;
  std::vector<Graph> inputs;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    ordering = r.ordering;
    for (auto& graph : r.graphs) {
      graphs.push_back(graph.get());
      Graph in;
      for (const auto& node : graph->nodes) in.push_back(info_of(*graph, *node));
      inputs.push_back(std::move(in));
    }
  }
  OrderingReport report;
  std::vector<std::optional<std::vector<const Node*>>> orders(graphs.size());
  std::vector<bool> valid(graphs.size(), true);
  for (size_t i = 0; i < graphs.size(); ++i) {
    if (!ordering) continue;
    std::string error;
    orders[i] = order_of(ordering, *graphs[i], inputs[i], error);
    if (!error.empty()) {
      valid[i] = false;
      log::warn(error);
      report.errors.push_back(std::move(error));
    }
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto still_registered = [&](const GraphEntry* graph) {
    return std::any_of(r.graphs.begin(), r.graphs.end(), [&](const auto& entry) { return entry.get() == graph; });
  };
  for (size_t i = 0; i < graphs.size(); ++i) {
    // A registration that failed meanwhile may have removed the graph it had just added.
    if (!valid[i] || !still_registered(graphs[i]) || graphs[i]->order == orders[i]) continue;
    for (const auto& node : graphs[i]->nodes) node->dropped_by = "left out by the ordering function";
    graphs[i]->order = std::move(orders[i]);
    ++report.graphs_changed;
    update_dispatcher(r, *graphs[i], apply);
  }
  return report;
}

}  // namespace

std::string register_node(NodeRequest request) {
  ensure_builtins();
  const Dsl& dsl = require_dsl(request.dsl);
  if (request.lib_symbol != "aten") {
    throw Error("namespace '" + std::string(request.lib_symbol) +
                "' is not allowed: native-ops overrides ops of the aten namespace only");
  }
  check_override_key(request.key);
  if (!request.has_cond && !request.options.unconditional_override) {
    throw Error("an override needs a cond: pass one, or set Options::unconditional_override to run "
                "the impl on every call");
  }
  if (request.has_cond && request.options.unconditional_override) {
    throw Error("an unconditional override takes no cond: pass an empty cond, or drop "
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
  node->origin = registering_origin();
  node->callables = std::move(request.callables);
  node->unavailable_reason = unavailable_reason(*graph, dsl, request);
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

std::vector<GraphInfo> graphs() {
  detail::ensure_builtins();
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<GraphInfo> result;
  for (const auto& graph : r.graphs) result.push_back(detail::info_of(*graph));
  return result;
}

std::optional<NodeInfo> find_node(std::string_view id) {
  for (GraphInfo& graph : graphs()) {
    for (NodeInfo& node : graph.nodes) {
      if (node.id == id) return std::move(node);
    }
  }
  return std::nullopt;
}

c10::DispatchKey dispatch_key_of(const torch::jit::Stack& arguments) {
  for (const c10::IValue& argument : arguments) {
    if (argument.isTensor()) {
      const at::Tensor& tensor = argument.toTensor();
      return c10::computeDispatchKey(tensor.scalar_type(), tensor.layout(), tensor.device());
    }
  }
  return c10::DispatchKey::CPU;
}

Explanation explain(std::string_view op_symbol, c10::DispatchKey key, torch::jit::Stack arguments) {
  detail::ensure_builtins();
  const detail::OpSymbol symbol = detail::parse_op_symbol(op_symbol);
  const auto op = c10::Dispatcher::singleton().findSchema({"aten::" + symbol.name, symbol.overload});
  if (!op) throw Error(detail::unknown_op_message("aten", symbol));
  const c10::FunctionSchema& schema = op->schema();
  try {
    schema.checkAndNormalizeInputs(arguments);
  } catch (const c10::Error& e) {
    throw Error("the arguments do not fit aten::" + symbol.str() + ": " + e.what_without_backtrace());
  }

  Explanation explanation;
  explanation.lib_symbol = "aten";
  explanation.op_symbol = symbol.str();
  explanation.schema = c10::toString(schema);
  explanation.key = key;
  std::vector<const detail::Node*> order;
  {
    detail::Registry& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const detail::GraphEntry* graph = detail::find_graph(r, "aten", symbol.str(), key);
    if (graph == nullptr) return explanation;
    explanation.router_installed = graph->library != nullptr;
    order = graph->routing_order();
    for (const detail::Node* node : order) {
      CondCheck check;
      check.node = detail::info_of(*graph, *node);
      explanation.checks.push_back(std::move(check));
    }
  }
  // Conds run outside the lock: they are the registrants' code.
  for (size_t i = 0; i < order.size(); ++i) {
    CondCheck& check = explanation.checks[i];
    if (check.node.state != NodeState::active) {
      check.reason = check.node.reason;
      continue;
    }
    check.evaluated = true;
    try {
      const Verdict verdict = order[i]->callables->check(schema, arguments);
      check.accepted = verdict.accepted();
      if (!check.accepted) check.reason = verdict.reason();
    } catch (const c10::Error& e) {
      check.reason = std::string("the cond threw: ") + e.what_without_backtrace();
    } catch (const std::exception& e) {
      check.reason = std::string("the cond threw: ") + e.what();
    }
    if (check.accepted && !explanation.fires && explanation.router_installed) {
      check.fires = true;
      explanation.fires = check.node.id;
    }
  }
  return explanation;
}

size_t deregister_overrides(const Filter& filter, Apply apply) {
  return detail::set_disabled(filter, /*disable=*/true, apply);
}

size_t reenable_overrides(const Filter& filter, Apply apply) {
  return detail::set_disabled(filter, /*disable=*/false, apply);
}

void set_ordering_function(OrderingFn fn) {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.ordering = std::move(fn);
}

OrderingReport reregister_overrides(Apply apply) { return detail::apply_ordering(apply); }

OrderingReport reset_order(Apply apply) {
  set_ordering_function(nullptr);
  return detail::apply_ordering(apply);
}

size_t set_graph_orders(const std::vector<GraphOrder>& orders, Apply apply) {
  detail::ensure_builtins();
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto node_of = [](detail::GraphEntry& graph, const std::string& id) -> detail::Node* {
    for (auto& node : graph.nodes) {
      if (node->id == id) return node.get();
    }
    throw Error("node " + id + " is not in " + graph.label());
  };
  // Check everything and build every new order before changing anything.
  struct Planned {
    detail::GraphEntry* graph;
    std::vector<const detail::Node*> order;
    std::vector<std::pair<detail::Node*, std::string>> dropped;
  };
  std::vector<Planned> planned;
  for (const GraphOrder& wanted : orders) {
    detail::GraphEntry* graph =
        detail::find_graph(r, "aten", detail::parse_op_symbol(wanted.op_symbol).str(), wanted.key);
    if (graph == nullptr) {
      throw Error("no graph aten::" + wanted.op_symbol + " @ " + c10::toString(wanted.key));
    }
    Planned plan{graph, {}, {}};
    std::set<const detail::Node*> seen;
    for (const std::string& id : wanted.order) {
      const detail::Node* node = node_of(*graph, id);
      if (!seen.insert(node).second) throw Error("node " + id + " is twice in the order of " + graph->label());
      plan.order.push_back(node);
    }
    for (const auto& [id, why] : wanted.dropped) plan.dropped.emplace_back(node_of(*graph, id), why);
    planned.push_back(std::move(plan));
  }
  r.ordering = nullptr;
  size_t changed = 0;
  for (auto& graph : r.graphs) {
    std::optional<std::vector<const detail::Node*>> order;
    for (Planned& plan : planned) {
      if (plan.graph != graph.get()) continue;
      order = plan.order;
      for (auto& [node, why] : plan.dropped) node->dropped_by = why;
    }
    if (graph->order == order) continue;
    graph->order = std::move(order);
    ++changed;
    detail::update_dispatcher(r, *graph, apply);
  }
  return changed;
}

void sync_routers() {
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& graph : r.graphs) detail::update_dispatcher(r, *graph, Apply::now);
}

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
  const bool disabled = env::flag("NATIVE_OPS_DISABLE") || env::flag("TORCH_DISABLE_NATIVE_JIT");
  const std::string policy_path = env::get("NATIVE_OPS_ORDER_POLICY").value_or("");
  const std::string order_fn = env::get("NATIVE_OPS_ORDER_FN").value_or("");
  if (!policy_path.empty() && !order_fn.empty()) {
    throw Error("NATIVE_OPS_ORDER_POLICY and NATIVE_OPS_ORDER_FN are both set: a policy is the declarative form "
                "of an ordering function, so set one of them");
  }
  log::set_level(level);
  detail::ensure_builtins();
  if (!disabled) {
    load_plugins_from_env();
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
