// native-ops test [--dsl X] [--op Y] [--device cpu|cuda|all] [--dtype D]... [--junit FILE [--force]] [--shard K/N]
#include <unistd.h>
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "commands.h"
#include "native_ops/error.h"
#include "native_ops/names.h"
#include "native_ops/testing/conformance.h"
#include "native_ops/testing/report.h"
#include "native_ops/testing/samples.h"
#include "report_file.h"

namespace native_ops::cli {

namespace {

struct TestRequest {
  std::string dsl;
  std::string op;
  std::string device = "all";
  std::vector<std::string> dtypes;
  std::string junit;
  std::string shard;
  bool force = false;
};

// A shard number: decimal digits only (no sign, no space: stoul would wrap "-1"), at most
// a million.
std::optional<uint32_t> shard_number(const std::string& text) {
  constexpr uint32_t kMaxShards = 1000000;
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const unsigned long value = std::stoul(text);
  if (value > kMaxShards) return std::nullopt;
  return static_cast<uint32_t>(value);
}

// "K/N", 1-based K, into the sweep's 0-based shard.
void parse_shard(const std::string& text, SweepOptions& options) {
  const size_t slash = text.find('/');
  const std::optional<uint32_t> k = slash == std::string::npos ? std::nullopt : shard_number(text.substr(0, slash));
  const std::optional<uint32_t> n = slash == std::string::npos ? std::nullopt : shard_number(text.substr(slash + 1));
  if (!k || !n || *k < 1 || *k > *n) {
    throw Error("--shard " + excerpt(text) + ": expected K/N with 1 <= K <= N <= 1000000, e.g. --shard 2/4");
  }
  options.shard_index = *k - 1;
  options.shard_count = *n;
}

SweepOptions sweep_options(const TestRequest& request) {
  SweepOptions options;
  options.dsl = request.dsl;
  if (const std::optional<std::string> restricted = restrict_to_dsl_from_env()) {
    if (!request.dsl.empty() && request.dsl != *restricted) {
      throw Error("--dsl " + request.dsl + " conflicts with NATIVE_OPS_RESTRICT_TO_DSL=" + *restricted +
                  ": drop one of them");
    }
    options.dsl = *restricted;
  }
  options.op_symbol = request.op;
  if (request.device == "cpu") options.devices = {c10::DeviceType::CPU};
  if (request.device == "cuda") options.devices = {c10::DeviceType::CUDA};
  for (const std::string& name : request.dtypes) options.dtypes.push_back(parse_dtype(name));
  if (!request.shard.empty()) parse_shard(request.shard, options);
  return options;
}

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void update(size_t done, size_t total, const std::string& what) {
    if (!enabled_ || total == 0) return;
    constexpr size_t kWidth = 30;
    const size_t filled = done * kWidth / total;
    std::cerr << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << done << "/" << total
              << " " << std::left << std::setw(48) << what.substr(0, 48) << std::flush;
  }
  void clear() {
    if (enabled_) std::cerr << "\r" << std::string(100, ' ') << "\r" << std::flush;
  }

