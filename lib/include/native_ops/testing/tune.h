#pragma once
// Tuning: measure every node and aten on the op database's shape grids and write, per op,
// key and dtype, which of them runs in each shape bucket: selection tables (selection.h)
// in a version-2 policy (policy.h). `native-ops tune` runs this.
//
// Per grid cell the winner is the node with the highest speedup over aten among those whose
// cond accepts the cell and whose speedup's 95% interval lies above 1 (routed call against
// aten, interleaved rounds: benchmark.h); otherwise aten. Adjacent cells with the same
// winner share a bucket; an edge goes where the winner changes, at the geometric middle of
// the two grid values. Cells that were not measured (larger than the grid allows) take
// their neighbours' winner.

#include <string>
#include <vector>
#include "native_ops/export.h"

#include "native_ops/policy.h"
#include "native_ops/testing/benchmark.h"

namespace native_ops {

/// What to tune; empty fields cover everything.
struct TuneOptions {
  std::string op_symbol;
  std::string dsl;
  std::vector<c10::DeviceType> devices;
  std::vector<c10::ScalarType> dtypes;
  double seconds_budget = 240;  // the measuring time of the whole run (warm-up and inputs on top)
};

struct TuneResult {
  std::vector<PolicySelection> tables;  // one per (op, key) with features and a grid
  BenchReport measurements;             // every cell, as measured
  std::vector<std::string> skipped;     // ops left out, and why
};

/// Runs the grids and builds the tables. Throws native_ops::Error for an op or dsl that
/// names nothing, or when no op in the selection has both features and a grid. Requires init().
NATIVE_OPS_API TuneResult tune(const TuneOptions& options, const BenchProgress& progress = {});

/// The buckets of one dtype's grid: `axis_values` the grid's values per feature (ascending),
/// `winners` a node id, "aten", or "" (not measured) per grid point, and `margins` the
/// winner's speedup there, both with the last feature varying fastest.
NATIVE_OPS_API SelectionGrid merge_into_buckets(c10::ScalarType dtype,
                                                const std::vector<std::vector<int64_t>>& axis_values,
                                                const std::vector<std::string>& winners,
                                                const std::vector<double>& margins);

/// A version-2 policy (native-ops-policy(5)) holding `tables`.
NATIVE_OPS_API std::string selection_policy_json(const std::vector<PolicySelection>& tables,
                                                 const std::string& description);

}  // namespace native_ops
