#pragma once
// The JSON documents of the runtime that native-ops hands to machines: `native-ops list,
// dsls, explain, reorder --json` print them and torch.ops.native_ops.status() returns the
// first. Each carries "version": 1; man/ and the README document the fields.

#include <string>
#include <vector>

#include "native_ops/export.h"
#include "native_ops/policy.h"
#include "native_ops/registry.h"

namespace native_ops {

/// {"version":1,"initialized":bool,"disabled":bool,"graphs":[{"op","op_symbol","key","typed","router_installed",
///   "fallthroughs","overlaps":[...],"nodes":[{"position","id","dsl","unconditional","state","reason","origin",
///   "hits","cond_errors"}]}]}
NATIVE_OPS_API std::string graphs_json(const std::vector<GraphInfo>& graphs);

/// {"version":1,"dsls":[{"name","available","version","reason"}]}
NATIVE_OPS_API std::string dsls_json();

/// {"version":1,"op","key","schema","router_installed","fires":id|null,
///   "nodes":[{"position","id","dsl","state","evaluated","accepted","fires","reason"}]}
NATIVE_OPS_API std::string explanation_json(const Explanation& explanation);

/// {"version":1,"policy","applied":bool,"warnings":[...],
///   "changes":[{"graph","before":[node ids],"after":[node ids]}]}
NATIVE_OPS_API std::string policy_plan_json(const PolicyPlan& plan, const std::string& policy, bool applied);

}  // namespace native_ops