 private:
  bool enabled_;
};

std::string row_label(const SampleResult& r) {
  if (r.sample_class == "coverage") return "coverage";
  if (r.sample_class == "error") return "errors";
  return r.dtype;
}

void print_summary(const std::vector<SampleResult>& results, bool color) {
  struct Row {
    size_t samples = 0, passed = 0, failed = 0, skipped = 0;
    double seconds = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  size_t failed = 0, skipped = 0;
  for (const SampleResult& r : results) {
    const std::string key = r.node_id + "\t" + r.device + "\t" + row_label(r);
    if (rows.find(key) == rows.end()) order.push_back(key);
    Row& row = rows[key];
    ++row.samples;
    row.seconds += r.seconds;
    if (r.outcome == Outcome::passed) ++row.passed;
    if (r.outcome == Outcome::failed) ++row.failed, ++failed;
    if (r.outcome == Outcome::skipped) ++row.skipped, ++skipped;
  }
  size_t node_width = 22;  // widened to the longest id, so that columns stay aligned
  for (const SampleResult& r : results) node_width = std::max(node_width, r.node_id.size() + 2);
  std::cout << std::left << std::setw(node_width) << "NODE" << std::setw(8) << "DEVICE" << std::setw(10) << "DTYPE"
            << std::right << std::setw(8) << "SAMPLES" << std::setw(8) << "PASSED" << std::setw(8) << "FAILED"
            << std::setw(9) << "SKIPPED" << std::setw(9) << "TIME"
            << "\n";
  for (const std::string& key : order) {
    const Row& row = rows[key];
    const size_t tab1 = key.find('\t');
    const size_t tab2 = key.find('\t', tab1 + 1);
    std::ostringstream time;
    time << std::fixed << std::setprecision(2) << row.seconds << "s";
    std::cout << std::left << std::setw(node_width) << key.substr(0, tab1) << std::setw(8)
              << key.substr(tab1 + 1, tab2 - tab1 - 1) << std::setw(10) << key.substr(tab2 + 1) << std::right
              << std::setw(8) << row.samples << std::setw(8) << row.passed << std::setw(8) << row.failed << std::setw(9)
              << row.skipped << std::setw(9) << time.str() << "\n";
  }
  std::cout << "\n"
            << results.size() << " results: " << results.size() - failed - skipped << " passed, "
            << paint(std::to_string(failed) + " failed", failed ? "unavailable" : "active", color) << ", " << skipped
            << " skipped\n";
}

void print_failures(const std::vector<SampleResult>& results, bool color) {
  for (const SampleResult& r : results) {
    if (r.outcome == Outcome::skipped && r.sample_class == "coverage") {
      std::cout << "\nSKIPPED " << r.node_id << " " << r.device << ": " << r.skip_reason << "\n";
    }
    if (r.outcome != Outcome::failed) continue;
    std::cout << "\n"
              << paint("FAILED", "unavailable", color) << " " << r.node_id << " " << r.device << " "
              << (r.dtype.empty() ? "" : r.dtype + " ") << "[" << r.sample_class << "] " << r.sample
              << (r.meant_for ? " (meant for it)" : "") << "\n";
    for (const Mismatch& m : r.mismatches) {
      std::cout << "  " << m.check << ": " << m.message << "\n";
      if (m.max_abs_error != 0 || m.max_rel_error != 0) {
        std::cout << "    max abs error " << m.max_abs_error << ", max rel error " << m.max_rel_error << "\n";
      }
    }
  }
}

}  // namespace

void add_test_command(CLI::App& app, const GlobalOptions& options) {
  auto request = std::make_shared<TestRequest>();
  CLI::App* command =
      app.add_subcommand("test", "Judge every override against aten on the op database's samples (conformance sweep)");
  command->add_option("--dsl", request->dsl, "Only the overrides written in this DSL (NATIVE_OPS_RESTRICT_TO_DSL too)");
  command->add_option("--op", request->op, "Only the overrides of this op: \"bmm\", \"add_.Tensor\"");
  command->add_option("--device", request->device, "cpu, cuda, or all (default: all the machine has)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  command->add_option("--dtype", request->dtypes, "Only these dtypes (repeatable): f32, bf16, float64, ...");
  command->add_option("--junit", request->junit, "Also write a JUnit XML report to FILE");
  command->add_flag("--force", request->force,
                    "Let the report file replace a file that is not a JUnit report, or a symbolic link");
  command->add_option("--shard", request->shard, "Run shard K of N (1-based), e.g. 2/4: units are split round-robin");
  command->callback([&options, request] {
    const SweepOptions sweep = sweep_options(*request);  // bad arguments fail before anything runs
    const std::vector<ReportFile> files = request->junit.empty()
                                              ? std::vector<ReportFile>{}
                                              : std::vector<ReportFile>{{"--junit", request->junit, ReportKind::junit}};
    check_report_files(files, request->force);
    options.start();
    const std::vector<SweepUnit> units = shard(plan_sweep(sweep), sweep);
    ProgressBar bar(!options.json && isatty(STDERR_FILENO));
    const std::vector<SampleResult> results = run_sweep(
        units, sweep, [&bar](size_t done, size_t total, const std::string& what) { bar.update(done, total, what); });
    bar.clear();
    for (const ReportFile& file : files) write_report_file(file, sweep_junit(results));
    if (options.json) {
      std::cout << sweep_json(results) << "\n";
    } else {
      print_summary(results, options.use_color());
      print_failures(results, options.use_color());
    }
    size_t failed = 0;
    for (const SampleResult& r : results) failed += r.outcome == Outcome::failed;
    if (failed > 0)
      throw CommandFailed(std::to_string(failed) + " of " + std::to_string(results.size()) + " results failed");
    if (units.empty()) std::cerr << "native-ops: no override matches: nothing was tested\n";
  });
}

}  // namespace native_ops::cli
