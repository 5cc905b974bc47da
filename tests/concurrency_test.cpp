// Routed calls on 4 threads while another thread deregisters, re-enables and reorders,
// with the calls' defaults (Apply::nodes_only: node lists are swapped, the dispatcher is
// not touched). Every
// result must be right, and every call must be counted exactly once.
#include <atomic>
#include <thread>

#include <ATen/core/Tensor.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/rand.h>

#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;

TEST(Concurrency, RoutingStaysCorrectWhileGraphsChange) {
  testing::register_test_dsls();
  // Both overrides compute the true product, by different paths; the cond of the first
  // declines odd sizes so that fall-throughs happen too.
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", DispatchKey::CPU, [](const at::Tensor& a, const at::Tensor&) { return a.numel() % 2 == 0; },
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b); });
  register_op_override<at::_ops::mul_Tensor>(
      "beta", DispatchKey::CPU, [](const at::Tensor& a, const at::Tensor&) { return a.numel() < 6; },
      [](const at::Tensor& a, const at::Tensor& b) { return at::mul(b, a); });  // re-enters: original
  init();

  constexpr int kCallers = 4;
  constexpr int kCallsPerCaller = 20000;
  std::atomic<bool> start{false};
  std::atomic<int> wrong{0};
  std::atomic<int> callers_done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kCallers; ++t) {
    threads.emplace_back([&, t] {
      const at::Tensor a = at::rand({4 + t});  // sizes 4..7: each node and the fall-through
      const at::Tensor b = at::rand({4 + t});
      std::vector<float> expected(4 + t);
      for (int i = 0; i < 4 + t; ++i) expected[i] = a[i].item<float>() * b[i].item<float>();
      while (!start.load()) std::this_thread::yield();
      for (int call = 0; call < kCallsPerCaller; ++call) {
        const at::Tensor product = at::mul(a, b);
        const float* values = product.const_data_ptr<float>();
        for (int i = 0; i < 4 + t; ++i) {
          if (values[i] != expected[i]) {
            wrong.fetch_add(1);
            break;
          }
        }
      }
      callers_done.fetch_add(1);
    });
  }
  int changes = 0;
  threads.emplace_back([&] {
    const Filter alpha{"alpha", "mul.Tensor", std::nullopt};
    start.store(true);
    while (callers_done.load() < kCallers) {
      deregister_overrides(alpha);
      reenable_overrides(alpha);
      set_ordering_function(
          [](const std::string&, DispatchKey, const Graph& graph) { return Graph(graph.rbegin(), graph.rend()); });
      reregister_overrides();
      reset_order();
      ++changes;
    }
  });
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(changes, 10) << "the graph barely changed while the callers ran";
  const GraphInfo mul = testing::graph("mul.Tensor");
  uint64_t counted = mul.fallthroughs;
  for (const NodeInfo& node : mul.nodes) counted += node.hits;
  // Each thread's call to at::mul is routed once; re-entrant inner calls are not counted.
  // The reference products above were computed with item() and so never reached mul.
  EXPECT_EQ(counted, uint64_t{kCallers} * kCallsPerCaller);
  EXPECT_GT(testing::hits("mul_Tensor_alpha_0"), 0u);
  EXPECT_GT(testing::hits("mul_Tensor_beta_0"), 0u);
  EXPECT_GT(mul.fallthroughs, 0u);
}

}  // namespace
}  // namespace native_ops
