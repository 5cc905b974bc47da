// Ordering functions: applied at init or later, validated, reversible.
#include <ATen/core/Tensor.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/rand.h>

#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;
using testing::hits;
using testing::identical;

class Ordering : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::register_test_dsls();
    for (const char* dsl : {"alpha", "beta"}) {
      const double marker = std::string(dsl) == "alpha" ? 1 : 2;
      register_op_override<at::_ops::mul_Tensor>(
          dsl, DispatchKey::CPU, [](const at::Tensor&, const at::Tensor&) { return true; },
          [marker](const at::Tensor& a, const at::Tensor&) { return at::full_like(a, marker); });
    }
  }
  double routed_marker() { return at::mul(x, x)[0].item<double>(); }
  std::vector<std::string> order() {
    std::vector<std::string> ids;
    for (const NodeInfo& node : testing::graph("mul.Tensor").nodes) ids.push_back(node.id);
    return ids;
  }
  at::Tensor x = at::rand({4});
};

Graph reversed(const std::string&, DispatchKey, const Graph& graph) { return Graph(graph.rbegin(), graph.rend()); }

TEST_F(Ordering, AFunctionThatThrowsSomethingElseThanAnExceptionIsReported) {
  init();
  set_ordering_function([](const std::string&, DispatchKey, const Graph&) -> Graph { throw 42; });
  const OrderingReport report = reregister_overrides();
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.errors[0].find("threw something that is not a std::exception"), std::string::npos)
      << report.errors[0];
  EXPECT_EQ(order(), (std::vector<std::string>{"mul_Tensor_alpha_0", "mul_Tensor_beta_0"})) << "kept its order";
}

TEST_F(Ordering, AppliedAtInitToRegistrationOrder) {
  std::vector<std::string> seen;
  set_ordering_function([&](const std::string& op, DispatchKey key, const Graph& graph) {
    if (op == "mul.Tensor" && key == DispatchKey::CPU) {
      for (const NodeInfo& node : graph) seen.push_back(node.id);
    }
    return reversed(op, key, graph);
  });
  init();
  EXPECT_EQ(seen, (std::vector<std::string>{"mul_Tensor_alpha_0", "mul_Tensor_beta_0"}));
  EXPECT_EQ(order(), (std::vector<std::string>{"mul_Tensor_beta_0", "mul_Tensor_alpha_0"}));
  EXPECT_EQ(routed_marker(), 2);
}

TEST_F(Ordering, ReappliedLaterAndResetToRegistrationOrder) {
  init();
  EXPECT_EQ(routed_marker(), 1);
  set_ordering_function(reversed);
  const OrderingReport report = reregister_overrides();
  EXPECT_TRUE(report.ok());
  EXPECT_GE(report.graphs_changed, 1u);
  EXPECT_EQ(routed_marker(), 2);
  // Each application starts from registration order, so applying twice is not a no-op flip.
  EXPECT_EQ(reregister_overrides().graphs_changed, 0u);
  EXPECT_EQ(routed_marker(), 2);
  EXPECT_TRUE(reset_order().ok());
  EXPECT_EQ(routed_marker(), 1);
  EXPECT_EQ(order(), (std::vector<std::string>{"mul_Tensor_alpha_0", "mul_Tensor_beta_0"}));
}

TEST_F(Ordering, LeftOutNodesAreDroppedNotLost) {
  init();
  set_ordering_function([](const std::string& op, DispatchKey, const Graph& graph) {
    Graph kept;
    for (const NodeInfo& node : graph) {
      if (op != "mul.Tensor" || node.dsl == "beta") kept.push_back(node);
    }
    return kept;
  });
  ASSERT_TRUE(reregister_overrides().ok());
  EXPECT_EQ(routed_marker(), 2);
  const auto dropped = find_node("mul_Tensor_alpha_0");
  EXPECT_EQ(dropped->state, NodeState::dropped);
  EXPECT_EQ(dropped->reason, "left out by the ordering function");
  reset_order();
  EXPECT_EQ(find_node("mul_Tensor_alpha_0")->state, NodeState::active);
  EXPECT_EQ(routed_marker(), 1);
}

TEST_F(Ordering, AnEmptyOrderSwitchesTheOpOff) {
  const std::string original = testing::computed_table("mul.Tensor");
  init();
  set_ordering_function(
      [](const std::string& op, DispatchKey, const Graph& graph) { return op == "mul.Tensor" ? Graph{} : graph; });
  ASSERT_TRUE(reregister_overrides(Apply::now).ok());
  EXPECT_FALSE(testing::graph("mul.Tensor").router_installed);
  EXPECT_EQ(testing::computed_table("mul.Tensor"), original);
  EXPECT_FLOAT_EQ(at::mul(x, x)[0].item<float>(), x[0].item<float>() * x[0].item<float>());
}

TEST_F(Ordering, InvalidOrdersAreReportedAndTheGraphKept) {
  init();
  const auto expect_refused = [&](OrderingFn fn, const std::string& fragment) {
    set_ordering_function(std::move(fn));
    const OrderingReport report = reregister_overrides();
    ASSERT_FALSE(report.ok()) << fragment;
    EXPECT_NE(report.errors[0].find(fragment), std::string::npos) << report.errors[0];
    EXPECT_NE(report.errors[0].find("aten::mul.Tensor @ CPU"), std::string::npos) << report.errors[0];
    EXPECT_EQ(order(), (std::vector<std::string>{"mul_Tensor_alpha_0", "mul_Tensor_beta_0"}));
    EXPECT_EQ(routed_marker(), 1);
  };
  expect_refused(
      [](const std::string& op, DispatchKey, const Graph& graph) {
        Graph out = graph;
        if (op == "mul.Tensor") out.push_back(out[0]);
        return out;
      },
      "returned node 'mul_Tensor_alpha_0' twice");
  expect_refused(
      [](const std::string& op, DispatchKey, const Graph& graph) {
        Graph out = graph;
        if (op == "mul.Tensor") out[1].id = "bmm_cpp_0";
        return out;
      },
      "returned node 'bmm_cpp_0', which is not in this graph");
  expect_refused(
      [](const std::string& op, DispatchKey, const Graph& graph) -> Graph {
        if (op == "mul.Tensor") throw std::runtime_error("policy bug");
        return graph;
      },
      "the ordering function threw: policy bug");
}

TEST_F(Ordering, AnOrderingFunctionMayReadTheRegistry) {
  init();
  set_ordering_function([](const std::string& op, DispatchKey key, const Graph& graph) {
    EXPECT_FALSE(graphs().empty());  // no deadlock: it runs outside the registry lock
    return reversed(op, key, graph);
  });
  EXPECT_TRUE(reregister_overrides().ok());
  EXPECT_EQ(routed_marker(), 2);
  EXPECT_EQ(hits("mul_Tensor_beta_0"), 1u);
}

}  // namespace
}  // namespace native_ops
