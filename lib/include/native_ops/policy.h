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
//   6. "select" (version 2): {"<op>@<KEY>": table}: selection tables (selection.h), as
//      `native-ops tune` writes them:
//        {"features": ["rows", "width"],
//         "device": {"name": "NVIDIA H200", "capability": "9.0"},      (optional)
//         "tuned_with": {"torch": "2.11.0", "cuda": "13.0", ...},     (optional)
//         "tables": {"bf16": {"edges": {"rows": [64, 4096], "width": [4097]},
//                             "cells": ["aten", "_softmax_triton_0", ...],
//                             "margins": [1.0, 1.21, ...]}}}             (optional)
//      Its cells name nodes of that graph or "aten"; a node a rule above drops makes its
//      cells route in order.
// An op glob matches an op symbol ("add.Tensor") or its name ("add").

#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "native_ops/export.h"

#include "native_ops/faults.h"
#include "native_ops/registry.h"
#include "native_ops/selection_table.h"

namespace native_ops {

/// Selects nodes: every non-empty field must match.
struct PolicySelector {
  std::string op;  // glob on op symbol or op name
  std::string dsl;
  std::string key;
  std::string node;
};

/// The selection table of one graph, in a policy.
struct PolicySelection {
  std::string op_symbol;  // exact, no glob
  std::string key;        // "CUDA"
  SelectionTable table;
};

/// A parsed policy (well-formed JSON of the right shape; not yet checked against the
/// registry).
struct Policy {
  std::string source;  // file name or "<text>", for messages
  int version = 1;
  std::vector<PolicySelector> disable;
  bool has_keep_dsls = false;
  std::vector<std::string> keep_dsls;
  std::vector<std::string> dsl_priority;
  std::vector<std::pair<std::string, std::vector<std::string>>> order;
  std::vector<std::pair<std::string, OnError>> on_error;
  std::vector<PolicySelection> select;  // version 2
};

/// Parses policy JSON. Throws native_ops::Error for malformed JSON (with line and
/// column), a wrong type, an unknown key (with close names), a missing "version" (1, or 2
/// for a policy with "select"), or a selection table of the wrong shape.
NATIVE_OPS_API Policy parse_policy(std::string_view json, std::string source = "<text>");
/// Reads and parses a policy file; an unreadable file is an error too.
NATIVE_OPS_API Policy load_policy(const std::string& path);

/// One graph whose active nodes a policy changes.
struct GraphChange {
  std::string graph;                // "aten::bmm @ CPU"
  std::vector<std::string> before;  // active node ids in routing order, now
  std::vector<std::string> after;   // ... once the policy is applied
  std::string table_before;         // the selection table in force, summarised; "" for none
  std::string table_after;          // ... once the policy is applied
};

/// What a policy would do.
struct PolicyPlan {
  std::vector<GraphOrder> orders;
  std::vector<GraphChange> changes;
  std::vector<std::string> warnings;  // unreachable nodes, globs that match nothing
};

/// Checks a policy against the registered graphs and says what it would change; changes
/// nothing. Throws native_ops::Error for an unknown op, dsl, key or node id (with close
/// names), or a selection table that does not fit its graph (no such graph, features that
/// differ from the op's, a cell naming a node of another graph).
NATIVE_OPS_API PolicyPlan plan_policy(const Policy& policy);
/// Plans and applies a policy atomically (set_graph_orders); warnings are logged.
NATIVE_OPS_API PolicyPlan apply_policy(const Policy& policy, Apply apply = Apply::nodes_only);

/// "rows x width: bf16 4x5, f32 3x3 buckets; tuned on NVIDIA H200 (9.0)": one line about a table.
NATIVE_OPS_API std::string summarize(const SelectionTable& table);

}  // namespace native_ops
