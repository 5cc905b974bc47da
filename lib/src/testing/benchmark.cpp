// Benchmarks of overrides against the original kernel. See benchmark.h for the method.
#include "native_ops/testing/benchmark.h"
#include "native_ops/detail/thread_routing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>

#include "native_ops/error.h"
#include "native_ops/node_access.h"
#include "native_ops/testing/conformance.h"
#include "native_ops/testing/op_db.h"
#include "native_ops/testing/samples.h"
#include "testing/bench_clock.h"

namespace native_ops {

namespace {

using Clock = std::chrono::steady_clock;

// A flag needs the whole 95% interval past parity by this much: differences of a percent
// or two are within what a shared machine's drift does to paired rounds.
constexpr double kFlagMargin = 0.02;

struct Variant {
  std::function<void()> call;
  std::vector<double> ns;  // per call, one value per round
};

// The call of `op` on (copies of) `arguments`: with routing bypassed (the original kernel),
// or through the dispatcher and the router as published.
Variant original_call(const c10::OperatorHandle& op, const torch::jit::Stack& arguments) {
  return {[&op, &arguments] {
            torch::jit::Stack stack = arguments;
            BypassRouting bypass;
            op.callBoxed(stack);
          },
          {}};
}
Variant routed_call(const c10::OperatorHandle& op, const torch::jit::Stack& arguments) {
  return {[&op, &arguments] {
            torch::jit::Stack stack = arguments;
            op.callBoxed(stack);
          },
          {}};
}

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * (values.size() - 1);
  const size_t below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - below) * (values[above] - values[below]);
}

Timing summarize(const Variant& variant, size_t calls_per_round) {
  Timing timing;
  if (variant.ns.empty()) return timing;
  timing.median_ns = quantile(variant.ns, 0.5);
  timing.q1_ns = quantile(variant.ns, 0.25);
  timing.q3_ns = quantile(variant.ns, 0.75);
  timing.rounds = variant.ns.size();
  timing.calls_per_round = calls_per_round;
  return timing;
}

struct Interval {
  double median = 0;
  double low = 0;
  double high = 0;
};

// The median of per-round values and its 95% distribution-free confidence interval: the
// order statistics n/2 -+ 0.98 sqrt(n) (the binomial interval of the median).
Interval median_with_interval(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  const double half_width = 0.98 * std::sqrt(n);
  const auto at = [&](double index) { return values[static_cast<size_t>(std::clamp(index, 0.0, n - 1))]; };
  return {quantile(values, 0.5), at(std::floor(n / 2 - half_width)), at(std::ceil(n / 2 + half_width) - 1)};
}

// Per-round a / b (ratio) or a - b (difference) of two variants timed in the same rounds.
Interval paired(const std::vector<double>& a, const std::vector<double>& b, bool ratio) {
  std::vector<double> values;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) values.push_back(ratio ? a[i] / b[i] : a[i] - b[i]);
  return median_with_interval(std::move(values));
}

// Warm-up, then rounds of every variant in turn until the budget and the minimum are met.
size_t measure(detail::BenchClock& clock, std::vector<Variant*> variants, const BenchOptions& options) {
  double slowest = 0;
  for (Variant* variant : variants) {
    variant->call();
    clock.synchronize();
    // The fastest of three, so that one call the OS preempted does not shrink every round.
    double fastest = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 3; ++i) fastest = std::min(fastest, clock.time_per_call(variant->call, 1));
    slowest = std::max(slowest, fastest);
  }
  const size_t calls = clock.calls_per_round(slowest);
  const auto start = Clock::now();
  for (size_t round = 0; round < options.max_rounds; ++round) {
    for (size_t i = 0; i < variants.size(); ++i) {
      Variant& variant = *variants[(round + i) % variants.size()];  // rotate who goes first
      variant.ns.push_back(clock.time_per_call(variant.call, calls));
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (round + 1 >= options.min_rounds && elapsed >= options.seconds_per_case) break;
  }
  return calls;
}

struct HostTimes {
  Interval overhead;  // routed - impl
  double original_ns = 0;
  double routed_ns = 0;
};

// Host time per call of the three variants in interleaved rounds: on a GPU a call returns
// once its kernels are queued, so this is what the caller's thread spends on it.
HostTimes host_times(detail::BenchClock& clock, const Variant& original, const Variant& routed, const Variant& impl) {
  std::vector<double> original_ns, routed_ns, impl_ns;
  for (int round = 0; round < 31; ++round) {
    original_ns.push_back(clock.host_time_per_call(original.call, 20));
    routed_ns.push_back(clock.host_time_per_call(routed.call, 20));
    impl_ns.push_back(clock.host_time_per_call(impl.call, 20));
  }
  return {paired(routed_ns, impl_ns, /*ratio=*/false), quantile(original_ns, 0.5), quantile(routed_ns, 0.5)};
}

