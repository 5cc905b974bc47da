// Routing: hits, misses and fall-throughs on the typed and the boxed router; first
// registered wins; unconditional nodes; filters; the re-entrancy guard; throwing conds
// and impls. Impls here return marker values so that the test sees which path ran.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/full.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/sub.h>

#include "support.h"

namespace native_ops {
namespace {

using c10::DispatchKey;
using testing::close;
using testing::fallthroughs;
using testing::hits;
using testing::identical;

using MulCond = TypedCond<at::_ops::mul_Tensor>;
using MulImpl = TypedImpl<at::_ops::mul_Tensor>;

MulImpl returns(double value) {
  return [value](const at::Tensor& a, const at::Tensor&) { return at::full_like(a, value); };
}
MulCond numel_is(int64_t n) {
  return [n](const at::Tensor& a, const at::Tensor&) { return a.numel() == n; };
}
MulCond accepts_all() {
  return [](const at::Tensor&, const at::Tensor&) { return true; };
}

class Routing : public ::testing::Test {
 protected:
  void SetUp() override { testing::register_test_dsls(); }
  at::Tensor a4 = at::rand({4});
  at::Tensor b4 = at::rand({4});
};

TEST_F(Routing, TypedHitMissAndFallthrough) {
  const std::string id =
      register_op_override<at::_ops::mul_Tensor>("alpha", DispatchKey::CPU, numel_is(4), returns(42));
  EXPECT_TRUE(identical(at::mul(a4, b4), a4 * b4.clone())) << "routed before init()";
  EXPECT_EQ(hits(id), 0u);

  init();
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 42)));  // hit
  EXPECT_EQ(hits(id), 1u);
  const at::Tensor a5 = at::rand({5});
  const at::Tensor b5 = at::rand({5});
  const at::Tensor product = at::mul(a5, b5);  // miss: falls through to aten
  EXPECT_EQ(hits(id), 1u);
  EXPECT_EQ(fallthroughs("mul.Tensor"), 1u);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_FLOAT_EQ(product[i].item<float>(), a5[i].item<float>() * b5[i].item<float>());
  }
}

TEST_F(Routing, BoxedHitMissAndFallthrough) {
  const std::string id = register_op_override(
      "alpha", "aten", "sub.Tensor", DispatchKey::CPU,
      [](const BoxedArgs& args) {
        return args[0].toTensor().numel() == 4 && args.get("alpha").toScalar().toDouble() == 1.0;
      },
      [](const c10::OperatorHandle&, torch::jit::Stack& stack) {
        const at::Tensor self = stack[stack.size() - 3].toTensor();
        torch::jit::drop(stack, 3);
        torch::jit::push(stack, at::full_like(self, 7));
      });
  init();
  EXPECT_FALSE(testing::graph("sub.Tensor").typed);
  EXPECT_TRUE(identical(at::sub(a4, b4), at::full_like(a4, 7)));
  EXPECT_EQ(hits(id), 1u);
  const at::Tensor difference = at::sub(a4, b4, 2.0);  // alpha 2: the cond declines
  EXPECT_EQ(hits(id), 1u);
  EXPECT_EQ(fallthroughs("sub.Tensor"), 1u);
  EXPECT_FLOAT_EQ(difference[0].item<float>(), a4[0].item<float>() - 2 * b4[0].item<float>());
}

TEST_F(Routing, FirstRegisteredWins) {
  const std::string first =
      register_op_override<at::_ops::mul_Tensor>("alpha", DispatchKey::CPU, accepts_all(), returns(1));
  const std::string second =
      register_op_override<at::_ops::mul_Tensor>("beta", DispatchKey::CPU, accepts_all(), returns(2));
  init();
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 1)));
  EXPECT_EQ(hits(first), 1u);
  EXPECT_EQ(hits(second), 0u);

  EXPECT_EQ(deregister_overrides({"alpha", "mul.Tensor", std::nullopt}), 1u);
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 2)));
  EXPECT_EQ(reenable_overrides({"alpha", "mul.Tensor", std::nullopt}), 1u);
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 1)));
  EXPECT_EQ(hits(first), 2u);
  EXPECT_EQ(hits(second), 1u);
}

