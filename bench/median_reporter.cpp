#include "median_reporter.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace native_ops::bench {

void MedianReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    if (run.aggregate_name == "median") {
      medians_[run.run_name.str()] = run.GetAdjustedRealTime();
    }
  }
  ConsoleReporter::ReportRuns(runs);
}

double MedianReporter::median_ns(const std::string& name) const {
  const auto found = medians_.find(name);
  if (found == medians_.end()) {
    std::fprintf(stderr, "benchmark %s did not run (filtered out?)\n", name.c_str());
    std::exit(1);
  }
  return found->second;
}

void run_benchmarks(int argc, char** argv, MedianReporter& reporter, int repetitions) {
  std::vector<std::string> storage(argv, argv + argc);
  storage.push_back("--benchmark_repetitions=" + std::to_string(repetitions));
  storage.push_back("--benchmark_enable_random_interleaving=true");
  storage.push_back("--benchmark_report_aggregates_only=true");
  // Flags given on the command line come later and win.
  std::vector<char*> args;
  args.push_back(storage[0].data());
  for (size_t i = static_cast<size_t>(argc); i < storage.size(); ++i) args.push_back(storage[i].data());
  for (int i = 1; i < argc; ++i) args.push_back(storage[static_cast<size_t>(i)].data());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) std::exit(2);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}

}  // namespace native_ops::bench
