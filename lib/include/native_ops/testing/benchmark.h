#pragma once
// Benchmarks of every override against the original kernel, on its op's benchmark
// shapes (op database). `native-ops bench` runs these.
//
// For each node and each shape its cond accepts, three calls are timed: the original
// kernel (routing bypassed), the node's impl alone (no dispatcher, no cond) and the routed
// call (dispatcher, router, cond, impl). Shapes the cond declines are timed too where the
// op database says the impl is still correct there (declined for speed), so a cond that
// declines where its impl wins can be flagged.
//
// Method: warm-up, then rounds that run every variant in turn (rotating which goes first),
// until a time budget and a minimum number of rounds are reached. On the CPU a round times
// a batch of calls (at least 200 us) with a steady clock; on a GPU it times one call with
// device events after overwriting a buffer larger than the L2 cache. Reported: medians
// and quartiles over rounds; the speedup is the median of per-round ratios, with a 95%
// distribution-free confidence interval. "fires where slower" needs the whole interval
// below 0.98, "declines where faster" above 1.02.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include "native_ops/export.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace native_ops {

/// Which overrides to benchmark, and how long; empty fields cover everything.
struct BenchOptions {
  std::string dsl;
  std::string op_symbol;
  std::vector<c10::DeviceType> devices;  // default: the devices of the nodes' keys
  double seconds_per_case = 0.4;         // budget per (node, shape), all variants together
  /// > 0: the time budget of the whole run, shared evenly by its cases (seconds_per_case is
  /// then ignored); warm-up and making the inputs come on top.
  double seconds_total = 0;
  /// Also time each call's host cost (routing overhead, launch time): 1860 calls a case. On
  /// a GPU only where aten's and the routed call's device times are under
  /// kHostTimedBelowNs: beyond, the host's few microseconds cannot matter, and the rounds
  /// would wait for 1860 long kernels.
  bool host_times = true;
  /// Time each op's routed call as configured (order, policy, selection table in force)
  /// against aten, once per op and shape instead of once per node: the row names the node
  /// that fires ("aten" when none does) and is flagged "routed slower than aten". The impl
  /// of every node whose cond accepts the call is timed in the same rounds, to name the
  /// fastest (BenchRow::fastest).
  bool as_routed = false;
  size_t min_rounds = 15;
  size_t max_rounds = 400;
  /// Time the op database's shape grids (ShapeGrid) instead of its benchmark shapes.
  bool grid = false;
  std::vector<c10::ScalarType> dtypes;  // grid cells of these dtypes only; empty: all
  /// Grid cells whose feature AXIS takes one of these values, for every AXIS named ("width":
  /// {151936, 256000}); an op's grid without the axis gives none. run_benchmarks throws Error
  /// when no grid it runs has an axis named here, or a value on it; empty: every cell.
  std::map<std::string, std::vector<int64_t>> cells;
};

/// BenchOptions::host_times on a GPU: calls whose device time reaches this are not host-timed.
inline constexpr double kHostTimedBelowNs = 200e3;

/// How far a routed call may lag the fastest of its alternatives and still count as
/// running the fastest (BenchRow::near_fastest).
inline constexpr double kFastestMargin = 0.03;

/// One variant's times over the rounds, per call, in nanoseconds.
struct Timing {
  double median_ns = 0;
  double q1_ns = 0;
  double q3_ns = 0;
  size_t rounds = 0;
  size_t calls_per_round = 0;
  /// The interquartile range is over 10% of the median: treat differences with care.
  bool noisy() const { return median_ns > 0 && (q3_ns - q1_ns) > 0.1 * median_ns; }
};

/// One override on one shape (with BenchOptions::as_routed: the routed call of one op).
struct BenchRow {
  std::string node_id;
  std::string dsl;
  std::string op_symbol;
  std::string device;  // "cpu", "cuda:0"
  std::string shape;
  /// Grid cells: the dtype and each axis' value ("rows", 64), as the op database names them.
  std::string dtype;
  std::vector<std::pair<std::string, int64_t>> features;
  bool accepted = false;       // its cond accepts the shape (the routed call fires it)
  std::string decline_reason;  // why not, when it does not
  bool timed = false;          // false: declined and the impl is not known to be correct there
  Timing original;             // the original kernel (on a GPU: device time, L2 flushed)
  Timing impl;                 // the impl alone
  Timing routed;               // the routed call; empty for declined shapes
  double bytes = 0;            // from the op database's cost model
  double flops = 0;
  double original_gbps = 0;
  double override_gbps = 0;  // of the routed call when accepted, of the impl when declined
  double copy_fraction = 0;  // override_gbps / the device's copy bandwidth
  double speedup = 0;        // original / override: > 1 means the override is faster
  double speedup_low = 0;    // 95% confidence interval of the speedup
  double speedup_high = 0;
  double host_overhead_ns = 0;    // routed - impl, host time: what the dispatcher, router and cond add
  double host_overhead_low = 0;   //   (median of paired rounds) and its 95% interval: an interval
  double host_overhead_high = 0;  //   that holds 0 means the overhead drowns in the kernel's noise
  double host_original_ns = 0;    // host time per call of aten's call and of the routed call: on a
  double host_routed_ns = 0;      //   GPU the launch cost (calls return once queued), on the CPU all
                                  //   of it; 0: not host-timed (BenchOptions::host_times)
  /// as_routed: the fastest of aten and the impls of the nodes whose conds accept the call
  /// (a node id, or "aten"), and the routed call's time over its time: the median of
  /// per-round ratios and its 95% interval; about 1 when the routed call runs it. Flagged
  /// "slower than the fastest" when the whole interval lies above 1 + kFastestMargin. On the CPU the
  /// routed call's time holds the routing (tens of ns); on a GPU it is device time alone.
  std::string fastest;
  double routed_over_fastest = 0;
  double routed_over_fastest_low = 0;
  double routed_over_fastest_high = 0;
  /// as_routed: the routed call runs within 3% of the fastest (by the median).
  bool near_fastest() const { return routed_over_fastest <= 1 + kFastestMargin; }
  /// The override's timing: the routed call's where the cond accepts, else the impl's.
  const Timing& override_timing() const { return accepted ? routed : impl; }
  /// "fires where slower", "declines where faster", "routed slower than aten", "slower than
  /// the fastest", "noisy"; from check_grid_goals: "under the floor goal", "odd width over
  /// its bytes", "decode call slower than aten"
  std::vector<std::string> flags;
};

