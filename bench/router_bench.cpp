// Per-call cost of routing on a tiny CPU tensor (float32[4]): a plain aten call against
// a routed call that falls through and a routed call whose impl calls the original, for
// the typed router (aten::add.Tensor) and the boxed router (aten::sub.Tensor); and the
// typed hit through a selection table (the features computed, the cell looked up). Prints
// Google Benchmark's medians per mode, then the added time over the plain call measured
// in paired rounds (see paired_rounds), against the targets.
// Also times init() for the built-ins.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <tuple>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/sub.h>

#include "median_reporter.h"
#include "native_ops/native_ops.h"

namespace {

using native_ops::Filter;

std::atomic<bool> accept_calls{false};

// plain: no router (its graph's nodes are off, so the router is removed);
// fallthrough: router installed, its only cond declines; hit: the cond accepts and the
// impl calls the original kernel; table_hit: the same, picked by a selection table
// (typed only: add.Tensor declares a feature below).
enum class Mode { plain, fallthrough, hit, table_hit };

// A table whose middle bucket (4 elements among them) picks the bench node.
const char* const kTablePolicy = R"({"version": 2, "select": {"add.Tensor@CPU": {"features": ["numel"],
    "tables": {"f32": {"edges": {"numel": [2, 1024]}, "cells": ["aten", "add_Tensor_bench_0", "aten"]}}}}})";

void set_mode(const std::string& op_symbol, Mode mode) {
  const Filter filter{"bench", op_symbol, std::nullopt};
  if (mode == Mode::plain) {
    native_ops::deregister_overrides(filter, native_ops::Apply::now);
  } else {
    native_ops::reenable_overrides(filter, native_ops::Apply::now);
  }
  if (mode == Mode::table_hit) {
    native_ops::apply_policy(native_ops::parse_policy(kTablePolicy, "router_bench"), native_ops::Apply::now);
  } else {
    native_ops::reset_order(native_ops::Apply::now);
  }
  accept_calls.store(mode == Mode::hit || mode == Mode::table_hit, std::memory_order_relaxed);
}

void register_overrides() {
  native_ops::register_dsl(native_ops::make_compiled_in_dsl("bench", "1"));
  native_ops::register_op_override<at::_ops::add_Tensor>(
      "bench", c10::DispatchKey::CPU,
      [](const at::Tensor&, const at::Tensor&, const at::Scalar&) {
        return accept_calls.load(std::memory_order_relaxed);
      },
      [](const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha) {
        return native_ops::call_original<at::_ops::add_Tensor>(a, b, alpha);
      });
  native_ops::register_shape_features<at::_ops::add_Tensor>(
      {"numel"}, [](const at::Tensor& a, const at::Tensor&, const at::Scalar&) {
        native_ops::ShapeFeatures features;
        features.dtype = a.scalar_type();
        features.count = 1;
        features.values[0] = a.numel();
        return features;
      });
  native_ops::register_op_override(
      "bench", "aten", "sub.Tensor", c10::DispatchKey::CPU,
      [](const native_ops::BoxedArgs&) { return accept_calls.load(std::memory_order_relaxed); },
      [](const c10::OperatorHandle& op, torch::jit::Stack& stack) { native_ops::call_original_boxed(op, stack); });
}

using BinaryOp = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
at::Tensor add(const at::Tensor& x, const at::Tensor& y) { return at::add(x, y); }
at::Tensor sub(const at::Tensor& x, const at::Tensor& y) { return at::sub(x, y); }

void register_benchmarks() {
  const std::pair<const char*, Mode> modes[] = {
      {"plain", Mode::plain}, {"fallthrough", Mode::fallthrough}, {"hit", Mode::hit}, {"table_hit", Mode::table_hit}};
  const std::tuple<const char*, const char*, BinaryOp> routes[] = {{"typed/add/", "add.Tensor", &add},
                                                                   {"boxed/sub/", "sub.Tensor", &sub}};
  for (const auto& [mode_name, mode] : modes) {
    for (const auto& [prefix, op_symbol, call] : routes) {
      if (mode == Mode::table_hit && std::string(prefix) != "typed/add/") continue;
      benchmark::RegisterBenchmark((prefix + std::string(mode_name)).c_str(), [mode = mode, op_symbol = op_symbol,
                                                                               call = call](benchmark::State& state) {
        set_mode(op_symbol, mode);
        const at::Tensor x = at::rand({4});
        const at::Tensor y = at::rand({4});
        for (auto _ : state) benchmark::DoNotOptimize(call(x, y));
      })->Unit(benchmark::kNanosecond);
    }
  }
}