struct BenchCaseRef {
  SweepUnit unit;
  NodeHandle node;
  OpEntry entry;
  BenchCase bench;
  std::string dtype;  // grid cells only
  std::vector<std::pair<std::string, int64_t>> features;
};

// The values of each axis over the grids a run times, to check BenchOptions::cells against.
using GridValues = std::map<std::string, std::set<int64_t>>;

// The cells of `entry`'s grid on `device`: every point of its axes' product in each
// selected dtype whose features take the values options.cells asks for, but those its cost
// model says move more than the grid's max_bytes (sized on the meta device, before
// anything is allocated). Adds the grid's axes and values to `seen`.
std::vector<BenchCaseRef> grid_cases(const BenchCaseRef& base, c10::Device device, const BenchOptions& options,
                                     GridValues& seen) {
  std::vector<BenchCaseRef> cases;
  const ShapeGrid grid = base.entry.grid(device);
  for (const GridAxis& axis : grid.axes) seen[axis.name].insert(axis.values.begin(), axis.values.end());
  for (const auto& [name, values] : options.cells) {
    const bool on_grid =
        std::any_of(grid.axes.begin(), grid.axes.end(), [&](const GridAxis& a) { return a.name == name; });
    if (!on_grid) return cases;
  }
  const auto selected = [&](const std::vector<std::pair<std::string, int64_t>>& features) {
    return std::all_of(features.begin(), features.end(), [&](const std::pair<std::string, int64_t>& feature) {
      const auto wanted = options.cells.find(feature.first);
      return wanted == options.cells.end() ||
             std::find(wanted->second.begin(), wanted->second.end(), feature.second) != wanted->second.end();
    });
  };
  const std::vector<c10::ScalarType>& dtypes = options.dtypes;
  std::vector<size_t> index(grid.axes.size(), 0);
  const auto next = [&] {
    for (size_t axis = index.size(); axis-- > 0;) {
      if (++index[axis] < grid.axes[axis].values.size()) return true;
      index[axis] = 0;
    }
    return false;
  };
  for (const c10::ScalarType dtype : base.entry.dtypes) {
    if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) continue;
    std::fill(index.begin(), index.end(), 0);
    do {
      std::vector<int64_t> point;
      BenchCaseRef cell = base;
      cell.dtype = dtype_name(dtype);
      cell.bench.shape = cell.dtype;
      for (size_t axis = 0; axis < index.size(); ++axis) {
        point.push_back(grid.axes[axis].values[index[axis]]);
        cell.features.emplace_back(grid.axes[axis].name, point.back());
        cell.bench.shape += " " + grid.axes[axis].name + "=" + std::to_string(point.back());
      }
      if (!selected(cell.features)) continue;
      if (base.entry.cost(grid.make_arguments(point, dtype, c10::Device(c10::kMeta))).bytes > grid.max_bytes) continue;
      cell.bench.make_arguments = [make = grid.make_arguments, point, dtype, device] {
        return make(point, dtype, device);
      };
      if (grid.impl_correct_for) cell.bench.impl_correct_for = grid.impl_correct_for(point, dtype);
      cases.push_back(std::move(cell));
    } while (next());
  }
  return cases;
}

// A row for `unit`, not yet measured.
BenchRow row_for(const SweepUnit& unit) {
  BenchRow row;
  row.node_id = unit.node_id;
  row.dsl = unit.dsl;
  row.op_symbol = unit.op_symbol;
  row.device = unit.target().str();
  return row;
}

