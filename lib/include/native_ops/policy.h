#pragma once
// Ordering policies: the declarative, data-only form of an ordering function, read from
// JSON (native-ops-policy(5), policies/policy.schema.json). A policy is checked against
// the registered graphs before anything changes; applying it is atomic, and reversible
// with reset_order().
//
//   {
//     "version": 1,
//     "disable": [{"op": "_scaled_mm_v2"}, {"op": "add"}],
//     "keep_dsls": ["triton"]
//   }
//
// Rules apply in this order, to each graph, starting from registration order:
//   1. "disable": selectors ({"op": glob, "dsl", "key", "node"}, all given fields must
//      match) whose nodes are dropped;
//   2. "keep_dsls": nodes of any other DSL are dropped;
//   3. "dsl_priority": nodes are stably sorted by their DSL's place in this list; DSLs
//      not listed come after, in their order;
//   4. "order": {op glob: [node id or dsl, ...]}: the first entry whose glob matches the
//      graph puts the listed nodes first, in that order (a DSL stands for its nodes);
//      the others follow;
//   5. "on_error": {dsl, node id or "*": "strict" | "fallback"}: what the router does when
//      an override's kernel cannot run (faults.h); set when the policy is applied.
// An op glob matches an op symbol ("add.Tensor") or its name ("add").

#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "native_ops/export.h"

#include "native_ops/faults.h"
#include "native_ops/registry.h"

namespace native_ops {

/// Selects nodes: every non-empty field must match.
struct PolicySelector {
  std::string op;  // glob on op symbol or op name
  std::string dsl;
  std::string key;
  std::string node;
};

/// A parsed policy (well-formed JSON of the right shape; not yet checked against the
/// registry).
struct Policy {
  std::string source;  // file name or "<text>", for messages
  std::vector<PolicySelector> disable;
  bool has_keep_dsls = false;
  std::vector<std::string> keep_dsls;
  std::vector<std::string> dsl_priority;
  std::vector<std::pair<std::string, std::vector<std::string>>> order;
  std::vector<std::pair<std::string, OnError>> on_error;
};

/// Parses policy JSON. Throws native_ops::Error for malformed JSON (with line and
/// column), a wrong type, an unknown key (with close names) or a missing "version": 1.
NATIVE_OPS_API Policy parse_policy(std::string_view json, std::string source = "<text>");
/// Reads and parses a policy file; an unreadable file is an error too.
NATIVE_OPS_API Policy load_policy(const std::string& path);

/// One graph whose active nodes a policy changes.
struct GraphChange {
  std::string graph;                // "aten::bmm @ CPU"
  std::vector<std::string> before;  // active node ids in routing order, now
  std::vector<std::string> after;   // ... once the policy is applied
};

/// What a policy would do.
struct PolicyPlan {
  std::vector<GraphOrder> orders;
  std::vector<GraphChange> changes;
  std::vector<std::string> warnings;  // unreachable nodes, globs that match nothing
};

/// Checks a policy against the registered graphs and says what it would change; changes
/// nothing. Throws native_ops::Error for an unknown op, dsl, key or node id (with close
/// names).
NATIVE_OPS_API PolicyPlan plan_policy(const Policy& policy);
/// Plans and applies a policy atomically (set_graph_orders); warnings are logged.
NATIVE_OPS_API PolicyPlan apply_policy(const Policy& policy, Apply apply = Apply::nodes_only);

}  // namespace native_ops
