// native-ops bench [--dsl X] [--op Y] [--device cpu|cuda|all] [--grid [--dtype D]... [--cells AXIS=N,...]...]
//                  [--as-routed]
//                  [--json-file FILE] [--csv FILE] [--svg FILE] [--force]
// native-ops bench --report FILE [--json-file FILE] [--csv FILE] [--svg FILE] [--force]
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include "commands.h"
#include "native_ops/error.h"
#include "native_ops/testing/benchmark.h"
#include "native_ops/testing/conformance.h"
#include "native_ops/testing/report.h"
#include "native_ops/testing/samples.h"
#include "report_file.h"

namespace native_ops::cli {

namespace {

struct BenchRequest {
  std::string dsl;
  std::string op;
  std::string device = "all";
  std::string json_file;
  std::string csv;
  std::string svg;
  std::string report;
  double seconds = 0.4;
  bool force = false;
  bool grid = false;
  bool as_routed = false;
  std::vector<std::string> dtypes;
  std::vector<std::string> cells;
};

// --cells AXIS=N[,N...], each given once, into BenchOptions::cells.
std::map<std::string, std::vector<int64_t>> parse_cells(const std::vector<std::string>& given) {
  std::map<std::string, std::vector<int64_t>> cells;
  for (const std::string& text : given) {
    const size_t equals = text.find('=');
    if (equals == 0 || equals == std::string::npos || equals + 1 == text.size()) {
      throw Error("--cells '" + text + "': expected AXIS=VALUE[,VALUE...], such as width=4096,50257");
    }
    const std::string axis = text.substr(0, equals);
    if (cells.count(axis)) throw Error("--cells names the axis '" + axis + "' twice: list its values in one --cells");
    std::vector<int64_t>& values = cells[axis];
    std::stringstream list(text.substr(equals + 1));
    for (std::string value; std::getline(list, value, ',');) {
      size_t used = 0;
      int64_t number = 0;
      try {
        number = std::stoll(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (value.empty() || used != value.size() || !std::isdigit(static_cast<unsigned char>(value[0]))) {
        throw Error("--cells '" + text + "': '" + value + "' is not a whole number");
      }
      values.push_back(number);
    }
    if (text.back() == ',') throw Error("--cells '" + text + "': '' is not a whole number");
  }
  return cells;
}

std::string duration(double ns) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(ns < 1e4 ? 0 : 1);
  if (ns < 1e4) {
    text << ns << "ns";
  } else if (ns < 1e7) {
    text << ns / 1e3 << "us";
  } else {
    text << ns / 1e6 << "ms";
  }
  return text.str();
}

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << value;
  return text.str();
}

// The routing cost, or "~0" when its interval holds zero: lost in the kernel's own noise;
// "-" where the call was not host-timed.
std::string routing_cost(const BenchRow& r) {
  if (!r.accepted || r.host_routed_ns <= 0) return "-";
  if (r.host_overhead_low <= 0 && r.host_overhead_high >= 0) return "~0";
  return duration(r.host_overhead_ns);
}

// --as-routed: how many cells the routed call loses to aten, and how many it runs within
// 3% of the fastest of aten and the nodes that accept them (medians of paired rounds).
void print_routed_summary(const BenchReport& report) {
  size_t cells = 0, slower = 0, near_fastest = 0;
  for (const BenchRow& r : report.rows) {
    if (!r.timed || r.fastest.empty()) continue;
    ++cells;
    slower += std::count(r.flags.begin(), r.flags.end(), "routed slower than aten");
    near_fastest += r.near_fastest();
  }
  if (cells == 0) return;
  std::cout << "\nAs routed: " << cells << " cells; slower than aten (upper 95% bound < 0.98): " << slower
            << "; within 3% of the fastest of aten and the accepting nodes: " << near_fastest << " ("
            << fixed(100.0 * near_fastest / cells, 1) << "%)\n";
}

// Per-node grid runs: what misses the grid goals (check_grid_goals).
void print_grid_goals(const GridGoalCheck& check) {
  if (check.floor_cells == 0 && check.odd_cells == 0 && check.decode_calls == 0) return;
  const GridGoals goals;
  std::cout << "\n";
  if (check.floor_cells > 0) {
    std::cout << "Floor: " << check.floor_cells << " cells move " << fixed(goals.min_bytes / (1 << 20), 0)
              << " MiB or more at up to " << fixed(goals.max_flops_per_byte, 0) << " flops a byte; under "
              << fixed(100 * goals.fraction, 0) << "% of the copy floor with the fastest override ("
              << fixed(100 * goals.bf16_fraction, 0) << "% at bf16 rows " << goals.bf16_min_width << "-"
              << goals.bf16_max_width << " wide): " << check.under_floor.size() << "\n";
    for (const FloorMiss& miss : check.under_floor) {
      std::cout << "  " << miss.op_symbol << " " << miss.shape << " (" << miss.device << "): " << miss.fastest_node
                << " " << fixed(100 * miss.fraction, 0) << "%, aten " << fixed(100 * miss.aten_fraction, 0)
                << "%, goal " << fixed(100 * miss.goal, 0) << "%\n";
    }
  }
  if (check.odd_cells > 0) {
    std::cout << "Odd widths beside a multiple of 8 timed in the run: " << check.odd_cells
              << "; costing more than their extra bytes: " << check.odd_over.size() << "\n";
    for (const OddWidthMiss& miss : check.odd_over) {
      std::cout << "  " << miss.op_symbol << " " << miss.shape << " (" << miss.device << "): " << duration(miss.ns)
                << ", width " << miss.aligned_width << " " << duration(miss.aligned_ns) << ": at most "
                << duration(miss.allowed_ns) << "\n";
    }
  }
  if (check.decode_calls > 0) {
    std::cout << "Decode calls (up to " << goals.decode_rows
              << " rows; the longer of device and host time): " << check.decode_calls
              << "; slower than aten's: " << check.decode_slower.size() << "\n";
    for (const DecodeMiss& miss : check.decode_slower) {
      std::cout << "  " << miss.node_id << " " << miss.shape << " (" << miss.device << "): " << duration(miss.routed_ns)
                << ", aten " << duration(miss.original_ns) << "\n";
    }
  }
}

void print_table(const BenchReport& report, bool color) {
  for (const BenchDevice& d : report.devices) {
    std::cout << d.device << ": " << d.name;
    if (d.threads > 0) std::cout << ", " << d.threads << " threads";
    std::cout << "; copy bandwidth " << fixed(d.copy_gbps, 1) << " GB/s (read + write)\n";
  }
  size_t node_width = 19, shape_width = 26;  // widened to the longest, so that columns stay aligned
  for (const BenchRow& r : report.rows) {
    node_width = std::max(node_width, r.node_id.size() + 2);
    shape_width = std::max(shape_width, r.shape.size() + 2);
  }
  std::cout << "\n"
            << std::left << std::setw(node_width) << "NODE" << std::setw(shape_width) << "SHAPE" << std::right
            << std::setw(9) << "ATEN" << std::setw(9) << "IMPL" << std::setw(9) << "ROUTED" << std::setw(22)
            << "SPEEDUP (95% CI)" << std::setw(8) << "GB/s" << std::setw(7) << "%COPY" << std::setw(9) << "ROUTING"
            << "  FLAGS\n";
  for (const BenchRow& r : report.rows) {
    std::cout << std::left << std::setw(node_width) << r.node_id << std::setw(shape_width) << r.shape << std::right;
    if (!r.timed) {
      // Untimed: declined where the impl may be wrong, or "not run: why".
      std::cout << "  " << (r.decline_reason.rfind("not run", 0) == 0 ? "" : "declined: ") << r.decline_reason << "\n";
      continue;
    }
    const std::string speedup =
        fixed(r.speedup, 2) + "x (" + fixed(r.speedup_low, 2) + "-" + fixed(r.speedup_high, 2) + ")";
    std::cout << std::setw(9) << duration(r.original.median_ns) << std::setw(9)
              << (r.impl.rounds > 0 ? duration(r.impl.median_ns) : "-") << std::setw(9)
              << (r.accepted ? duration(r.routed.median_ns) : "-") << std::setw(22)
              << paint(speedup,
                       r.speedup_low > 1    ? "active"
                       : r.speedup_high < 1 ? "unavailable"
                                            : "disabled",
                       color)
              << std::setw(8) << fixed(r.override_gbps, 1) << std::setw(6) << fixed(100 * r.copy_fraction, 0) << "%"
              << std::setw(9) << routing_cost(r) << "  ";
    std::string flags = r.accepted ? "" : "declined (" + r.decline_reason + ")";
    if (!r.fastest.empty() && r.fastest != r.node_id) {
      flags = "fastest " + r.fastest + ", routed/fastest " + fixed(r.routed_over_fastest, 2) + " (" +
              fixed(r.routed_over_fastest_low, 2) + "-" + fixed(r.routed_over_fastest_high, 2) + ")";
    }
    for (const std::string& flag : r.flags) flags += (flags.empty() ? "" : ", ") + flag;
    std::cout << flags << "\n";
  }
  std::cout << "\nATEN: the original kernel; IMPL: the override alone; ROUTED: through the dispatcher and router.\n"
               "SPEEDUP: ATEN / ROUTED (declined shapes: ATEN / IMPL). ROUTING: ROUTED - IMPL, host time\n"
               "(~0: its 95% interval holds zero, lost in the kernel's noise; -: not host-timed, a GPU call of\n"
            << duration(kHostTimedBelowNs) << " or more).\n";
  print_routed_summary(report);
}

std::string to_upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// Where overrides of one op in several DSLs ran on the same shapes: aten and each DSL's
// time side by side (the routed call, or the impl alone where the cond declines: "*").
void print_side_by_side(const BenchReport& report) {
  std::vector<std::string> dsls;
  std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, const BenchRow*>> cells;
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  for (const BenchRow& r : report.rows) {
    if (!r.timed) continue;
    if (std::find(dsls.begin(), dsls.end(), r.dsl) == dsls.end()) dsls.push_back(r.dsl);
    const auto key = std::make_tuple(r.op_symbol, r.device, r.shape);
    if (cells.find(key) == cells.end()) order.push_back(key);
    cells[key][r.dsl] = &r;
  }
  const bool shared = std::any_of(cells.begin(), cells.end(), [](const auto& cell) { return cell.second.size() > 1; });
  if (!shared) return;
  size_t op_width = 14, shape_width = 26;
  for (const auto& [op, device, shape] : order) {
    op_width = std::max(op_width, op.size() + 2);
    shape_width = std::max(shape_width, shape.size() + 2);
  }
  std::cout << "\nSIDE BY SIDE (routed time; * the impl alone, where its cond declines)\n"
            << std::left << std::setw(op_width) << "OP" << std::setw(shape_width) << "SHAPE" << std::right
            << std::setw(10) << "ATEN";
  for (const std::string& dsl : dsls) std::cout << std::setw(11) << to_upper(dsl);
  std::cout << "\n";
  for (const auto& key : order) {
    const auto& by_dsl = cells[key];
    std::cout << std::left << std::setw(op_width) << std::get<0>(key) << std::setw(shape_width) << std::get<2>(key)
              << std::right << std::setw(10) << duration(by_dsl.begin()->second->original.median_ns);
    for (const std::string& dsl : dsls) {
      const auto found = by_dsl.find(dsl);
      if (found == by_dsl.end()) {
        std::cout << std::setw(11) << "-";
        continue;
      }
      const BenchRow& r = *found->second;
      std::cout << std::setw(11) << duration(r.override_timing().median_ns) + (r.accepted ? "" : "*");
    }
    std::cout << "\n";
  }
}

std::vector<ReportFile> report_files(const BenchRequest& request) {
  std::vector<ReportFile> files;
  if (!request.json_file.empty()) files.push_back({"--json-file", request.json_file, ReportKind::bench_json});
  if (!request.csv.empty()) files.push_back({"--csv", request.csv, ReportKind::bench_csv});
  if (!request.svg.empty()) files.push_back({"--svg", request.svg, ReportKind::bench_svg});
  return files;
}

}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions& options) {
  auto request = std::make_shared<BenchRequest>();
  CLI::App* command = app.add_subcommand(
      "bench", "Time every override against aten on its op's benchmark shapes (medians, 95% intervals)");
  command->add_option("--dsl", request->dsl, "Only the overrides written in this DSL");
  command->add_option("--op", request->op, "Only the overrides of this op: \"bmm\", \"add_.Tensor\"");
  command->add_option("--device", request->device, "cpu, cuda, or all (default: all the machine has)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  command->add_option("--json-file", request->json_file,
                      "Also write the report as JSON (docs/bench-report.schema.json) to FILE");
  command->add_option("--csv", request->csv, "Also write the rows as CSV to FILE");
  command->add_option("--svg", request->svg, "Also write an SVG chart of the speedups to FILE");
  command->add_flag("--force", request->force,
                    "Let the report files replace files that are not reports of their kind, and symbolic links");
  command->add_flag("--grid", request->grid,
                    "Time the op database's shape grids (rows x widths of real models, decode rows, odd sizes) "
                    "instead of its benchmark shapes");
  command->add_option("--dtype", request->dtypes, "With --grid: only these dtypes (repeatable): f32, bf16, ...");
  command->add_option("--cells", request->cells,
                      "With --grid: only the cells whose AXIS is one of these values (repeatable, an axis each): "
                      "width=151936,256000");
  command->add_flag("--as-routed", request->as_routed,
                    "Time each op's routed call as configured (order, policy, selection tables) against aten: one "
                    "row per op and shape, naming the node that fires");
  CLI::Option* seconds =
      command->add_option("--seconds", request->seconds, "Time budget per (override, shape), default 0.4")
          ->check(CLI::Range(0.01, 60.0));
  command
      ->add_option("--report", request->report,
                   "Print a report that --json-file wrote, instead of running: its tables and, for a grid run, "
                   "what misses the grid goals")
      ->excludes(command->get_option("--dsl"))
      ->excludes(command->get_option("--op"))
      ->excludes(command->get_option("--device"))
      ->excludes(command->get_option("--grid"))
      ->excludes(command->get_option("--dtype"))
      ->excludes(command->get_option("--cells"))
      ->excludes(command->get_option("--as-routed"))
      ->excludes(seconds);
  command->callback([&options, request] {
    BenchOptions bench;
    bench.dsl = request->dsl;
    bench.op_symbol = request->op;
    bench.seconds_per_case = request->seconds;
    bench.grid = request->grid;
    bench.as_routed = request->as_routed;
    if (!request->dtypes.empty() && !request->grid) throw Error("--dtype selects grid cells: add --grid");
    for (const std::string& name : request->dtypes) bench.dtypes.push_back(parse_dtype(name));
    if (!request->cells.empty() && !request->grid) throw Error("--cells selects grid cells: add --grid");
    bench.cells = parse_cells(request->cells);
    if (request->device == "cpu") bench.devices = {c10::DeviceType::CPU};
    if (request->device == "cuda") bench.devices = {c10::DeviceType::CUDA};
    const std::vector<ReportFile> files = report_files(*request);
    check_report_files(files, request->force);  // before the benchmarks, which take minutes
    BenchReport report;
    if (!request->report.empty()) {
      report = read_bench_report(request->report);
    } else {
      options.start();
      const bool tty = isatty(STDERR_FILENO);
      report = run_benchmarks(bench, [tty](size_t done, size_t total, const std::string& what) {
        if (tty) std::cerr << "\r[" << done << "/" << total << "] " << std::left << std::setw(60) << what << std::flush;
      });
      if (tty) std::cerr << "\r" << std::string(80, ' ') << "\r" << std::flush;
    }
    const GridGoalCheck goals = check_grid_goals(report);
    for (const ReportFile& file : files) {
      write_report_file(file, file.kind == ReportKind::bench_json  ? bench_json(report) + "\n"
                              : file.kind == ReportKind::bench_csv ? bench_csv(report)
                                                                   : bench_svg(report));
    }
    if (options.json) {
      std::cout << bench_json(report) << "\n";
    } else {
      print_table(report, options.use_color());
      print_side_by_side(report);
      print_grid_goals(goals);
    }
    if (report.rows.empty()) {
      std::cerr << (request->report.empty() ? "native-ops: no override matches: nothing was benchmarked\n"
                                            : "native-ops: the report holds no rows\n");
    }
  });
}

}  // namespace native_ops::cli
