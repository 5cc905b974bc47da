// native-ops tune [--op X] [--dsl X] [--device cpu|cuda|all] [--dtype D]... [--budget SECONDS]
//                 -o FILE [--results FILE] [--force]
#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <map>

#include "commands.h"
#include "native_ops/error.h"
#include "native_ops/names.h"
#include "native_ops/testing/report.h"
#include "native_ops/testing/tune.h"
#include "report_file.h"

namespace native_ops::cli {

namespace {

struct TuneRequest {
  std::string op;
  std::string dsl;
  std::string device = "all";
  std::vector<std::string> dtypes;
  double budget = 240;
  std::string output;
  std::string results;
  bool force = false;
};

// One line per table and dtype: how many buckets, and which node wins how many of them.
void print_tables(const TuneResult& result, const std::string& output) {
  for (const PolicySelection& selection : result.tables) {
    std::cout << selection.op_symbol << " @ " << selection.key << ": " << summarize(selection.table) << "\n";
    for (const SelectionGrid& grid : selection.table.grids) {
      std::map<std::string, size_t> wins;
      for (const std::string& cell : grid.cells) ++wins[cell];
      std::cout << "  " << std::left << std::setw(5) << dtype_name(grid.dtype) << std::right;
      for (const auto& [winner, count] : wins) std::cout << "  " << winner << " " << count;
      std::cout << "\n";
    }
  }
  for (const std::string& line : result.skipped) std::cout << "skipped " << line << "\n";
  std::cout << "wrote " << output << ": apply it with native-ops reorder --policy " << output
            << " or NATIVE_OPS_ORDER_POLICY\n";
}

}  // namespace

void add_tune_command(CLI::App& app, const GlobalOptions& options) {
  auto request = std::make_shared<TuneRequest>();
  CLI::App* command = app.add_subcommand(
      "tune", "Measure every override and aten on the shape grids; write which runs per shape bucket (a policy)");
  command->add_option("--op", request->op, "Only this op: \"_softmax\", \"native_layer_norm\"");
  command->add_option("--dsl", request->dsl,
                      "Only the overrides written in this DSL (the others stay out of the table)");
  command->add_option("--device", request->device, "cpu, cuda, or all (default: all the machine has)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  command->add_option("--dtype", request->dtypes, "Only these dtypes (repeatable): f32, bf16, ...");
  command
      ->add_option("--budget", request->budget,
                   "Measuring time of the whole run in seconds, shared by its cells (default 240; making the "
                   "inputs and warm-up come on top)")
      ->check(CLI::Range(1.0, 86400.0));
  command->add_option("-o,--output", request->output, "Write the policy (version 2, native-ops-policy(5)) to FILE")
      ->required();
  command->add_option("--results", request->results,
                      "Also write every measurement as a bench JSON report (docs/bench-report.schema.json) to FILE");
  command->add_flag("--force", request->force,
                    "Let the files replace files that are not of their kind, and symbolic links");
  command->callback([&options, request] {
    TuneOptions tune_options;
    tune_options.op_symbol = request->op;
    tune_options.dsl = request->dsl;
    tune_options.seconds_budget = request->budget;
    for (const std::string& name : request->dtypes) tune_options.dtypes.push_back(parse_dtype(name));
    if (request->device == "cpu") tune_options.devices = {c10::DeviceType::CPU};
    if (request->device == "cuda") tune_options.devices = {c10::DeviceType::CUDA};
    std::vector<ReportFile> files = {{"--output", request->output, ReportKind::tuned_policy}};
    if (!request->results.empty()) files.push_back({"--results", request->results, ReportKind::bench_json});
    check_report_files(files, request->force);  // before the measurements, which take minutes
    options.start();
    const bool tty = isatty(STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    const TuneResult result = tune(tune_options, [&](size_t done, size_t total, const std::string& what) {
      if (!tty || done == 0) return;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
      std::cerr << "\r[" << done << "/" << total << ", " << static_cast<int>(left) << " s left] " << std::left
                << std::setw(50) << what.substr(0, 50) << std::flush;
    });
    if (tty) std::cerr << "\r" << std::string(90, ' ') << "\r" << std::flush;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string description = "Tuned by native-ops tune";
    if (!request->op.empty()) description += " --op " + request->op;
    if (!request->dsl.empty()) description += " --dsl " + request->dsl;
    description += " --device " + request->device + " --budget " + std::to_string(static_cast<int>(request->budget));
    write_report_file(files[0], selection_policy_json(result.tables, description) + "\n");
    if (files.size() > 1) write_report_file(files[1], bench_json(result.measurements) + "\n");
    if (options.json) {
      std::cout << selection_policy_json(result.tables, description) << "\n";
      return;
    }
    print_tables(result, request->output);
    std::cout << "measured " << result.measurements.rows.size() << " (override, cell) pairs in "
              << static_cast<int>(seconds) << " s\n";
  });
}

}  // namespace native_ops::cli