TEST_F(Routing, UnconditionalNodesHideLaterNodesAndObeyFilters) {
  Options unconditional;
  unconditional.unconditional_override = true;
  const std::string always =
      register_op_override<at::_ops::mul_Tensor>("alpha", DispatchKey::CPU, {}, returns(3), unconditional);
  const std::string later =
      register_op_override<at::_ops::mul_Tensor>("beta", DispatchKey::CPU, accepts_all(), returns(4));
  init();
  EXPECT_TRUE(identical(at::mul(at::rand({9}), at::rand({9})), at::full({9}, 3.0f)));
  EXPECT_EQ(hits(later), 0u);
  EXPECT_EQ(disable_dsl("alpha"), 1u) << "filters must reach unconditional nodes";
  EXPECT_EQ(find_node(always)->state, NodeState::disabled);
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 4)));
  EXPECT_EQ(hits(later), 1u);
}

TEST_F(Routing, DeregisterAndReenableRoundTripRestoresTheOriginalKernel) {
  const std::string before = testing::computed_table("mul.Tensor");
  const std::string id = register_op_override<at::_ops::mul_Tensor>("alpha", DispatchKey::CPU, numel_is(4), returns(5));
  init();
  EXPECT_NE(testing::computed_table("mul.Tensor"), before) << "init() installed no router";
  EXPECT_TRUE(testing::graph("mul.Tensor").router_installed);

  EXPECT_EQ(deregister_overrides({"alpha", "", std::nullopt}, Apply::now), 1u);
  EXPECT_EQ(find_node(id)->state, NodeState::disabled);
  EXPECT_NE(find_node(id)->reason.find("dsl=alpha"), std::string::npos) << find_node(id)->reason;
  EXPECT_FALSE(testing::graph("mul.Tensor").router_installed) << "an empty graph keeps its router";
  EXPECT_EQ(testing::computed_table("mul.Tensor"), before) << "the original kernel is not back exactly";
  EXPECT_TRUE(close(at::mul(a4, b4), a4 * b4.clone()));
  EXPECT_EQ(hits(id), 0u);

  EXPECT_EQ(reenable_overrides({"alpha", "", std::nullopt}, Apply::now), 1u);
  EXPECT_TRUE(testing::graph("mul.Tensor").router_installed);
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 5)));
  EXPECT_EQ(hits(id), 1u);
}

TEST_F(Routing, NodesOnlyChangesKeepTheRouterUntilSync) {
  const std::string before = testing::computed_table("mul.Tensor");
  register_op_override<at::_ops::mul_Tensor>("alpha", DispatchKey::CPU, numel_is(4), returns(6));
  init();
  deregister_overrides({"alpha", "", std::nullopt});  // the default: Apply::nodes_only
  EXPECT_TRUE(testing::graph("mul.Tensor").router_installed);
  const uint64_t before_calls = fallthroughs("mul.Tensor");
  const at::Tensor product = at::mul(a4, b4);
  EXPECT_FLOAT_EQ(product[3].item<float>(), a4[3].item<float>() * b4[3].item<float>());
  EXPECT_EQ(fallthroughs("mul.Tensor"), before_calls + 1) << "the kept router must fall through";
  sync_routers();
  EXPECT_FALSE(testing::graph("mul.Tensor").router_installed);
  EXPECT_EQ(testing::computed_table("mul.Tensor"), before);
}

TEST_F(Routing, FiltersSelectByDslOpAndKeyAndRefuseUnknownNames) {
  register_op_override<at::_ops::mul_Tensor>("alpha", DispatchKey::CPU, accepts_all(), returns(1));
  register_op_override<at::_ops::neg>(
      "alpha", DispatchKey::CPU, [](const at::Tensor&) { return true; },
      [](const at::Tensor& x) { return at::full_like(x, 1); });
  init();
  EXPECT_EQ(deregister_overrides({"", "neg", std::nullopt}), 1u);
  EXPECT_EQ(find_node("mul_Tensor_alpha_0")->state, NodeState::active);
  EXPECT_EQ(deregister_overrides({"alpha", "", DispatchKey::CUDA}), 0u);
  EXPECT_EQ(deregister_overrides({"alpha", "", DispatchKey::CPU}), 1u);
  EXPECT_EQ(deregister_overrides({"alpha", "", std::nullopt}), 0u) << "already off";
  EXPECT_THROW(deregister_overrides({"alpah", "", std::nullopt}), Error);
  try {
    deregister_overrides({"", "mull.Tensor", std::nullopt});
    ADD_FAILURE() << "an unknown op was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mul.Tensor"), std::string::npos) << e.what();
  }
}

