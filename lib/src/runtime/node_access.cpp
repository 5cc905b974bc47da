// One node at a time, past the router's order: for conformance sweeps and benchmarks.
#include "native_ops/node_access.h"

#include <algorithm>

#include "native_ops/error.h"
#include "runtime/registry_state.h"

namespace native_ops {

using namespace detail;

static_assert(sizeof(ThreadRouting::active_bits) == sizeof(uint64_t[16]), "BypassRouting saves every bit");

c10::OperatorHandle NodeHandle::op() const { return *graph->op; }

uint64_t NodeHandle::hits() const { return graph->router ? counter_total(graph->router->index, node->slot) : 0; }

NodeHandle find_node_handle(std::string_view id) {
  ensure_builtins();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> ids;
  for (const auto& graph : r.graphs) {
    for (const auto& node : graph->nodes) {
      if (node->id != id) {
        ids.push_back(node->id);
        continue;
      }
      if (!node->unavailable_reason.empty()) {
        throw Error("override " + node->id + " cannot run in this process: " + node->unavailable_reason);
      }
      return NodeHandle{graph.get(), node.get()};
    }
  }
  throw Error(unknown_node_message(id, ids));
}

CondDecision check_node(const NodeHandle& node, torch::jit::Stack arguments) {
  const c10::OperatorHandle op = node.op();
  op.schema().checkAndNormalizeInputs(arguments);
  try {
    const Verdict verdict = node.node->callables->check(op.schema(), std::move(arguments));
    return {verdict.accepted(), verdict.accepted() ? "" : verdict.reason()};
  } catch (const c10::Error& e) {
    return {false, std::string("the cond threw: ") + e.what_without_backtrace()};
  } catch (const std::exception& e) {
    return {false, std::string("the cond threw: ") + e.what()};
  }
}

SoloRoute::SoloRoute(const NodeHandle& node) : node_(node) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.disabled) {
    throw Error(
        "native-ops is switched off (NATIVE_OPS_DISABLE or TORCH_DISABLE_NATIVE_JIT is set): "
        "unset it to test or benchmark overrides");
  }
  if (!r.initialized) throw Error("native-ops is not initialised: call native_ops::init() first");
  auto& graph = const_cast<GraphEntry&>(*node.graph);
  if (!graph.library) install(r, graph);
  publish(graph, {node.node}, /*with_selection=*/false);
}

SoloRoute::~SoloRoute() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& graph = const_cast<GraphEntry&>(*node_.graph);
  const std::vector<const Node*> active = graph.active_nodes();
  publish(graph, active);
  if (active.empty()) graph.library.reset();  // no router was wanted: the original kernel is back
}

void run_impl(const NodeHandle& node, torch::jit::Stack& stack) {
  if (!node.graph->router) {
    throw Error("run_impl: " + node.graph->op_symbol +
                " has no router yet (none of its nodes was ever active): make a SoloRoute for the node first");
  }
  const RouterState& router = *node.graph->router;
  ActiveRouteScope scope(tls_routing, router, router.index, c10::DispatchKeySet(node.graph->key));
  try {
    node.node->callables->run_impl(router.op, stack);
  } catch (...) {
    rethrow_impl_error(*node.node);
  }
}

BypassRouting::BypassRouting() {
  std::copy(std::begin(tls_routing.active_bits), std::end(tls_routing.active_bits), saved_);
  std::fill(std::begin(tls_routing.active_bits), std::end(tls_routing.active_bits), ~uint64_t{0});
}

BypassRouting::~BypassRouting() { std::copy(std::begin(saved_), std::end(saved_), tls_routing.active_bits); }

}  // namespace native_ops
