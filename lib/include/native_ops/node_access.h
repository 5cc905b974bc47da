#pragma once
// Reaching one node past the router's order, for the tools that judge nodes one at a time
// (the test kit's conformance sweeps and benchmarks, and a plugin author's own). None of
// this is on the routing hot path.

#include <string>
#include <string_view>

#include <ATen/core/stack.h>

#include "native_ops/export.h"
#include "native_ops/registry.h"
#include "native_ops/verdict.h"

namespace native_ops {

namespace detail {
struct GraphEntry;
struct Node;
}  // namespace detail

/// One registered node and its graph; both live as long as the process.
struct NATIVE_OPS_API NodeHandle {
  const detail::GraphEntry* graph = nullptr;
  const detail::Node* node = nullptr;
  c10::OperatorHandle op() const;
  /// Hits so far (the calls its impl ran for through the router).
  uint64_t hits() const;
};

/// The node with this id; throws native_ops::Error naming close ids when there is none,
/// and when the node can never run here (its reason given).
NATIVE_OPS_API NodeHandle find_node_handle(std::string_view id);

/// What a cond made of one call.
struct CondDecision {
  bool accepted = false;
  std::string reason;  // why it declined, as it said, or the error it threw
};

/// What the node's cond makes of `arguments` (the schema's, in order). A cond that throws
/// declines, with the error as its reason.
NATIVE_OPS_API CondDecision check_node(const NodeHandle& node, torch::jit::Stack arguments);

/// Runs the node's impl directly (no dispatcher, no cond), as the router would run it:
/// calls of its own op inside reach the original kernel. Throws native_ops::Error when the
/// node's graph was never routed (no node of it active yet, no SoloRoute made).
NATIVE_OPS_API void run_impl(const NodeHandle& node, torch::jit::Stack& stack);

/// While alive, the node's graph routes through this node alone, whatever its state or
/// the order in force; the router is installed for the while if it was not. Restores the
/// graph as it was. Requires init(); throws native_ops::Error when native-ops is off.
class NATIVE_OPS_API SoloRoute {
 public:
  explicit SoloRoute(const NodeHandle& node);
  ~SoloRoute();
  SoloRoute(const SoloRoute&) = delete;
  SoloRoute& operator=(const SoloRoute&) = delete;

 private:
  NodeHandle node_;
};

/// While alive, every call on this thread skips every router and runs the original
/// kernel, as if no override were registered.
class NATIVE_OPS_API BypassRouting {
 public:
  BypassRouting();
  ~BypassRouting();
  BypassRouting(const BypassRouting&) = delete;
  BypassRouting& operator=(const BypassRouting&) = delete;

 private:
  uint64_t saved_[16];
};

}  // namespace native_ops