// Drift on a shared machine moves whole runs by more than the few nanoseconds measured
// here, so the added cost is taken per round: each round times every mode back to back,
// in rotating order, and the median over rounds of (mode - plain) is reported.
struct Paired {
  double plain_ns;
  double fallthrough_added_ns;
  double hit_added_ns;
  double table_hit_added_ns;  // with_table only
  double lookup_added_ns;     // table_hit - hit, paired
};

template <class Call>
Paired paired_rounds(const std::string& op_symbol, Call call, bool with_table) {
  constexpr int kRounds = 151;
  constexpr int kCalls = 5000;
  const at::Tensor x = at::rand({4});
  const at::Tensor y = at::rand({4});
  std::vector<double> plain, fallthrough, hit, table_hit, lookup;
  const Mode modes[] = {Mode::plain, Mode::fallthrough, Mode::hit, Mode::table_hit};
  const int count = with_table ? 4 : 3;
  for (int round = 0; round < kRounds; ++round) {
    double ns[4] = {};
    for (int k = 0; k < count; ++k) {
      const int m = (round + k) % count;
      set_mode(op_symbol, modes[m]);
      for (int i = 0; i < 1000; ++i) benchmark::DoNotOptimize(call(x, y));  // warm-up
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kCalls; ++i) benchmark::DoNotOptimize(call(x, y));
      ns[m] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / kCalls;
    }
    plain.push_back(ns[0]);
    fallthrough.push_back(ns[1] - ns[0]);
    hit.push_back(ns[2] - ns[0]);
    table_hit.push_back(ns[3] - ns[0]);
    lookup.push_back(ns[3] - ns[2]);
  }
  const auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  return {median(plain), median(fallthrough), median(hit), median(table_hit), median(lookup)};
}

void print_summary(double init_ms) {
  const Paired typed = paired_rounds("add.Tensor", &add, /*with_table=*/true);
  const Paired boxed = paired_rounds("sub.Tensor", &sub, /*with_table=*/false);
  std::printf(
      "\n== Routing cost per call, float32[4] on CPU: median over 151 rounds of (mode - plain),\n"
      "   each round timing 5000 calls per mode back to back, pinned to one CPU\n");
  std::printf("%-30s %10s %10s %8s\n", "path", "plain ns", "added ns", "target");
  const auto row = [](const char* label, double plain, double added, double target) {
    std::printf("%-30s %10.1f %+10.1f %8.0f  %s\n", label, plain, added, target, added <= target ? "met" : "MISSED");
  };
  row("typed fall-through (add)", typed.plain_ns, typed.fallthrough_added_ns, 10);
  row("typed hit, impl->original", typed.plain_ns, typed.hit_added_ns, 20);
  row("typed hit via selection table", typed.plain_ns, typed.table_hit_added_ns, 30);
  std::printf("%-30s %10s %+10.1f   (table hit - hit, paired)\n", "  of which the table lookup", "",
              typed.lookup_added_ns);
  row("boxed fall-through (sub)", boxed.plain_ns, boxed.fallthrough_added_ns, 80);
  row("boxed hit, impl->original", boxed.plain_ns, boxed.hit_added_ns, 80);
  std::printf("\ninit() with the built-ins: %.3f ms (target < 2 ms)\n", init_ms);
}

}  // namespace

int main(int argc, char** argv) {
  // One thread on one CPU: no migrations inside a round.
  at::set_num_threads(1);
  cpu_set_t cpu;
  CPU_ZERO(&cpu);
  CPU_SET(sched_getcpu(), &cpu);
  sched_setaffinity(0, sizeof cpu, &cpu);
  const auto start = std::chrono::steady_clock::now();
  native_ops::init();
  const double init_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  register_overrides();
  register_benchmarks();
  native_ops::bench::MedianReporter reporter;
  native_ops::bench::run_benchmarks(argc, argv, reporter, 15);
  print_summary(init_ms);
}
