#pragma once
// The JSON documents native-ops hands to machines: `native-ops ... --json` prints them and
// torch.ops.native_ops.status() returns the first. Each carries "version": 1; man/ and
// the README document the fields.

#include <string>
#include <vector>

#include "native_ops/benchmark.h"
#include "native_ops/conformance.h"
#include "native_ops/policy.h"
#include "native_ops/registry.h"

namespace native_ops {

/// {"version":1,"initialized":bool,"disabled":bool,"graphs":[{"op","op_symbol","key","typed","router_installed",
///   "fallthroughs","overlaps":[...],"nodes":[{"position","id","dsl","unconditional","state","reason","origin",
///   "hits","cond_errors"}]}]}
std::string graphs_json(const std::vector<GraphInfo>& graphs);

/// {"version":1,"dsls":[{"name","available","version","reason"}]}
std::string dsls_json();

/// {"version":1,"op","key","schema","router_installed","fires":id|null,
///   "nodes":[{"position","id","dsl","state","evaluated","accepted","fires","reason"}]}
std::string explanation_json(const Explanation& explanation);

/// {"version":1,"policy","applied":bool,"warnings":[...],
///   "changes":[{"graph","before":[node ids],"after":[node ids]}]}
std::string policy_plan_json(const PolicyPlan& plan, const std::string& policy, bool applied);

/// {"version":1,"passed","failed","skipped","seconds",
///   "results":[{"node","dsl","op","device","dtype","sample","class","meant_for","outcome","skip_reason","seconds",
///     "mismatches":[{"check","message","max_abs_error","max_rel_error","first_index":[...]}]}]}
std::string sweep_json(const std::vector<SampleResult>& results);

/// The results as a JUnit XML report: one <testsuite> per node, one <testcase> per sample,
/// a <failure> (its mismatches) or <skipped> where it did not pass.
std::string sweep_junit(const std::vector<SampleResult>& results);

/// The benchmark report; docs/bench-report.schema.json is its JSON Schema.
/// {"version":1,"devices":[{"device","name","copy_gbps","threads"}],
///  "rows":[{"node","dsl","op","device","shape","accepted","decline_reason","timed",
///    "original"|"impl"|"routed":{"median_ns","q1_ns","q3_ns","rounds","calls_per_round","noisy"},
///    "bytes","flops","original_gbps","override_gbps","copy_fraction","speedup","speedup_ci":[low,high],
///    "host_overhead_ns","host_overhead_ci":[low,high],"host_original_ns","host_routed_ns","flags":[...]}]}
std::string bench_json(const BenchReport& report);

/// The rows as CSV, one line per (node, shape), times in nanoseconds.
std::string bench_csv(const BenchReport& report);

/// An SVG chart: per DSL, the speedup over aten of each (op, shape) on a log scale, with
/// its 95% interval; shapes the cond declines are drawn hollow.
std::string bench_svg(const BenchReport& report);

}  // namespace native_ops