// The routed call as configured against aten, and the impl of each node whose cond accepts
// the call, in the same rounds; the row names the node that fires and the fastest.
BenchRow time_as_routed(detail::BenchClock& clock, const c10::OperatorHandle& op, const torch::jit::Stack& arguments,
                        BenchRow row, const BenchOptions& options, double copy_gbps) {
  const Explanation explanation = explain(row.op_symbol, dispatch_key_of(arguments), arguments);
  row.node_id = explanation.fires.value_or("aten");
  row.dsl = "aten";
  std::vector<std::pair<std::string, NodeHandle>> accepting;
  for (const CondCheck& check : explanation.checks) {
    if (check.fires) row.dsl = check.node.dsl;
    if (check.accepted) accepting.emplace_back(check.node.id, find_node_handle(check.node.id));
  }
  row.accepted = true;
  Variant original = original_call(op, arguments);
  Variant routed = routed_call(op, arguments);
  std::vector<Variant> impls;
  impls.reserve(accepting.size());
  for (const auto& [id, node] : accepting) {
    impls.push_back({[node = node, &arguments] {
                       torch::jit::Stack stack = arguments;
                       run_impl(node, stack);
                     },
                     {}});
  }
  std::vector<Variant*> variants = {&original, &routed};
  for (Variant& impl : impls) variants.push_back(&impl);
  const size_t calls = measure(clock, variants, options);
  row.timed = true;
  row.original = summarize(original, calls);
  row.routed = summarize(routed, calls);
  const Interval speedup = paired(original.ns, routed.ns, /*ratio=*/true);
  row.speedup = speedup.median;
  row.speedup_low = speedup.low;
  row.speedup_high = speedup.high;
  row.original_gbps = row.bytes / row.original.median_ns;
  row.override_gbps = row.bytes / row.routed.median_ns;
  row.copy_fraction = row.override_gbps / copy_gbps;

  row.fastest = "aten";
  const Variant* fastest = &original;
  double fastest_ns = row.original.median_ns;
  for (size_t i = 0; i < impls.size(); ++i) {
    const double ns = quantile(impls[i].ns, 0.5);
    if (ns < fastest_ns) {
      fastest_ns = ns;
      fastest = &impls[i];
      row.fastest = accepting[i].first;
    }
  }
  const Interval over_fastest = paired(routed.ns, fastest->ns, /*ratio=*/true);
  row.routed_over_fastest = over_fastest.median;
  row.routed_over_fastest_low = over_fastest.low;
  row.routed_over_fastest_high = over_fastest.high;

  if (row.speedup_high < 1 - kFlagMargin) row.flags.push_back("routed slower than aten");
  if (row.routed_over_fastest_low > 1 + kFastestMargin) row.flags.push_back("slower than the fastest");
  if (row.original.noisy() || row.routed.noisy()) row.flags.push_back("noisy");
  return row;
}

// Throws where options.cells names an axis, or a value on it, that no grid of the run has
// (a misspelt axis or a value off the grid would otherwise time nothing and say nothing);
// no grid at all: nothing could run here, and the rows say why.
void check_cells(const BenchOptions& options, const GridValues& seen) {
  if (seen.empty()) return;
  for (const auto& [name, values] : options.cells) {
    const auto axis = seen.find(name);
    if (axis == seen.end()) {
      std::string axes;
      for (const auto& entry : seen) axes += (axes.empty() ? "" : ", ") + entry.first;
      throw Error("no grid of the overrides selected has an axis '" + name + "' (their axes: " + axes +
                  "): name one of those");
    }
    for (const int64_t value : values) {
      if (axis->second.count(value)) continue;
      std::string known;
      for (const int64_t v : axis->second) known += (known.empty() ? "" : ", ") + std::to_string(v);
      throw Error("no grid of the overrides selected has " + name + " " + std::to_string(value) +
                  " (its values: " + known + "): pick values from the grid");
    }
  }
}

}  // namespace