TEST_F(Routing, AnImplThatCallsItsOwnOpReachesTheOriginal) {
  const std::string id = register_op_override<at::_ops::neg>(
      "alpha", DispatchKey::CPU, [](const at::Tensor&) { return true; },
      [](const at::Tensor& x) { return at::neg(x) * 1.0; });  // re-enters aten::neg
  init();
  const at::Tensor x = at::rand({8});
  EXPECT_TRUE(identical(at::neg(x), x * -1.0));
  EXPECT_EQ(hits(id), 1u) << "the inner call must not be routed again";
  EXPECT_EQ(fallthroughs("neg"), 0u) << "a re-entrant call is not a fall-through";
}

TEST_F(Routing, CallOriginalRunsTheReplacedKernelAndOnlyInsideAnImpl) {
  const std::string id = register_op_override<at::_ops::mul_Tensor>(
      "alpha", DispatchKey::CPU, accepts_all(),
      [](const at::Tensor& a, const at::Tensor& b) { return call_original<at::_ops::mul_Tensor>(a, b) + 1; });
  const at::Tensor expected = a4 * b4 + 1;  // aten: no router before init()
  init();
  EXPECT_TRUE(close(at::mul(a4, b4), expected));
  EXPECT_EQ(hits(id), 1u);
  EXPECT_THROW(call_original<at::_ops::mul_Tensor>(a4, b4), Error);
  torch::jit::Stack stack;
  EXPECT_THROW(call_original_boxed(c10::Dispatcher::singleton().findSchemaOrThrow("aten::mul", "Tensor"), stack),
               Error);
}

TEST_F(Routing, ACondThatThrowsCountsAsNoMatch) {
  const std::string failing = register_op_override<at::_ops::mul_Tensor>(
      "alpha", DispatchKey::CPU,
      [](const at::Tensor&, const at::Tensor&) -> bool { throw std::runtime_error("cond broke"); }, returns(1));
  const std::string next =
      register_op_override<at::_ops::mul_Tensor>("beta", DispatchKey::CPU, accepts_all(), returns(2));
  init();
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 2)));
  EXPECT_TRUE(identical(at::mul(a4, b4), at::full_like(a4, 2)));
  EXPECT_EQ(testing::cond_errors(failing), 2u);
  EXPECT_EQ(hits(failing), 0u);
  EXPECT_EQ(hits(next), 2u);
}

TEST_F(Routing, AnImplErrorNamesTheNodeAndDsl) {
  register_op_override<at::_ops::neg>(
      "alpha", DispatchKey::CPU, [](const at::Tensor& x) { return x.numel() == 1; },
      [](const at::Tensor&) -> at::Tensor { throw std::runtime_error("kernel launch failed"); });
  register_op_override<at::_ops::mul_Tensor>(
      "alpha", DispatchKey::CPU, accepts_all(),
      [](const at::Tensor&, const at::Tensor&) -> at::Tensor { TORCH_CHECK(false, "shape not supported"); });
  init();
  try {
    at::neg(at::rand({1}));
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel launch failed"), std::string::npos) << what;
    EXPECT_NE(what.find("neg_alpha_0 (dsl alpha)"), std::string::npos) << what;
  }
  try {
    at::mul(a4, b4);
    ADD_FAILURE() << "no error";
  } catch (const c10::Error& e) {  // a c10::Error keeps its type, with context added
    const std::string what = e.what();
    EXPECT_NE(what.find("shape not supported"), std::string::npos) << what;
    EXPECT_NE(what.find("mul_Tensor_alpha_0 (dsl alpha)"), std::string::npos) << what;
  }
}

TEST_F(Routing, BoxedArgsNameTheSchemasArguments) {
  const auto& op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::sub", "Tensor");
  torch::jit::Stack stack{c10::IValue(a4), c10::IValue(b4), c10::IValue(at::Scalar(3))};
  const BoxedArgs args(op.schema(), stack);
  EXPECT_EQ(args.size(), 3u);
  EXPECT_EQ(args.get("alpha").toInt(), 3);
  EXPECT_TRUE(args.get("other").toTensor().is_same(b4));
  try {
    args.get("beta");
    ADD_FAILURE() << "unknown argument accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("it has: self, other, alpha"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace native_ops
