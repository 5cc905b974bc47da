// Ordering: ordering functions (validated per graph) and the orders policies set (atomic).
#include <algorithm>
#include <set>

#include "native_ops/log.h"
#include "runtime/registry_state.h"

namespace native_ops {

namespace detail {

namespace {

// Runs the ordering function on one graph, outside the lock (it may call back into the
// API); returns the new order, or nullopt with `error` set.
std::optional<std::vector<const Node*>> order_of(const OrderingFn& ordering, const GraphEntry& graph, const Graph& in,
                                                 std::string& error) {
  Graph out;
  try {
    out = ordering(graph.op_symbol, graph.key, in);
  } catch (const std::exception& e) {
    error = graph.label() + ": the ordering function threw: " + e.what();
    return std::nullopt;
  } catch (...) {
    error = graph.label() + ": the ordering function threw something that is not a std::exception";
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
      error = graph.label() + ": the ordering function returned node '" + info.id + "', which is not in this graph (" +
              ids + "); the graph keeps its order";
      return std::nullopt;
    }
    if (!seen.insert(info.id).second) {
      error =
          graph.label() + ": the ordering function returned node '" + info.id + "' twice; the graph keeps its order";
      return std::nullopt;
    }
    order.push_back(node->get());
  }
  return order;
}

}  // namespace

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
      // Without an ordering function every graph just returns to registration order.
      if (ordering) {
        for (const auto& node : graph->nodes) in.push_back(info_of(*graph, *node));
      }
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
    if (!valid[i] || !still_registered(graphs[i])) continue;
    if (graphs[i]->order == orders[i] && !graphs[i]->selection) continue;
    for (const auto& node : graphs[i]->nodes) node->dropped_by = "left out by the ordering function";
    graphs[i]->order = std::move(orders[i]);
    graphs[i]->selection.reset();  // an ordering function sets no table
    graphs[i]->selection_source.clear();
    graphs[i]->selection_devices.reset();
    ++report.graphs_changed;
    update_dispatcher(r, *graphs[i], apply);
  }
  return report;
}

}  // namespace detail

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
    const GraphOrder* wanted;
  };
  std::vector<Planned> planned;
  for (const GraphOrder& wanted : orders) {
    detail::GraphEntry* graph = detail::find_graph(r, "aten", parse_op_symbol(wanted.op_symbol).str(), wanted.key);
    if (graph == nullptr) {
      throw Error("no graph aten::" + wanted.op_symbol + " @ " + c10::toString(wanted.key));
    }
    if (wanted.selection) detail::check_selection_for(*graph, *wanted.selection);
    Planned plan{graph, {}, {}, &wanted};
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
    std::optional<SelectionTable> selection;
    std::string selection_source;
    for (Planned& plan : planned) {
      if (plan.graph != graph.get()) continue;
      order = plan.order;
      selection = plan.wanted->selection;
      selection_source = plan.wanted->selection_source;
      for (auto& [node, why] : plan.dropped) node->dropped_by = why;
    }
    if (graph->order == order && !graph->selection && !selection) continue;
    graph->order = std::move(order);
    graph->selection = std::move(selection);
    graph->selection_source = std::move(selection_source);
    graph->selection_devices = std::make_shared<detail::DeviceMatches>();  // checked afresh for this table
    ++changed;
    detail::update_dispatcher(r, *graph, apply);
  }
  return changed;
}

}  // namespace native_ops
