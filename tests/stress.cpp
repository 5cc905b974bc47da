// native_ops_stress: routed calls on many threads while policies change under them.
//
//   native_ops_stress [--threads 8] [--calls 1000000] [--period-us 1000]
//
// Each thread calls at::bmm on a small outer product (routed to the built-in bmm_cpp_0
// when it is active, to aten when a policy has switched it off) and checks every result
// against the exact product. A policy thread applies a policy that disables bmm_cpp_0
// and removes it again (reset_order) every period, with Apply::nodes_only, the mode that
// is safe while the op runs. At the end: hits + fall-throughs of bmm @ CPU must equal the
// calls made. Exit status 0 when everything held, 1 otherwise; the last line reports the
// numbers (docs/RELIABILITY.md quotes a full-size run). ctest runs a smaller size.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/equal.h>

#include "native_ops/native_ops.h"
#include "native_ops/policy.h"

namespace {

struct Options {
  int threads = 8;
  int64_t calls = 1000000;
  int64_t period_us = 1000;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t value = std::atoll(argv[i + 1]);
    if (value <= 0) {
      std::fprintf(stderr, "native_ops_stress: %s needs a positive number, not '%s'\n", flag.c_str(), argv[i + 1]);
      std::exit(2);
    }
    if (flag == "--threads") {
      options.threads = static_cast<int>(value);
    } else if (flag == "--calls") {
      options.calls = value;
    } else if (flag == "--period-us") {
      options.period_us = value;
    } else {
      std::fprintf(stderr, "native_ops_stress: unknown option %s (--threads, --calls, --period-us)\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

struct Counts {
  uint64_t hits = 0;
  uint64_t fallthroughs = 0;
};

Counts bmm_counts() {
  for (const native_ops::GraphInfo& graph : native_ops::graphs()) {
    if (graph.op_symbol != "bmm" || graph.key != c10::DispatchKey::CPU) continue;
    Counts counts{0, graph.fallthroughs};
    for (const native_ops::NodeInfo& node : graph.nodes) counts.hits += node.hits;
    return counts;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  at::set_num_threads(1);  // the threads here are the concurrency; keep aten's pool out of it
  native_ops::init();
  const native_ops::Policy disable_bmm =
      native_ops::parse_policy(R"({"version": 1, "disable": [{"node": "bmm_cpp_0"}]})", "stress");
  const Counts before = bmm_counts();

  std::atomic<bool> stop{false};
  std::atomic<int64_t> policy_changes{0};
  std::thread policies([&] {
    bool disabled = false;
    while (!stop.load(std::memory_order_relaxed)) {
      if (disabled) {
        native_ops::reset_order(native_ops::Apply::nodes_only);
      } else {
        native_ops::apply_policy(disable_bmm, native_ops::Apply::nodes_only);
      }
      disabled = !disabled;
      policy_changes.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(std::chrono::microseconds(options.period_us));
    }
    native_ops::reset_order(native_ops::Apply::nodes_only);
  });

  std::atomic<int64_t> wrong{0};
  std::atomic<int64_t> errors{0};
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < options.threads; ++w) {
    workers.emplace_back([&, w] {
      // Small integers: every product is exact, so both paths must give the same bits.
      const at::Tensor a = at::arange(1, 5, at::kFloat).add_(w).view({1, 4, 1});
      const at::Tensor b = at::arange(1, 4, at::kFloat).view({1, 1, 3});
      const at::Tensor expected = (a * b).contiguous();
      for (int64_t i = 0; i < options.calls; ++i) {
        try {
          if (!at::equal(at::bmm(a, b), expected)) wrong.fetch_add(1, std::memory_order_relaxed);
        } catch (const std::exception& e) {
          if (errors.fetch_add(1) == 0) std::fprintf(stderr, "native_ops_stress: a call threw: %s\n", e.what());
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  stop = true;
  policies.join();

  const Counts after = bmm_counts();
  const uint64_t calls = static_cast<uint64_t>(options.threads) * static_cast<uint64_t>(options.calls);
  const uint64_t hits = after.hits - before.hits, fallthroughs = after.fallthroughs - before.fallthroughs;
  const bool counted = hits + fallthroughs == calls;
  const bool ok = wrong == 0 && errors == 0 && counted && hits > 0 && fallthroughs > 0;
  std::printf(
      "%s: %d threads x %lld calls = %llu routed calls in %.2f s (%.0f ns per call per thread); %lld policy "
      "changes; %llu hits + %llu fall-throughs = %llu%s; %lld wrong results; %lld errors\n",
      ok ? "PASSED" : "FAILED", options.threads, static_cast<long long>(options.calls),
      static_cast<unsigned long long>(calls), seconds, seconds * 1e9 / static_cast<double>(options.calls),
      static_cast<long long>(policy_changes.load()), static_cast<unsigned long long>(hits),
      static_cast<unsigned long long>(fallthroughs), static_cast<unsigned long long>(hits + fallthroughs),
      counted ? "" : " (NOT the calls made)", static_cast<long long>(wrong.load()),
      static_cast<long long>(errors.load()));
  if (hits == 0 || fallthroughs == 0) {
    std::printf("both paths must run: raise --calls or lower --period-us\n");
  }
  return ok ? 0 : 1;
}
