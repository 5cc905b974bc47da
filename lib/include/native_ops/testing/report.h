#pragma once
// The reports of the test kit: `native-ops test` and `bench` write them (--json-file, --junit,
// --csv, --svg). Each JSON document carries "version": 1; man/ and the README document
// the fields.

#include <string>
#include <vector>

#include "native_ops/export.h"
#include "native_ops/testing/benchmark.h"
#include "native_ops/testing/conformance.h"

namespace native_ops {

/// {"version":1,"passed","failed","skipped","seconds",
///   "results":[{"node","dsl","op","device","dtype","sample","class","meant_for","outcome","skip_reason","seconds",
///     "mismatches":[{"check","message","max_abs_error","max_rel_error","first_index":[...]}]}]}
NATIVE_OPS_API std::string sweep_json(const std::vector<SampleResult>& results);

/// The results as a JUnit XML report: one <testsuite> per node, one <testcase> per sample,
/// a <failure> (its mismatches) or <skipped> where it did not pass.
NATIVE_OPS_API std::string sweep_junit(const std::vector<SampleResult>& results);

/// The benchmark report; docs/bench-report.schema.json is its JSON Schema.
/// {"version":1,"devices":[{"device","name","copy_gbps","threads"}],
///  "rows":[{"node","dsl","op","device","shape","accepted","decline_reason","timed",
///    "original"|"impl"|"routed":{"median_ns","q1_ns","q3_ns","rounds","calls_per_round","noisy"},
///    "bytes","flops","original_gbps","override_gbps","copy_fraction","speedup","speedup_ci":[low,high],
///    "host_overhead_ns","host_overhead_ci":[low,high],"host_original_ns","host_routed_ns","flags":[...]}]}
NATIVE_OPS_API std::string bench_json(const BenchReport& report);

/// Reads back a report that bench_json wrote, from `text` (`source` names it in errors):
/// the "noisy" fields are recomputed; "dtype", "features", "fastest" and
/// "routed_over_fastest" may be absent, as in reports written before grids. Throws
/// native_ops::Error naming the source, the field (a JSON pointer) and what was expected.
NATIVE_OPS_API BenchReport parse_bench_report(const std::string& text, const std::string& source);

/// parse_bench_report of the file at `path`, which must be a regular file (no FIFO, device
/// or directory) of at most 256 MiB; throws native_ops::Error naming the path otherwise.
NATIVE_OPS_API BenchReport read_bench_report(const std::string& path);

/// The rows as CSV, one line per (node, shape), times in nanoseconds.
NATIVE_OPS_API std::string bench_csv(const BenchReport& report);

/// An SVG chart: per DSL, the speedup over aten of each (op, shape) on a log scale, with
/// its 95% interval; shapes the cond declines are drawn hollow.
NATIVE_OPS_API std::string bench_svg(const BenchReport& report);

}  // namespace native_ops