/// The machine a run measured.
struct BenchDevice {
  std::string device;    // "cpu", "cuda:0"
  std::string name;      // "NVIDIA H200", the CPU model
  double copy_gbps = 0;  // measured at the start of the run: read + write of a large copy
  int threads = 0;       // CPU: intra-op threads
};

struct BenchReport {
  std::vector<BenchDevice> devices;
  std::vector<BenchRow> rows;
};

/// The goals a per-node grid run is held to. A cell is one op, device, dtype and grid
/// point; its override fraction is the best copy_fraction of the nodes timed there (each
/// node's routed call, or its impl where the cond declines: what the kernels can do).
struct GridGoals {
  /// Cells that move fewer bytes, or do more flops per byte, are not held to the floor:
  /// their time is mostly launch and latency, or arithmetic.
  double min_bytes = 16.0 * (1 << 20);
  double max_flops_per_byte = 4;
  /// Of the copy floor (the cell's bytes at the copy bandwidth measured in the same run).
  double fraction = 0.85;
  /// bf16 cells whose "width" feature lies in [bf16_min_width, bf16_max_width].
  double bf16_fraction = 0.90;
  int64_t bf16_min_width = 1024;
  int64_t bf16_max_width = 131072;
  /// A "width" that is not a multiple of 8 may cost its bytes over the next multiple of 8
  /// above the time at a multiple of 8 less than 8 away, and this much more (noise).
  double odd_width_margin = 0.02;
  /// Decode cells (a "rows" feature up to decode_rows) whose node fires: a call costs the
  /// longer of its device time and its host time (launch included), and may cost this much
  /// more than aten's.
  int64_t decode_rows = 64;
  double decode_margin = 0.02;
};

/// A cell whose fastest override misses GridGoals' fraction of the floor.
struct FloorMiss {
  std::string op_symbol;
  std::string device;
  std::string shape;
  std::string fastest_node;  // the node of the best fraction
  double fraction = 0;       // its share of the copy floor
  double aten_fraction = 0;  // aten's, in the same rounds
  double goal = 0;
};

/// An odd-width cell whose fastest override costs more than its extra bytes.
struct OddWidthMiss {
  std::string op_symbol;
  std::string device;
  std::string shape;
  double ns = 0;              // the fastest override's median at the odd width
  int64_t aligned_width = 0;  // the neighbouring multiple of 8 timed in the same run
  double aligned_ns = 0;      // the fastest override's median there
  double allowed_ns = 0;      // aligned_ns * round_up(width, 8) / aligned_width * (1 + margin)
};

/// A decode cell where a node's routed call costs more than aten's, host time counted.
struct DecodeMiss {
  std::string node_id;
  std::string device;
  std::string shape;
  double routed_ns = 0;    // max(device median, host time) of the routed call
  double original_ns = 0;  // the same of aten's call
};

struct GridGoalCheck {
  size_t floor_cells = 0;  // cells held to the floor
  std::vector<FloorMiss> under_floor;
  size_t odd_cells = 0;  // held cells of an odd width with an aligned neighbour
  std::vector<OddWidthMiss> odd_over;
  size_t decode_calls = 0;  // (node, decode cell) pairs that fire, with host times
  std::vector<DecodeMiss> decode_slower;
};

/// Checks the grid cells of a per-node run (rows with features; as-routed rows and bench
/// shapes are left out) against `goals`, and flags the rows that miss them: every row of a
/// cell "under the floor goal" or "odd width over its bytes", a node's row "decode call
/// slower than aten" (each added once, so a report may be checked again). run_benchmarks
/// checks its grid runs with the default goals.
NATIVE_OPS_API GridGoalCheck check_grid_goals(BenchReport& report, const GridGoals& goals = {});

/// Called before each (node, shape) case: its index, the number of cases, and which.
using BenchProgress = std::function<void(size_t done, size_t total, const std::string& what)>;

/// Runs the benchmarks. Throws native_ops::Error for a dsl or op that names nothing
/// registered, or a device this process cannot use. Requires init().
NATIVE_OPS_API BenchReport run_benchmarks(const BenchOptions& options, const BenchProgress& progress = {});

}  // namespace native_ops
