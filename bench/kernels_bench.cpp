// Each built-in cpp override against aten, on shapes its cond accepts. Prints the median
// time of both and aten/cpp (> 1: the override is faster) for every shape, so that a cond
// can be narrowed where the override loses.
#include <cstdio>
#include <array>
#include <functional>
#include <set>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "median_reporter.h"
#include "native_ops/native_ops.h"

namespace {

struct Case {
  std::string op_symbol;  // the graph whose cpp node is switched on or off
  std::string node;       // that node
  std::string label;      // op and shape, for the report
  std::function<void(benchmark::State&)> body;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const auto& [b, m, n] : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {8, 16, 16}, {64, 64, 64}, {1024, 64, 64}, {16, 256, 512}, {64, 1024, 1024}}) {
    all.push_back({"bmm", "bmm_cpp_0", "bmm (" + std::to_string(b) + "," + std::to_string(m) + ",1)x(" + std::to_string(b) + ",1," +
                              std::to_string(n) + ")",
                   [b = b, m = m, n = n](benchmark::State& state) {
                     const at::Tensor x = at::randn({b, m, 1});
                     const at::Tensor y = at::randn({b, 1, n});
                     for (auto _ : state) benchmark::DoNotOptimize(at::bmm(x, y));
                   }});
  }
  for (const auto& [rows, width] : std::vector<std::array<int64_t, 2>>{
           {16, 1024}, {64, 1024}, {256, 1024}, {4096, 1024}, {32, 32000}, {1024, 4096}}) {
    all.push_back({"_softmax", "_softmax_cpp_0", "softmax [" + std::to_string(rows) + "," + std::to_string(width) + "]",
                   [rows = rows, width = width](benchmark::State& state) {
                     const at::Tensor x = at::randn({rows, width});
                     for (auto _ : state) benchmark::DoNotOptimize(at::_softmax(x, -1, false));
                   }});
  }
  for (const int64_t n : {4, 64, 1024, 16384, 262144, 4194304}) {
    all.push_back({"add_.Tensor", "add__Tensor_cpp_0", "add_ [" + std::to_string(n) + "]", [n = n](benchmark::State& state) {
                     at::Tensor x = at::randn({n});
                     const at::Tensor y = at::randn({n}) * 1e-6;
                     for (auto _ : state) benchmark::DoNotOptimize(x.add_(y));
                   }});
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  native_ops::init();
  const std::vector<Case> all = cases();
  std::set<std::string> declined;  // cases whose cond sent the "cpp" runs to aten
  for (const Case& c : all) {
    for (const bool routed : {false, true}) {
      benchmark::RegisterBenchmark((c.label + (routed ? " cpp" : " aten")).c_str(),
                                   [c, routed, &declined](benchmark::State& state) {
                                     const native_ops::Filter filter{"cpp", c.op_symbol, std::nullopt};
                                     routed ? native_ops::reenable_overrides(filter)
                                            : native_ops::deregister_overrides(filter);
                                     const uint64_t hits = native_ops::find_node(c.node)->hits;
                                     c.body(state);
                                     if (routed && native_ops::find_node(c.node)->hits == hits) declined.insert(c.label);
                                   })
          ->Unit(benchmark::kMicrosecond);
    }
  }
  native_ops::bench::MedianReporter reporter;
  native_ops::bench::run_benchmarks(argc, argv, reporter, 7);

  std::printf("\n== Built-in cpp overrides against aten, CPU, %d threads (medians, same run)\n", at::get_num_threads());
  std::printf("%-36s %12s %12s %10s\n", "op and shape", "aten us", "cpp us", "aten/cpp");
  for (const Case& c : all) {
    if (!reporter.ran(c.label + " aten") || !reporter.ran(c.label + " cpp")) continue;
    const double aten = reporter.median_ns(c.label + " aten");
    const double cpp = reporter.median_ns(c.label + " cpp");
    if (declined.count(c.label)) {
      std::printf("%-36s %12.2f %12s %10s  (the cond declines: aten runs)\n", c.label.c_str(), aten, "-", "-");
      continue;
    }
    std::printf("%-36s %12.2f %12.2f %10.2f%s\n", c.label.c_str(), aten, cpp, aten / cpp,
                aten / cpp < 0.95 ? "  <- slower than aten" : "");
  }
}