BenchReport run_benchmarks(const BenchOptions& options, const BenchProgress& progress) {
  const detail::StrictFailuresScope strict;  // a fallback would time aten, not the override
  if (!options.cells.empty() && !options.grid) throw Error("cells are chosen from grids: set BenchOptions::grid");
  SweepOptions selection;
  selection.dsl = options.dsl;
  selection.op_symbol = options.op_symbol;
  selection.devices = options.devices;
  const std::vector<SweepUnit> units = plan_sweep(selection);

  BenchReport report;
  std::set<std::pair<std::string, std::string>> routed_ops;  // as_routed: (op, device) seen
  std::map<std::string, std::unique_ptr<detail::BenchClock>> clocks;
  std::map<std::string, double> copy_gbps;
  std::vector<BenchCaseRef> cases;
  GridValues grid_values;
  for (const SweepUnit& unit : units) {
    const c10::Device device = unit.target();
    // A node that cannot run here gets one row that says why.
    std::string cannot_run;
    NodeHandle node;
    try {
      node = find_node_handle(unit.node_id);
      if (unit.device == c10::DeviceType::CUDA && !at::hasCUDA()) cannot_run = "this process sees no CUDA device";
    } catch (const Error& e) {
      cannot_run = e.what();
    }
    if (!cannot_run.empty()) {
      BenchRow row = row_for(unit);
      row.decline_reason = "not run: " + cannot_run;
      report.rows.push_back(row);
      continue;
    }
    if (options.as_routed && !routed_ops.insert({unit.op_symbol, device.str()}).second) continue;
    for (const OpEntry& entry : op_entries_for(unit.op_symbol, unit.dsl)) {
      if (std::find(entry.devices.begin(), entry.devices.end(), unit.device) == entry.devices.end()) continue;
      if (!options.grid) {
        for (const BenchCase& bench : entry.bench_cases(device)) cases.push_back({unit, node, entry, bench, "", {}});
      } else if (entry.grid) {
        for (BenchCaseRef& cell : grid_cases({unit, node, entry, {}, "", {}}, device, options, grid_values)) {
          cases.push_back(std::move(cell));
        }
      }
    }
  }

  check_cells(options, grid_values);
  for (const BenchCaseRef& c : cases) {  // after the checks: measuring the copy bandwidth takes seconds
    const c10::Device device = c.unit.target();
    if (clocks.count(device.str())) continue;
    auto clock = detail::BenchClock::for_device(device);
    BenchDevice info{device.str(), clock->device_name(), clock->copy_gbps(),
                     device.is_cpu() ? at::get_num_threads() : 0};
    copy_gbps[device.str()] = info.copy_gbps;
    report.devices.push_back(info);
    clocks[device.str()] = std::move(clock);
  }

  BenchOptions budget = options;
  if (options.seconds_total > 0) {
    budget.seconds_per_case = options.seconds_total / static_cast<double>(std::max<size_t>(cases.size(), 1));
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [unit, node, entry, bench, dtype, features] = cases[i];
    if (progress) progress(i, cases.size(), unit.node_id + " " + bench.shape);
    const c10::Device device = unit.target();
    detail::BenchClock& clock = *clocks.at(device.str());
    BenchRow row = row_for(unit);
    row.shape = bench.shape;
    row.dtype = dtype;
    row.features = features;

    const torch::jit::Stack arguments = bench.make_arguments();
    const Cost cost = entry.cost(arguments);
    row.bytes = cost.bytes;
    row.flops = cost.flops;
    if (options.as_routed) {
      report.rows.push_back(time_as_routed(clock, node.op(), arguments, row, budget, copy_gbps.at(device.str())));
      continue;
    }
    const CondDecision decision = check_node(node, arguments);
    row.accepted = decision.accepted;
    row.decline_reason = decision.reason;
    const bool impl_correct = std::find(bench.impl_correct_for.begin(), bench.impl_correct_for.end(), unit.node_id) !=
                              bench.impl_correct_for.end();
    if (!row.accepted && !impl_correct) {
      report.rows.push_back(row);  // declined, and the impl may be wrong there: nothing to time
      continue;
    }

    const c10::OperatorHandle op = node.op();
    SoloRoute solo(node);
    Variant original = original_call(op, arguments);
    Variant impl{[&arguments, node = node] {
                   torch::jit::Stack stack = arguments;
                   run_impl(node, stack);
                 },
                 {}};
    Variant routed = routed_call(op, arguments);
    std::vector<Variant*> variants = {&original, &impl};
    if (row.accepted) variants.push_back(&routed);
    const size_t calls = measure(clock, variants, budget);
    row.timed = true;
    row.original = summarize(original, calls);
    row.impl = summarize(impl, calls);
    row.routed = summarize(routed, calls);

    const Timing& override_timing = row.override_timing();
    const Interval speedup = paired(original.ns, (row.accepted ? routed : impl).ns, /*ratio=*/true);
    row.speedup = speedup.median;
    row.speedup_low = speedup.low;
    row.speedup_high = speedup.high;
    row.original_gbps = row.bytes / row.original.median_ns;
    row.override_gbps = row.bytes / override_timing.median_ns;
    row.copy_fraction = row.override_gbps / copy_gbps.at(device.str());
    const bool short_call = std::max(row.original.median_ns, row.routed.median_ns) < kHostTimedBelowNs;
    if (row.accepted && options.host_times && (device.is_cpu() || short_call)) {
      // On the CPU a call's host time is its whole time, already measured.
      const HostTimes host = device.is_cpu() ? HostTimes{paired(routed.ns, impl.ns, /*ratio=*/false),
                                                         row.original.median_ns, row.routed.median_ns}
                                             : host_times(clock, original, routed, impl);
      row.host_overhead_ns = host.overhead.median;
      row.host_overhead_low = host.overhead.low;
      row.host_overhead_high = host.overhead.high;
      row.host_original_ns = host.original_ns;
      row.host_routed_ns = host.routed_ns;
    }
    if (row.accepted) {
      if (row.speedup_high < 1 - kFlagMargin) row.flags.push_back("fires where slower");
    } else if (row.speedup_low > 1 + kFlagMargin) {
      row.flags.push_back("declines where faster");
    }
    if (row.original.noisy() || override_timing.noisy()) row.flags.push_back("noisy");
    report.rows.push_back(std::move(row));
  }
  if (progress) progress(cases.size(), cases.size(), "done");
  if (options.grid && !options.as_routed) check_grid_goals(report);
  return report;
}

}  // namespace native_ops
