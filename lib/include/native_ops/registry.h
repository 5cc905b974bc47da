#pragma once
// Registering overrides of aten operators, switching them off and on, ordering them,
// and reading what is registered. Everything here is thread-safe; the calls that change
// the dispatcher say so.
//
// Semantics, per (namespace, op, dispatch key), called a graph:
//  - Nodes are kept in registration order; the FIRST registered node whose cond accepts
//    a call runs its impl. If none accepts, the call falls through to the kernel that
//    was registered before native-ops (captured when the router was installed).
//  - An impl that calls its own op (at::bmm inside a bmm impl) reaches that original
//    kernel: a thread-local guard sends re-entrant calls past the router. call_original()
//    does the same without a second trip through the dispatcher.
//  - A cond that throws counts as "no match": the error is counted and logged once per
//    node. An impl that throws propagates, with the node id and dsl in the message.
//  - Unconditional nodes accept every call and so hide every node after them. Unlike
//    upstream torch._native, filters switch them off like any other node.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "native_ops/export.h"

#include <c10/core/DispatchKey.h>

#include "native_ops/boxed.h"
#include "native_ops/error.h"
#include "native_ops/selection_table.h"

namespace native_ops {

/// Options of register_op_override().
struct Options {
  /// Allows a second override of the same (op, key) by the same dsl. Without it, a
  /// second one is refused (the usual cause is a kernel pack registered twice).
  bool allow_multiple_override = false;
  /// The node has no cond: it accepts every call. Required when cond is empty.
  bool unconditional_override = false;
  /// The libtorch release that added the op, e.g. "2.9". On an older libtorch the node
  /// is kept but listed as unavailable (INFO log) instead of refused as an unknown op.
  std::string since_torch;
};

/// Registers a boxed override of `lib_symbol::op_symbol` at `dispatch_key` and returns
/// its node id, `<op with . as _>_<dsl>_<n>` (e.g. "add__Tensor_cpp_0").
///
///   native_ops::register_op_override("cpp", "aten", "sum.dim_IntList", c10::DispatchKey::CPU,
///       [](const native_ops::BoxedArgs& a) { return a[0].toTensor().dim() == 2; },
///       [](const c10::OperatorHandle& op, torch::jit::Stack& s) { ... });
///
/// `op_symbol` is "bmm" (the default overload) or "add_.Tensor" (a named overload).
/// Refused with native_ops::Error: an unknown dsl or namespace; the Meta and Composite*
/// keys and any key that is not a backend key; CompositeImplicitAutograd ops without a
/// kernel of their own at the key (nothing to fall back to, and overriding one there
/// breaks its autograd); an empty cond
/// without `unconditional_override`, or a cond with it; an unknown op (the message
/// suggests close names; see Options::since_torch); a second override by the same dsl
/// without `allow_multiple_override`; a graph registered through the typed API.
/// Before init() the node is only recorded; after it, the router is updated at once,
/// which re-registers a dispatcher kernel: do that while the op is not being called.
NATIVE_OPS_API std::string register_op_override(std::string_view dsl, std::string_view lib_symbol,
                                                std::string_view op_symbol, c10::DispatchKey dispatch_key,
                                                BoxedCond cond, BoxedImpl impl, Options options = {});

/// Parses a dispatch key name ("CPU", "CUDA"); throws native_ops::Error with close names.
NATIVE_OPS_API c10::DispatchKey parse_dispatch_key(std::string_view name);

/// Where a node stands.
enum class NodeState {
  active,       // the router walks it
  disabled,     // switched off by a filter (see NodeInfo::reason)
  dropped,      // left out by the ordering function in force
  unavailable,  // can never run here: op missing, no kernel for the key, dsl unavailable
};
NATIVE_OPS_API std::string_view to_string(NodeState state);

/// A snapshot of one node.
struct NodeInfo {
  std::string id;
  std::string dsl;
  std::string op_symbol;  // "bmm", "add_.Tensor"
  c10::DispatchKey key = c10::DispatchKey::Undefined;
  bool unconditional = false;
  NodeState state = NodeState::active;
  std::string reason;  // why it is disabled, dropped or unavailable
  size_t registration_index = 0;
  /// Who registered it: "built-in", the path of the plugin library that did, or "program".
  std::string origin;
  uint64_t hits = 0;         // calls its impl ran for
  uint64_t cond_errors = 0;  // calls its cond threw on
};

/// A snapshot of one (op, key) graph.
struct GraphInfo {
  std::string lib_symbol;  // "aten"
  std::string op_symbol;
  c10::DispatchKey key = c10::DispatchKey::Undefined;
  bool typed = false;             // routed by a typed (unboxed) router
  bool router_installed = false;  // a router sits in the dispatcher for it now
  uint64_t fallthroughs = 0;      // calls no active node accepted
  /// Kernels other libraries registered at this (op, key), as the dispatcher describes
  /// them ("registered at FILE:LINE"): they and native-ops override each other.
  std::vector<std::string> overlaps;
  /// Nodes in routing order (the order in force), then the nodes it leaves out.
  std::vector<NodeInfo> nodes;
  /// The selection table in force (selection.h), and the policy that set it.
  std::optional<SelectionTable> selection;
  std::string selection_source;
};

/// What one node's cond made of a call, in explain().
struct CondCheck {
  NodeInfo node;
  bool evaluated = false;  // false: the node is not active (node.state and node.reason say why)
  bool accepted = false;
  bool fires = false;  // the first active node that accepts: its impl would run
  std::string reason;  // why the cond declined (as it said), or the error it threw
};

/// Where a call falls in the selection table of its graph (selection.h).
struct SelectionLookup {
  std::string source;                                     // the policy that set the table
  std::vector<std::pair<std::string, int64_t>> features;  // the call's, by name
  std::string dtype;                                      // "bf16"
  bool applies = false;                                   // false: the call is routed in order (`why` says why)
  std::string why;     // a dtype the table lacks, another device, features that threw
  std::string bucket;  // "rows [64, 4096), width [4096, inf)"
  std::string cell;    // the node id the cell names, or "aten"
  double margin = 0;   // aten's time / the chosen one's, as tuned; 0 when not given
};

/// What the router would do with a call: every node's cond, in routing order.
struct Explanation {
  std::string lib_symbol;
  std::string op_symbol;
  std::string schema;  // the op's schema, arguments named
  c10::DispatchKey key = c10::DispatchKey::Undefined;
  bool router_installed = false;
  std::vector<CondCheck> checks;
  /// Set when a selection table is in force for the graph: it decides which node may fire.
  std::optional<SelectionLookup> selection;
  /// The node whose impl runs; nullopt when the original (aten) kernel runs.
  std::optional<std::string> fires;
};

/// Says, for a call of aten::`op_symbol` with `arguments` reaching `key`, what each
/// node's cond decides and which node fires. Runs conds, never impls. Missing trailing
/// arguments take the schema's defaults. Throws native_ops::Error for an unknown op (with
/// close names) or arguments that do not fit the schema (with the schema).
NATIVE_OPS_API Explanation explain(std::string_view op_symbol, c10::DispatchKey key, torch::jit::Stack arguments);

/// The backend key a call with these arguments reaches: that of its first tensor's
/// device (CPU when there is no tensor).
NATIVE_OPS_API c10::DispatchKey dispatch_key_of(const torch::jit::Stack& arguments);

/// Every graph, in the order the graphs were first registered.
NATIVE_OPS_API std::vector<GraphInfo> graphs();
/// One node by id, if registered.
NATIVE_OPS_API std::optional<NodeInfo> find_node(std::string_view id);

/// How a change reaches the dispatcher. Every call that changes nodes or orders takes
/// one, and defaults to the mode that is safe while ops run on other threads.
enum class Apply {
  /// Install the router of every graph that gained an active node and remove the router
  /// of every graph left with none, restoring the original kernel exactly. Touches the
  /// dispatcher table: the ops concerned must not be running on other threads.
  now,
  /// The default. Only swap node lists (atomic, safe while the ops run on any thread). A
  /// graph left with no active node keeps its router, which falls through (a few ns per
  /// call); a graph with no router gets none, and a warning says so. sync_routers(), or
  /// Apply::now, when no op runs, brings the dispatcher in line.
  nodes_only,
};

/// Selects nodes: an empty field matches everything.
struct Filter {
  std::string dsl;
  std::string op_symbol;  // "bmm" also matches "bmm.default"
  std::optional<c10::DispatchKey> key;
};

/// Switches off the matching nodes (kept, listed as disabled); returns how many changed.
/// Throws native_ops::Error for a dsl or op that names nothing registered.
NATIVE_OPS_API size_t deregister_overrides(const Filter& filter, Apply apply = Apply::nodes_only);
/// Switches the matching nodes on again; returns how many changed.
NATIVE_OPS_API size_t reenable_overrides(const Filter& filter, Apply apply = Apply::nodes_only);

/// A graph, as handed to and returned by an ordering function.
using Graph = std::vector<NodeInfo>;
/// Returns the order for one graph, given in registration order. It may leave nodes out
/// (they are dropped, not lost) and return [] to switch the op off; it must return only
/// nodes of that graph, each at most once.
using OrderingFn = std::function<Graph(const std::string& op_symbol, c10::DispatchKey key, const Graph& graph)>;

/// What applying an ordering function did.
struct OrderingReport {
  size_t graphs_changed = 0;
  /// One line per graph whose returned order was refused (the graph kept its order)
  /// or whose ordering function threw.
  std::vector<std::string> errors;
  bool ok() const { return errors.empty(); }
};

/// Sets the ordering function that init() applies; an empty one means registration order.
NATIVE_OPS_API void set_ordering_function(OrderingFn fn);
/// Re-applies the ordering function in force to every graph, starting from registration
/// order each time. Invalid results are reported and logged; those graphs stay as they were.
NATIVE_OPS_API OrderingReport reregister_overrides(Apply apply = Apply::nodes_only);
/// Clears the ordering function: every graph goes back to registration order.
NATIVE_OPS_API OrderingReport reset_order(Apply apply = Apply::nodes_only);

/// The order of one graph, as a policy sets it.
struct GraphOrder {
  std::string op_symbol;
  c10::DispatchKey key = c10::DispatchKey::Undefined;
  std::vector<std::string> order;                            // node ids, in routing order
  std::vector<std::pair<std::string, std::string>> dropped;  // (node id, why it is left out)
  /// A selection table for the graph (selection.h); its cells name nodes of the graph or
  /// "aten", and the op must have registered features of the same names.
  std::optional<SelectionTable> selection;
  std::string selection_source;  // the policy it comes from, for list and explain
};

/// Sets the orders (and selection tables) of many graphs at once, each starting from
/// registration order; graphs not listed go back to registration order without a table,
/// and the ordering function is cleared.
/// Everything is checked first (every graph and node must exist, no node twice): then
/// every graph changes, or, on a native_ops::Error, none does. Returns how many changed.
NATIVE_OPS_API size_t set_graph_orders(const std::vector<GraphOrder>& orders, Apply apply = Apply::nodes_only);

/// Brings the dispatcher in line with the graphs after Apply::nodes_only changes.
NATIVE_OPS_API void sync_routers();

/// Registers the built-in overrides and installs the routers of all graphs, once; later
/// calls do nothing. Loads no DSL runtime and never initialises CUDA.
/// NATIVE_OPS_DISABLE=1 or TORCH_DISABLE_NATIVE_JIT=1 turns native-ops off: nothing is
/// registered or installed. Throws native_ops::Error, naming the variable, when an
/// environment variable has a bad value; nothing is installed then.
NATIVE_OPS_API void init();
NATIVE_OPS_API bool is_initialized();
/// True when NATIVE_OPS_DISABLE or TORCH_DISABLE_NATIVE_JIT switched native-ops off.
NATIVE_OPS_API bool is_disabled();

}  // namespace native_ops
