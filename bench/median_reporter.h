#pragma once
// A console reporter that also keeps the median of every benchmark, so a benchmark
// program can print ratios between benchmarks of the same run.

#include <map>
#include <string>

#include <benchmark/benchmark.h>

namespace native_ops::bench {

class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  /// Median real time in nanoseconds of the benchmark named `name` (its registered
  /// name, arguments included); aborts with a message if it did not run.
  double median_ns(const std::string& name) const;
  /// Whether the benchmark named `name` ran (a --benchmark_filter may leave it out).
  bool ran(const std::string& name) const { return medians_.count(name) != 0; }

 private:
  std::map<std::string, double> medians_;
};

/// Runs every registered benchmark with at least `repetitions` repetitions (unless the
/// command line sets them), interleaved at random so that drift hits all alike.
void run_benchmarks(int argc, char** argv, MedianReporter& reporter, int repetitions);

}  // namespace native_ops::bench
