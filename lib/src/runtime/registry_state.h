#pragma once
// The registry's state, shared by registry.cpp, ordering.cpp, explain.cpp and init.cpp.
// One mutex guards it; the routing hot path never takes it (it reads RouterState only).

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <torch/library.h>

#include "native_ops/detail/registration.h"
#include "native_ops/faults.h"
#include "native_ops/policy.h"
#include "native_ops/registry.h"
#include "native_ops/selection.h"
#include "runtime/names.h"
#include "runtime/selection.h"

namespace native_ops::detail {

struct GraphEntry {
  std::string lib_symbol;
  std::string op_symbol;       // "bmm", "add_.Tensor"
  std::string qualified_name;  // "aten::add_.Tensor"
  c10::DispatchKey key;
  std::optional<c10::OperatorHandle> op;  // nullopt: this libtorch lacks the op
  bool typed;
  RouterKernelFactory make_router_kernel;
  std::vector<std::unique_ptr<Node>> nodes;                 // registration order
  std::optional<std::vector<const Node*>> order;            // from the ordering function
  std::optional<SelectionTable> selection;                  // from a policy (version 2)
  std::string selection_source;                             // the policy it came from
  std::shared_ptr<DeviceMatches> selection_devices;         // where `selection` applies
  RouterState* router = nullptr;                            // made at first install, never freed
  std::unique_ptr<torch::Library> library;                  // set while the router is installed
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
  std::map<std::string, OnError> on_error;     // node id, dsl or "*" -> action (faults.h)
  std::map<std::string, OpFeatures> features;  // "aten::_softmax" -> its features function
  /// The shipped selection tables init() put in force (runtime/tuned_tables.h), a policy a
  /// file: every policy keeps them for the graphs it gives no table of its own.
  std::vector<Policy> tuned_tables;
  bool initialized = false;
  bool disabled = false;
  uint32_t routers_made = 0;
};

/// The one registry; never destroyed, since routers may run during exit.
Registry& registry();
/// Registers the built-in overrides the first time anyone uses the registry, so that they
/// come first in every graph.
void ensure_builtins();
GraphEntry* find_graph(Registry& r, std::string_view lib_symbol, const std::string& op_symbol, c10::DispatchKey key);
/// Makes `nodes` the list the graph's router walks (the router must exist), with the graph's
/// selection table unless `with_selection` is false (a solo route runs its node alone).
void publish(GraphEntry& graph, std::vector<const Node*> nodes, bool with_selection = true);
/// Creates the graph's router if needed, captures the original kernel and installs it.
void install(Registry& r, GraphEntry& graph);
/// Makes the dispatcher match the graph (see Apply). Call with the registry's mutex held.
void update_dispatcher(Registry& r, GraphEntry& graph, Apply apply);
NodeInfo info_of(const GraphEntry& graph, const Node& node);
/// A snapshot of the graph; `with_overlaps`: also read the other libraries' kernels at its
/// (op, key) from the dispatcher, which costs most of the snapshot.
GraphInfo info_of(const GraphEntry& graph, bool with_overlaps = true);
/// Snapshots of every graph (graphs(), or cheaper without the overlaps).
std::vector<GraphInfo> graph_infos(bool with_overlaps);
/// Whether `node`'s kernel failures reach the caller under the settings in `r` (faults.cpp).
bool strict_on_error(const Registry& r, const Node& node);
/// Parses NATIVE_OPS_ON_ERROR's form: "strict", "fallback", or "target=action,..." (a bare
/// action applies to "*"). Throws native_ops::Error on a malformed entry (faults.cpp).
std::vector<std::pair<std::string, OnError>> parse_on_error_list(std::string_view text);
/// A copy of the shipped tables in force, a policy a file (init.cpp).
std::vector<Policy> tuned_tables();
/// Applies the ordering function in force to every graph (ordering.cpp).
OrderingReport apply_ordering(Apply apply);

}  // namespace native_ops::detail
